"""``python -m bot`` (the README's run command) works on the embedded Redis."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_bot_walks_through_an_approval_and_a_denial() -> None:
    environment = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    completed = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert "waiting for approval" in completed.stdout
    assert "checkout: 3 replicas restarted" in completed.stdout
    assert "denied by U_DEMO: release freeze until 18:00" in completed.stdout
