"""Run ``python -m bot ...`` (or any Python) as a real process from the repository root, in a clean environment."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SLACK_VARIABLES = (
    "SLACK_BOT_TOKEN",
    "SLACK_SIGNING_SECRET",
    "SLACK_APP_TOKEN",
    "SLACK_API_URL",
    "REDIS_URL",
    "APPROVAL_POLICY",
)


def bot_environment(**values: str) -> dict[str, str]:
    """This process's environment without the bot's settings, plus ``values``."""
    base = {key: value for key, value in os.environ.items() if key not in SLACK_VARIABLES}
    return {**base, "LOG_LEVEL": "WARNING", **values}


def run_python(args: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """``python <args>`` from the repository root to completion (60 s at most), its output captured as text."""
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False, **options
    )


def run_bot(args: list[str], **values: str) -> subprocess.CompletedProcess[str]:
    """``python -m bot <args>`` to completion (60 s at most), its output captured."""
    return run_python(["-m", "bot", *args], env=bot_environment(**values))


def start_bot(args: list[str], environment: dict[str, str], **pipes: Any) -> subprocess.Popen[str]:
    """Start ``python -m bot <args>`` from the repository root in ``environment``, its pipes (``pipes``) as text."""
    return subprocess.Popen([sys.executable, "-m", "bot", *args], cwd=ROOT, env=environment, text=True, **pipes)
