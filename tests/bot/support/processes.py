"""Run ``python -m bot ...`` as a real process, with a clean Slack/Redis environment."""

import os
import subprocess
import sys
from pathlib import Path

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


def run_bot(args: list[str], **values: str) -> subprocess.CompletedProcess[str]:
    """``python -m bot <args>`` to completion (60 s at most), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=bot_environment(**values),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
