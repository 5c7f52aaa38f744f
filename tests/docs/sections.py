"""The generated sections of the docs: where they are, what builds each, and how a file is rewritten.

A section sits between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` in ``README.md`` or a page of
``docs/``; ``python -m tests.docs`` rewrites every one from the code, and ``tests/test_docs.py`` fails while one
is stale.
"""

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from bot.domain import grants
from bot.domain.policy import ladder, oncall, policy
from bot.domain.policy.policy_rules import Approvers, Match, Rule
from bot.mcp.config import McpSettings
from bot.settings import Settings, how_to_get
from tests.docs import tables
from tests.docs.fields import environment_name, field_table, file_key
from tests.docs.markdown import cell, first_paragraph
from tests.docs.redis_keys import key_tables, shard_tags

ROOT = tables.ROOT
COMMAND = "python -m tests.docs"
_SECTION = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL)


@dataclass(frozen=True)
class Section:
    """One generated section: the code it is read from, and the function that writes it."""

    sources: tuple[str, ...]
    build: Callable[[], str]


def how_to_get_setting(variable: str) -> str:
    """The words ``bot.settings`` has for ``variable`` in its error messages ("" for a setting without any)."""
    try:
        return how_to_get(variable)
    except KeyError:
        return ""


def _settings() -> str:
    header = ("variable", "type", "default", "what")
    return field_table(Settings, name=environment_name(Settings), header=header, fallback=how_to_get_setting)


POLICY_SECTIONS: dict[str, type[BaseModel]] = {
    "The file": policy.PolicyBook,
    "A rule (the `default` section takes the same keys but `name`, `match`, `tier` and `message`)": Rule,
    "`match`": Match,
    "`approvers`": Approvers,
    "`escalation`": ladder.Escalation,
    "`escalation.levels[]`": ladder.Level,
    "`escalation.levels[].targets`": ladder.Targets,
    "`claim`": ladder.Claim,
    "`reminders`": ladder.Reminders,
    "`expiry`": ladder.Expiry,
    "`grants`": grants.GrantTerms,
    "`rotations.<name>`": oncall.Rotation,
}
"""The policy file's sections, each with its model, in the order the docs show them."""


def _policy_keys() -> str:
    return "\n\n".join(
        f"**{title}.** {cell(first_paragraph(model.__doc__))}\n\n" + field_table(model, name=file_key)
        for title, model in POLICY_SECTIONS.items()
    )


SECTIONS: dict[str, Section] = {
    "settings": Section(("bot/settings.py",), _settings),
    "mcp-settings": Section(
        ("bot/mcp/config.py",),
        lambda: field_table(
            McpSettings, name=environment_name(McpSettings), header=("variable", "type", "default", "what")
        ),
    ),
    "keys": Section(("bot/store/keys.py", "state/store.py"), key_tables),
    "shard-tags": Section(("state/store.py",), shard_tags),
    "http-api": Section(("bot/api/openapi.py", "bot/domain/api_requests.py"), tables.http_api),
    "commands": Section(("bot/cli/main.py",), tables.commands),
    "policy-keys": Section(
        (
            "bot/domain/policy/policy.py",
            "bot/domain/policy/policy_rules.py",
            "bot/domain/policy/ladder.py",
            "bot/domain/grants.py",
            "bot/domain/policy/oncall.py",
        ),
        _policy_keys,
    ),
    "modules": Section(tuple(f"{package}/" for package in tables.PACKAGES), tables.modules),
    "benchmarks": Section(("bench/",), tables.benchmarks),
    "metrics": Section(("bot/observe/metrics.py", "bot/observe/state_collector.py"), tables.metrics),
}


def doc_files() -> list[Path]:
    """Every file that may hold a generated section: the README and the pages of ``docs/``."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def rewritten(text: str) -> str:
    """``text`` with every generated section written afresh.

    Raises:
        KeyError: A section names no builder of ``SECTIONS``.
    """

    def body(match: re.Match[str]) -> str:
        section = SECTIONS[match["name"]]
        origin = ", ".join(f"`{source}`" for source in section.sources)
        note = f"<!-- Written by `{COMMAND}` from {origin}: edit the code, then run it. -->"
        return f"{match[1]}{note}\n\n{section.build()}\n\n{match[4]}"

    return _SECTION.sub(body, text)


def section_names(text: str) -> list[str]:
    """The names of the generated sections in ``text``, in order."""
    return [match["name"] for match in _SECTION.finditer(text)]


def stale_files() -> list[Path]:
    """The doc files whose generated sections differ from what the code gives now."""
    return [path for path in doc_files() if rewritten(path.read_text()) != path.read_text()]
