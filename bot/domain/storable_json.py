r"""Make what an agent hands us storable: a JSON value of limited depth and size, in valid UTF-8.

A tool's arguments and an interrupt's reason come from a model. They are stored with the
approval request and read back by every reader (the message, App Home, ``/approvals``,
``pending``), so one value nested hundreds deep or megabytes long must not make a record that
cannot be read back (pydantic's JSON parser stops at 200 levels). Such values are shortened
where they overflow, with a visible marker saying what was left out; whatever fits is kept as is.
A lone surrogate (valid in a Python ``str``, and in JSON as ``\ud800``, but not in UTF-8 nor in
the stored record) is spelled out as ``bot.render.safe_text.reveal`` shows it: ``⟨U+D800⟩``.

The markers that say what was left out live here too: a stored value and a text clipped for Slack end
with the same words.
"""

import math
from typing import Any, Final

ELLIPSIS: Final = "…"
NESTED_TOO_DEEPLY: Final = f"{ELLIPSIS} (nested too deeply: not shown)"
MAX_DEPTH: Final = 24
MAX_CHARS: Final = 16_000
_MAX_INT_BITS: Final = 256


def truncation_marker(omitted: int) -> str:
    """The explicit marker that ends every truncated text."""
    return f"{ELLIPSIS} (truncated, {omitted} more characters)"


def more_not_shown(count: int) -> str:
    """Marker ending a list or object shortened to fit (``count`` entries left out)."""
    return f"(truncated, {count} more {'entry' if count == 1 else 'entries'} not shown)"


def bounded_json(value: Any, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> Any:
    """``value`` as plain JSON data (dicts with text keys, lists, text, numbers, booleans, null), shortened.

    Containers deeper than ``max_depth`` become a marker text; once ``max_chars`` characters of
    keys and scalars are used, the rest of each list, object or text is replaced by a marker.
    Values that are not JSON (sets, dates, NaN) become their text.
    """
    budget = _Budget(max_chars)
    return _walk(value, max_depth, budget)


class _Budget:
    def __init__(self, chars: int) -> None:
        self.left = chars

    def charge(self, chars: int) -> None:
        self.left -= chars

    def take(self, text: str) -> str:
        """``text``, clipped to what is left (with the truncation marker), and charged."""
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        kept = max(self.left, 0)
        self.left = 0
        return text[:kept] + truncation_marker(len(text) - kept)


def _walk(value: Any, depth_left: int, budget: _Budget) -> Any:
    if value is None or isinstance(value, bool):
        budget.charge(4)
        return value
    if isinstance(value, int):
        if value.bit_length() > _MAX_INT_BITS:  # JSON readers lose such numbers; Python cannot even print them
            return budget.take(f"{value:#x}")
        budget.charge(len(str(value)))
        return value
    if isinstance(value, float):
        if not math.isfinite(value):  # NaN and infinities are not JSON
            return budget.take(str(value))
        budget.charge(len(repr(value)))
        return value
    if isinstance(value, str):
        return budget.take(storable_text(value))
    if isinstance(value, dict | list | tuple | set | frozenset):
        if depth_left <= 0:
            return NESTED_TOO_DEEPLY
        if isinstance(value, dict):
            return _walk_object(value, depth_left - 1, budget)
        return _walk_array(list(value), depth_left - 1, budget)
    return budget.take(storable_text(str(value)))


def storable_text(text: str) -> str:
    """``text`` with each lone surrogate spelled out (``⟨U+D800⟩``): it fits in UTF-8 and in a record."""
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return "".join(f"⟨U+{ord(ch):04X}⟩" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
    return text


def _walk_object(value: dict[Any, Any], depth_left: int, budget: _Budget) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    items = list(value.items())
    for index, (key, item) in enumerate(items):
        if budget.left <= 0:
            shown[ELLIPSIS] = more_not_shown(len(items) - index)
            break
        name = budget.take(storable_text(str(key)))
        shown[name] = _walk(item, depth_left, budget)
    return shown


def _walk_array(value: list[Any], depth_left: int, budget: _Budget) -> list[Any]:
    shown: list[Any] = []
    for index, item in enumerate(value):
        if budget.left <= 0:
            shown.append(f"{ELLIPSIS} {more_not_shown(len(value) - index)}")
            break
        shown.append(_walk(item, depth_left, budget))
    return shown
