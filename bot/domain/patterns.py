r"""String field types checked by one regular expression, which their JSON Schema publishes as its ``pattern``.

The OpenAPI document of the HTTP API is generated from the models that validate its input: a type made here
states its rule once, so a value the document calls valid is never refused and the other way round. Each
pattern is anchored (``^...$``) and is read alike by Python's ``re`` (checked with ``fullmatch``, so a trailing
newline never slips past ``$``), ECMA-262 (JSON Schema's dialect) and Rust's ``regex``: only ``\uXXXX`` escapes,
character classes and counted repeats, no ``\s`` or ``\d`` (whose meanings differ between them).
"""

import re
from collections.abc import Callable
from typing import Any, Final

from pydantic import Field
from pydantic_core import PydanticCustomError

_SPACES_AND_CONTROLS: Final = (
    "\\u0000-\\u0020"  # C0 controls and the space
    "\\u007f-\\u00a0"  # DEL, C1 controls, no-break space
    "\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"  # the other spaces and line separators
)
_INVISIBLE: Final = (
    "\\u00ad\\u061c\\u180e"  # soft hyphen, Arabic letter mark, Mongolian vowel separator
    "\\u200b-\\u200f"  # zero-width characters, left-to-right and right-to-left marks
    "\\u202a-\\u202e"  # text-direction embeddings and overrides
    "\\u2060-\\u206f"  # word joiner, invisible operators, text-direction isolates
    "\\ufeff\\ufff9-\\ufffb"  # zero-width no-break space, annotation marks
)
NAME_PATTERN: Final = f"^[^{_SPACES_AND_CONTROLS}]+$"
"""A name without whitespace (every character Python's ``str.isspace`` calls one) or control character: what a
policy file may name (an agent's own tool may hold an invisible character; a rule must be able to name it)."""
VISIBLE_NAME_PATTERN: Final = f"^[^{_SPACES_AND_CONTROLS}{_INVISIBLE}]+$"
"""A name of visible characters only: nor zero-width or text-direction character (what the HTTP API accepts)."""

NON_BLANK_PATTERN: Final = f"[^{_SPACES_AND_CONTROLS}]"
"""Text holding at least one character that is neither whitespace nor a control: searched for, not anchored
(``somewhere``), as JSON Schema reads a ``pattern``."""


def whole_match(pattern: str, *, code: str, message: str) -> Callable[[str], str]:
    """A validator: the value when it matches ``pattern`` whole, else an error (``message``, with ``{value}``).

    The value is quoted back shortened and as a Python literal, so a control character in it stays visible.
    """
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise PydanticCustomError(code, message, {"value": repr(value[:100])})
        return value

    return check


def somewhere(pattern: str, *, code: str, message: str) -> Callable[[str], str]:
    """A validator: the value when ``pattern`` is found in it (``re.search``), else an error (``message``)."""
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if compiled.search(value) is None:
            raise PydanticCustomError(code, message)
        return value

    return check


def published(pattern: str) -> Any:
    """Field metadata that publishes ``pattern`` in the JSON Schema without pydantic enforcing it again."""
    return Field(json_schema_extra={"pattern": pattern})
