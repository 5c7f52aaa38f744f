"""Policy files for tests: written to a temporary folder, or the ready ones in ``POLICIES``; their load errors."""

import textwrap
from pathlib import Path

import pytest

from bot.domain.policy_file import PolicyError, load_policy

POLICIES = Path(__file__).resolve().parent / "policies"


def write(tmp_path: Path, text: str, name: str = "policy.yml") -> Path:
    """Write ``text`` (dedented) as the policy file ``name`` in ``tmp_path``; return its path."""
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(path: Path) -> PolicyError:
    """The error loading the policy file at ``path`` raises (the test fails if it loads)."""
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    return caught.value
