"""The generated sections of the docs: where they are, what builds each, and how a file is rewritten.

A section sits between ``<!-- generated: NAME -->`` and ``<!-- end generated -->`` in ``README.md`` or a page of
``docs/``; ``python -m tests.docs`` rewrites every one from the code, and ``tests/test_docs.py`` fails while one
is stale.
"""

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from bot.domain import grants, ladder, oncall, policy
from bot.domain.policy_rules import Approvers, Match, Rule
from bot.mcp.config import McpSettings
from bot.settings import Settings, how_to_get
from tests.docs import tables
from tests.docs.fields import environment_name, field_table, file_key
from tests.docs.markdown import cell, first_paragraph
from tests.docs.redis_keys import key_tables, shard_tags

ROOT = tables.ROOT
COMMAND = "python -m tests.docs"
_SECTION = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.DOTALL)

SETTINGS_NOT_DESCRIBED: dict[str, str] = {
    "AGENT_FACTORY": "`module:callable` building the agent of a session, called as "
    "`factory(session_id=..., store=...)`; it returns Signoff's `agent.Agent` or a Strands agent.",
    "APPROVAL_POLICY": "Path of [the policy file](policy.md), YAML or TOML; unset: anyone in the channel but the "
    "requester may decide.",
    "PORT": "The port `python -m bot serve` listens on (under gunicorn, the Procfile binds `$PORT` itself).",
    "AUDIT_MAX_ENTRIES": "How many audit events are kept, all shards together: the worker trims the oldest beyond.",
    "AUDIT_KEEP_UNEXPORTED": "`true`: trimming never drops events newer than the last `python -m bot audit export`.",
    "LOG_LEVEL": "The lowest level logged.",
}
"""What the settings model leaves undescribed (no docstring under the field): until it says it, the docs do."""
POLICY_KEYS_NOT_DESCRIBED: dict[str, str] = {
    "Rule.name": "The rule's name: 1 to 63 letters, digits, `-`, `_` or `.`, starting with a letter or digit "
    "(`default` is reserved). Messages, the audit and the metrics name it.",
    "Rule.reason_required_on_deny": "Whether a deny needs a reason: the deny form requires one, and a deny "
    "without one is refused.",
    "Match.tools": "Tool names: the rule applies to the call an interrupt guards when its tool is listed.",
    "Match.interrupts": "Interrupt names: the rule applies to an interrupt of that name that no tool rule took.",
    "Approvers.users": "Slack users who may decide.",
    "Approvers.usergroups": "Slack user groups whose members may decide (read with `usergroups.users.list`, "
    "cached five minutes).",
    "Escalation.repeat": "How many more times to walk the whole ladder after the first.",
    "Level.after": "How long to wait: from the request for the first rung, else from the previous rung.",
    "Targets.users": "Users the level mentions in the thread.",
    "Targets.usergroups": "User groups the level mentions in the thread.",
    "Targets.rotation": "A rotation of `rotations`: its on-call person is mentioned and sent the request by DM, "
    "with its buttons.",
    "Claim.pause": "How long a claim pauses the ladder.",
    "Reminders.every": "How often the thread is nudged while the request is pending.",
    "Expiry.after": "How long the request may wait.",
    "Expiry.outcome": "`deny`: it ends as expired (the agent is told so, never that a person denied it); `keep`: "
    "it stays pending; `approve`: approved automatically, only on a rule with `low_risk: true`.",
    "Rotation.members": "Who is on call, in turn.",
    "Rotation.shift": "How long each member holds it: whole days, or a duration that divides a day (`8h`, `12h`).",
    "Rotation.handoff": "The local time of each hand-off.",
    "Rotation.timezone": "The rotation's time zone (an IANA name, such as `Europe/Berlin`).",
    "Rotation.starts": "The date of the first hand-off, when the first member's shift begins.",
}
"""The same for the policy file's keys."""


@dataclass(frozen=True)
class Section:
    """One generated section: the code it is read from, and the function that writes it."""

    sources: tuple[str, ...]
    build: Callable[[], str]


def _settings() -> str:
    def described(variable: str) -> str:
        try:
            return how_to_get(variable)
        except KeyError:
            return SETTINGS_NOT_DESCRIBED.get(variable, "")

    header = ("variable", "type", "default", "what")
    return field_table(Settings, name=environment_name(Settings), header=header, fallback=described)


def _policy_keys() -> str:
    sections: dict[str, type[BaseModel]] = {
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
    return "\n\n".join(
        f"**{title}.** {cell(first_paragraph(model.__doc__))}\n\n"
        + field_table(model, name=file_key, fallback=functools.partial(_policy_key_words, model))
        for title, model in sections.items()
    )


def _policy_key_words(model: type, key: str) -> str:
    return POLICY_KEYS_NOT_DESCRIBED.get(f"{model.__name__}.{key}", "")


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
            "bot/domain/policy.py",
            "bot/domain/policy_rules.py",
            "bot/domain/ladder.py",
            "bot/domain/grants.py",
            "bot/domain/oncall.py",
        ),
        _policy_keys,
    ),
    "modules": Section(tuple(f"{package}/" for package in tables.PACKAGES), tables.modules),
    "benchmarks": Section(("bench/",), tables.benchmarks),
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
