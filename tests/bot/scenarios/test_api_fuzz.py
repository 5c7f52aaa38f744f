"""Schemathesis against the live HTTP API, every phase (examples, coverage, fuzzing, stateful through the document's
links) and every check, bounded in examples and time: what the document calls valid is accepted, what it calls
invalid is refused, and every answer is one the document lists, in its shape, with its headers."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bot.support.harness import Bot
from tests.bot.support.processes import ROOT, bot_environment

pytestmark = pytest.mark.single_redis

EXAMPLES = 40
"""Cases per operation and phase: enough to reach every branch of the document in about a minute here."""
QUESTION_READS_EXAMPLES = 10
QUESTION_READS = f"""
[[operations]]
include-operation-id = ["getQuestion", "cancelQuestion"]
generation.max-examples = {QUESTION_READS_EXAMPLES}
"""
"""Reading and withdrawing a question run the approval routes' code but for the kind they find (a question's id under
the other path is 404, tested in ``test_api_questions``): fewer cases for them keep the run near a minute and a half."""
SEED = 20261202
"""Fixed, so a failure here reproduces (``st replay`` and the same seed); the CLI prints it either way."""


def test_schemathesis_finds_nothing_wrong(bot: Bot, tmp_path: Path) -> None:
    issued = bot.services.stores.api_keys.create("schemathesis")
    assert issued is not None
    config = tmp_path / "schemathesis.toml"
    config.write_text("[warnings]\nfail-on = true\n" + QUESTION_READS)  # a warning (say, every call refused 401) fails
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "--no-color",
            "--config-file",
            str(config),
            "run",
            f"{bot.url}v1/openapi.json",
            "--header",
            f"Authorization: Bearer {issued.key}",
            "--checks",
            "all",
            "--max-examples",
            str(EXAMPLES),
            "--seed",
            str(SEED),
            "--workers",
            "1",
            "--max-failures",
            "20",
            "--request-timeout",
            "70",
        ],
        cwd=tmp_path,
        env=bot_environment(PYTHONPATH=str(ROOT), SCHEMATHESIS_HOOKS="tests.bot.support.fuzz_hooks"),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert ran.returncode == 0, ran.stdout[-20_000:] + ran.stderr[-5_000:]
