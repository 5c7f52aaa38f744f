"""Which characters a reader cannot see, and so when a text says nothing: ``is_blank``.

Control, format and text-direction characters draw nothing, nor do a few letters and marks (``⟨U+3164⟩``) and the
variation selectors away from the character they modify; a joiner between two emoji builds one emoji, anywhere
else it hides. A text made only of such characters and whitespace is blank: a deny reason of nothing else is no
reason. ``bot.render.safe_text`` spells the hidden characters out (``reveal``) wherever text is shown.
"""

import re
import unicodedata
from typing import Final

_BLANK_LOOKING: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
"""Letters and marks that draw nothing (names made of them look blank); the rest is found by category."""
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# What str.isprintable() accepts yet may hide: the blank-looking letters and the variation selectors.
_PRINTABLE_BUT_HIDDEN: Final = re.compile("[" + "".join(sorted(_BLANK_LOOKING)) + "\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def _pictographic(ch: str) -> bool:
    return ord(ch) >= 0x1F000 or unicodedata.category(ch) in ("So", "Sk") or ch == "\ufe0f"


def hidden_at(text: str, index: int) -> bool:
    """Whether the character at ``index`` of ``text`` shows nothing to a reader (newlines and tabs do show)."""
    ch = text[index]
    code = ord(ch)
    if ch == "\u200d":  # a joiner between two emoji builds one emoji (👩‍💻); anywhere else it hides
        return not (0 < index < len(text) - 1 and _pictographic(text[index - 1]) and _pictographic(text[index + 1]))
    if ch in "\ufe0e\ufe0f":  # text / emoji presentation of the character before it
        return index == 0 or text[index - 1].isspace() or hidden_at(text, index - 1)
    if 0xFE00 <= code <= 0xFE0D or 0xE0100 <= code <= 0xE01EF:  # other variation selectors: invisible
        return True
    if ch in "\n\t":
        return False
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _BLANK_LOOKING


def surely_visible(text: str) -> bool:
    """Whether ``text`` has no character that may hide (the common case, checked in C); ``False`` says look closer."""
    return text.replace("\n", "").replace("\t", "").isprintable() and not _PRINTABLE_BUT_HIDDEN.search(text)


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing to read: only whitespace and invisible characters (``⟨U+200B⟩``, ``⟨U+3164⟩``)."""
    return all(ch.isspace() or hidden_at(text, index) for index, ch in enumerate(text))
