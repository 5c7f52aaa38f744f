"""String field types checked by one regular expression, which their JSON Schema publishes as its ``pattern``.

The OpenAPI document of the HTTP API is generated from the models that validate its input: a type made here
states its rule once, so a value the document calls valid is never refused and the other way round. Each
pattern is anchored (``^...$``) and is read alike by Python's ``re`` (checked with ``fullmatch``, so a trailing
newline never slips past ``$``), ECMA-262 (JSON Schema's dialect) and Rust's ``regex``: only ``\\uXXXX`` escapes,
character classes and counted repeats, no ``\\s`` or ``\\d`` (whose meanings differ between them).
"""

import re
from collections.abc import Callable
from typing import Any, Final

from pydantic import Field
from pydantic_core import PydanticCustomError

_HIDDEN: Final = (
    "\\u0000-\\u0020"  # C0 controls and the space
    "\\u007f-\\u00a0"  # DEL, C1 controls, no-break space
    "\\u00ad\\u061c\\u1680\\u180e"  # soft hyphen, Arabic letter mark, Ogham space, Mongolian vowel separator
    "\\u2000-\\u200f"  # spaces of every width, zero-width characters, left-to-right and right-to-left marks
    "\\u2028-\\u202f"  # line and paragraph separators, text-direction embeddings and overrides
    "\\u205f-\\u206f"  # medium space, word joiner, invisible operators, text-direction isolates
    "\\u3000\\ufeff\\ufff9-\\ufffb"  # ideographic space, zero-width no-break space, annotation marks
)
VISIBLE_NAME_PATTERN: Final = f"^[^{_HIDDEN}]+$"
"""A name of visible characters only: no whitespace (every character Python's ``str.isspace`` calls one),
control, zero-width or text-direction character."""


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


def published(pattern: str) -> Any:
    """Field metadata that publishes ``pattern`` in the JSON Schema without pydantic enforcing it again."""
    return Field(json_schema_extra={"pattern": pattern})
