"""Which characters a reader cannot see, and so when a text says nothing: ``is_blank``.

Control, format and text-direction characters draw nothing, nor do a few letters and marks (``⟨U+3164⟩``) and the
variation selectors away from the character they modify; a joiner between two emoji builds one emoji, anywhere
else it hides. A text made only of such characters and whitespace is blank: a deny reason of nothing else is no
reason. ``reveal`` spells the hidden characters out (``⟨U+202E⟩``): ``bot.render.safe_text`` wherever text is shown,
and a question's option labels are measured as it shows them (``bot.domain.question_kinds``).
"""

import re
import unicodedata
from typing import Final

_BLANK_LOOKING: Final = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
"""Letters and marks that draw nothing (names made of them look blank); the rest is found by category."""
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# What str.isprintable() accepts yet may hide: the blank-looking letters and the variation selectors.
_PRINTABLE_BUT_HIDDEN: Final = re.compile("[" + "".join(sorted(_BLANK_LOOKING)) + "\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_FLAG_SEQUENCE: Final = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")  # 🏴 + tags: a region's flag


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


def reveal(text: str) -> str:
    """``text`` with every invisible, control or text-direction character shown as ``⟨U+202E⟩``.

    A person must read exactly what they approve: ``cat report_\u202egpj.sh`` would display as
    ``cat report_hs.jpg``. Newlines, tabs and the joiners inside emoji and flags stay as they are.
    """
    if surely_visible(text):
        return text  # the common case: no control, format or separator character at all
    flags = {match.start(): match.end() for match in _FLAG_SEQUENCE.finditer(text)} if "\U0001f3f4" in text else {}
    shown: list[str] = []
    index = 0
    while index < len(text):
        if index in flags:
            shown.append(text[index : flags[index]])
            index = flags[index]
            continue
        shown.append(f"⟨U+{ord(text[index]):04X}⟩" if hidden_at(text, index) else text[index])
        index += 1
    return "".join(shown)
