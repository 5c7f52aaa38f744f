"""`strands` stays optional: only `agent/strands_bridge` imports it; the bot loads it only for a Strands agent."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_IMPORTS_STRANDS = re.compile(r"^\s*(?:from|import)\s+strands\b", re.MULTILINE)


def test_only_the_bridge_imports_strands() -> None:
    bridge = ROOT / "agent" / "strands_bridge"
    offenders = [
        str(path.relative_to(ROOT))
        for package in ("state", "agent", "bot", "loopback_slack")
        for path in (ROOT / package).rglob("*.py")
        if bridge not in path.parents and _IMPORTS_STRANDS.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_bot_does_not_load_strands_for_our_own_agent() -> None:
    probe = (
        "import sys, bot.flow.agent_adapters, bot.flow.runner, agent.demo\n"
        "bot.flow.agent_adapters.as_runnable(agent.demo.build_operations_agent())\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'strands'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
