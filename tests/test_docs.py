"""The README and the pages of ``docs/`` say what the code does: their generated sections are current, their
links and the module paths they name lead somewhere, and the tables written by hand name what the code has."""

import importlib
import re
from pathlib import Path

import pytest
from prometheus_client.metrics import MetricWrapperBase

from bot.observe import metrics
from bot.settings import Settings
from tests.docs import redis_keys
from tests.docs.fields import environment_name, file_key, undescribed
from tests.docs.sections import (
    COMMAND,
    POLICY_SECTIONS,
    ROOT,
    SECTIONS,
    doc_files,
    how_to_get_setting,
    rewritten,
    section_names,
    stale_files,
)

_FENCED = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
_PATH = re.compile(r"(?:state|agent|bot|tests|bench|recipes|deploy|docs|\.ci)/[\w./-]*")
_DOTTED = re.compile(r"(?:state|agent|bot|bench|recipes)(?:\.\w+)+(?::\w+)?")


def _prose(path: Path) -> str:
    """The file without its fenced code blocks (a ``# comment`` there is no heading, a path there no claim)."""
    return _FENCED.sub("", path.read_text())


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    return {_slug(heading) for heading in _HEADING.findall(_prose(path))}


def test_generated_sections_are_current() -> None:
    stale = [str(path.relative_to(ROOT)) for path in stale_files()]
    assert stale == [], f"stale generated sections in {stale}: run `{COMMAND}`"


def test_every_section_builder_is_used_once() -> None:
    used = [name for path in doc_files() for name in section_names(path.read_text())]
    assert sorted(used) == sorted(SECTIONS), "each generated section appears exactly once in the docs"


def test_a_section_without_a_builder_is_an_error() -> None:
    with pytest.raises(KeyError):
        rewritten("<!-- generated: nothing-builds-this -->\n<!-- end generated -->\n")


@pytest.mark.parametrize("path", doc_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_relative_links_lead_to_files_and_headings(path: Path) -> None:
    broken = []
    for target in _LINK.findall(_CODE_SPAN.sub("", _prose(path))):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert broken == []


@pytest.mark.parametrize("path", doc_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_module_paths_in_backticks_exist(path: Path) -> None:
    spans = _CODE_SPAN.findall(_prose(path))
    missing = [span for span in spans if _PATH.fullmatch(span) and not (ROOT / span).exists()]
    unresolved = [span for span in spans if _DOTTED.fullmatch(span) and not _resolves(span)]
    assert missing == [], "paths named that do not exist"
    assert unresolved == [], "modules or names that do not import"


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` (``bot.store.keys``, ``bot.domain.grants.call_digest``, ``agent.demo:build``) names a
    module or something a module defines."""
    parts = dotted.replace(":", ".").split(".")
    for split in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(found, name):
                return False
            found = getattr(found, name)
        return True
    return False


def test_the_readme_holds_both_commands_verbatim() -> None:
    readme = (ROOT / "README.md").read_text()
    ci_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert f"\n    {ci_command}\n" in readme, "the README's test command is the one .ci/run runs"
    assert "\n    python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/python -m bot\n" in readme


def test_the_generated_metrics_table_lists_every_instrument() -> None:
    # The table is written from ``metrics.INSTRUMENTS``: an instrument defined but not listed there would be missing.
    defined = [metric for metric in vars(metrics).values() if isinstance(metric, MetricWrapperBase)]
    assert defined
    assert {id(metric) for metric in defined} == {id(metric) for metric in metrics.INSTRUMENTS}
    page = (ROOT / "docs" / "operations.md").read_text()
    listed = re.findall(r"^\| `(signoff_\w+)` \|", page, re.MULTILINE)
    assert "signoff_decisions_total" in listed
    assert "signoff_pending_approvals" in listed


def test_every_setting_and_policy_key_is_described_by_the_code() -> None:
    # The tables take a field's words from the docstring under it (a setting's, else how to get it): none missing.
    settings = undescribed(Settings, name=environment_name(Settings), fallback=how_to_get_setting)
    assert settings == [], "describe these settings in bot/settings.py, under each field"
    keys = {title: found for title, model in POLICY_SECTIONS.items() if (found := undescribed(model, name=file_key))}
    assert keys == {}, "describe these policy keys in bot/domain, under each field"


def test_every_redis_key_has_the_type_its_listing_gives_it() -> None:
    untyped = [key.pattern for key in redis_keys.all_keys() if not key.type]
    assert untyped == [], "list these keys, with their type, in the docstring of bot/store/keys.py or state/store.py"
