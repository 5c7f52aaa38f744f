"""Markdown for the generated sections of the docs: tables, cells, and what docstrings say.

Docstrings are reStructuredText-ish (````code````); a table cell is GitHub Markdown, where ``<team>`` outside a
code span would be read as an HTML tag and ``|`` would end the cell.
"""

import ast
import inspect
import re
import textwrap
from collections.abc import Sequence

_RST_CODE = re.compile(r"``(.+?)``")
_CODE_SPAN = re.compile(r"(`[^`]*`)")
_GOOGLE_SECTION = re.compile(r"^(Args|Returns|Raises|Attributes|Yields):$", re.MULTILINE)


def cell(text: str) -> str:
    """``text`` as one table cell: on one line, code spans kept, ``<``, ``>`` and ``|`` escaped."""
    text = " ".join(_RST_CODE.sub(r"`\1`", text).split())
    parts = _CODE_SPAN.split(text)
    escaped = [part if part.startswith("`") else part.replace("<", "&lt;").replace(">", "&gt;") for part in parts]
    return "".join(escaped).replace("|", "\\|")


def code(text: str) -> str:
    """``text`` as a code span in a table cell."""
    return f"`{text}`".replace("|", "\\|")


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table; cells are used as given (see ``cell`` and ``code``)."""
    lines = [f"| {' | '.join(header)} |", f"|{'---|' * len(header)}"]
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join(lines)


def described(docstring: str | None) -> str:
    """A docstring's prose, without its ``Args:`` / ``Returns:`` / ``Raises:`` sections."""
    text = inspect.cleandoc(docstring or "")
    return _GOOGLE_SECTION.split(text, maxsplit=1)[0].strip()


def first_paragraph(docstring: str | None) -> str:
    """The first paragraph of a docstring, on one line."""
    return " ".join(inspect.cleandoc(docstring or "").split("\n\n", 1)[0].split())


def attribute_docstrings(cls: type) -> dict[str, str]:
    """The docstrings written under the class attributes of ``cls`` and its bases (the nearest class wins)."""
    found: dict[str, str] = {}
    for klass in cls.__mro__:
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):  # a builtin or library base: nothing of ours to read
            continue
        body = ast.parse(textwrap.dedent(source)).body[0]
        assert isinstance(body, ast.ClassDef)
        for statement, after in zip(body.body, body.body[1:], strict=False):
            if not isinstance(statement, ast.AnnAssign) or not isinstance(statement.target, ast.Name):
                continue
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                found.setdefault(statement.target.id, inspect.cleandoc(str(after.value.value)))
    return found
