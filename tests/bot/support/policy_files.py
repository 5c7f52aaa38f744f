"""Policy files for tests: written to a temporary folder, or the ready ones in ``POLICIES``; their load errors, and
the cases of problems in ``POLICIES/problems``."""

import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from bot.domain.policy.policy_file import PolicyError, load_policy

POLICIES = Path(__file__).resolve().parent / "policies"

# Conditions on a call's arguments and risk tiers: scaling past 10 replicas is refused, up to 3 runs unasked.
TIERED = """
rules:
  - name: big-scale
    match: {tools: [scale_service], when: 'args.replicas > 10'}
    tier: deny
    message: Past 10 replicas needs a capacity review.
  - name: small-scale
    match: {tools: [scale_service], when: 'args.replicas <= 3 && tool == "scale_service"'}
    tier: allow
  - name: scaling
    match: {tools: [scale_service, restart_service]}
"""


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


def problem_cases(name: str) -> list[Any]:
    """``pytest.param(policy text, expected error, id=case)`` for each case in ``POLICIES/problems/<name>.yml``."""
    cases = yaml.safe_load((POLICIES / "problems" / f"{name}.yml").read_text(encoding="utf-8"))
    return [pytest.param(case["policy"], case["error"], id=case_id) for case_id, case in cases.items()]
