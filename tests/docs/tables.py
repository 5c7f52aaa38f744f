"""The generated tables that read one thing each: the served OpenAPI document, the CLI's commands, the
modules' docstrings, the benchmarks' docstrings, the exported metrics."""

import ast
import re
from pathlib import Path
from typing import Any

from bot.api import openapi
from bot.cli.main import COMMANDS
from bot.domain.api_requests import ChannelRouting
from bot.observe import metrics as observed
from bot.observe.state_collector import PendingTally, StateCollector
from tests.docs.markdown import cell, code, first_paragraph, table

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGES = ("state", "agent", "bot", "loopback_slack", "bench", "recipes")
"""The folders whose modules ``docs/modules.md`` lists."""
_BENCH_RUN = re.compile(r"python -m (bench\.\w+)( \[[^\n`]*\])?")


def http_api() -> str:
    """The operations of the OpenAPI document the web process serves (with the answers each documents), and the
    fields of an ask and of a question."""
    # Which tools may leave out ``channel`` depends on the running policy; nothing shown here does.
    document = openapi.document(ChannelRouting(by_default=True, exceptions=()))
    rows = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            key = "none" if operation.get("security") == [] else "`Authorization: Bearer <key>`"
            answers = ", ".join(sorted(operation["responses"]))
            rows.append([code(f"{method.upper()} {path}"), cell(operation["summary"]), key, answers])
    parts = [table(["operation", "what", "API key", "answers"], rows)]
    for body in ("ApprovalAsk", "QuestionAsk"):
        ask = document["components"]["schemas"][body]
        fields = [
            [code(name), "yes" if name in ask.get("required", ()) else "no", cell(_described_property(schema))]
            for name, schema in ask["properties"].items()
        ]
        parts += [f"{cell(ask['description'])} Its fields:", table(["field", "required", "what"], fields)]
    return "\n\n".join(parts)


def _described_property(schema: dict[str, Any]) -> str:
    lengths = [arm["maxLength"] for arm in (schema, *schema.get("anyOf", ())) if "maxLength" in arm]
    limit = f" At most {lengths[0]} characters." if lengths else ""
    return f"{schema.get('description', '')}{limit}"


def commands() -> str:
    """``python -m bot help``'s list: every command and what it does."""
    rows = [[code(f"python -m bot {name}"), cell(text)] for name, text in COMMANDS.items()]
    return table(["command", "what it does"], rows)


def modules() -> str:
    """Each package's modules with the first paragraph of their docstring."""
    sections = []
    for package in PACKAGES:
        rows = []
        for path in sorted((ROOT / package).rglob("*.py")):
            docstring = ast.get_docstring(ast.parse(path.read_text()))
            if docstring:  # an empty ``__init__.py`` only marks a package
                rows.append([code(str(path.relative_to(ROOT))), cell(first_paragraph(docstring))])
        sections.append(f"### `{package}/`\n\n" + table(["module", "what it holds"], rows))
    return "\n\n".join(sections)


def benchmarks() -> str:
    """Each benchmark (a ``bench`` module whose docstring says how to run it) and what it measures."""
    rows = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
        run = _BENCH_RUN.search(docstring)
        if run is not None and run[1] == f"bench.{path.stem}":
            rows.append([code(f".venv/bin/{run[0]}"), cell(first_paragraph(docstring))])
    return table(["run", "what it measures"], rows)


def metrics() -> str:
    """Every metric the bot exports: the instruments the processes record into, then the gauges read from Redis."""
    rows = []
    for instrument in observed.INSTRUMENTS:
        [family] = instrument.describe()
        name = f"{family.name}_total" if family.type == "counter" else family.name
        labels = ", ".join(code(label) for label in instrument._labelnames)
        rows.append([code(name), family.type, labels, cell(family.documentation)])
    # One pending approval and an empty outbox: enough for every gauge family and its labels to appear once.
    one = PendingTally(counts={("rule", "lt_5m"): 1}, oldest_s=0.0)
    collector = StateCollector(pending=lambda _now: one, outbox_depth=int, outbox_dead=int, clock=float)
    for family in collector.collect():
        labels = ", ".join(code(label) for label in family.samples[0].labels)
        rows.append([code(family.name), family.type, labels, cell(family.documentation)])
    return table(["metric", "type", "labels", "what"], rows)
