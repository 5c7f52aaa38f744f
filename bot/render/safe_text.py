"""The primitives that make text safe to interpolate into Slack: escaped, hidden characters shown, bounded.

Anything a user, an agent or a model controls is escaped (``&``, ``<``, ``>``) before it is interpolated, so an
argument such as ``<!channel>`` is shown, never executed; invisible and text-direction characters (which ones:
``bot.domain.hidden_characters``) are spelled out (``⟨U+202E⟩``) so a person reads exactly what they approve; ids and
names are clipped so no text can grow past Block Kit's limits. Every text of ``bot.render.texts`` is built from these.
"""

import unicodedata
from typing import Final

from bot.domain.hidden_characters import reveal as reveal  # noqa: PLC0414  # re-exported: every text shown uses it
from bot.domain.storable_json import ELLIPSIS, truncation_marker

MAX_ID = 64  # Slack ids are ~11 characters; anything longer is clipped, never trusted to be short.
MAX_NAME = 200  # tool names, policy names, interrupt names
MAX_DECISION_REASON = 2000
MAX_SUMMARY = 500  # error summaries

_ESCAPES: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_JOINERS: Final = frozenset("\u200d\ufe0e\ufe0f")
_REVEALED_MAX: Final = len("⟨U+10FFFF⟩")


def escape(text: str) -> str:
    """Escape the three characters mrkdwn gives meaning to: mentions and links stay inert text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def has_hidden(text: str) -> bool:
    """Whether ``reveal`` would change ``text``."""
    return reveal(text) != text


def _continues(ch: str) -> bool:
    """Whether ``ch`` belongs to the character before it (combining mark, joiner, modifier, tag)."""
    code = ord(ch)
    return (
        unicodedata.combining(ch) != 0
        or ch in _JOINERS
        or 0x1F3FB <= code <= 0x1F3FF  # skin tone modifiers
        or 0xE0020 <= code <= 0xE007F  # tag characters (subdivision flags)
    )


def safe_cut(text: str, cut: int) -> int:
    """Move ``cut`` back so it does not split a visible character (emoji sequence, accent) or a revealed one."""
    original = cut
    opened = text.rfind("⟨", max(cut - _REVEALED_MAX, 0), cut)
    if opened != -1 and text.startswith("⟨U+", opened) and "⟩" not in text[opened:cut]:
        cut = opened
    while 0 < cut < len(text) and (_continues(text[cut]) or text[cut - 1] == "\u200d"):
        cut -= 1
    return cut if cut > 0 else original


def fit_escaped(raw: str, budget: int) -> tuple[str, int]:
    """The longest prefix of ``raw`` whose escaped form fits ``budget``: (escaped prefix, characters left out)."""
    escaped = escape(raw)
    if len(escaped) <= budget:
        return escaped, 0
    used = cut = 0
    for ch in raw:
        cost = len(_ESCAPES.get(ch, ch))
        if used + cost > budget:
            break
        used += cost
        cut += 1
    cut = safe_cut(raw, cut)
    return escape(raw[:cut]), len(raw) - cut


def clip(raw: str, limit: int) -> str:
    """``raw`` revealed and escaped, truncated with the marker so the result is at most ``limit`` characters."""
    raw = reveal(raw)
    escaped = escape(raw)
    if len(escaped) <= limit:
        return escaped
    prefix, omitted = fit_escaped(raw, limit - len(truncation_marker(len(raw))))
    return prefix + truncation_marker(omitted)


def clip_plain(text: str, limit: int) -> str:
    """Plain text (revealed, not escaped: plain_text objects never ping) truncated to ``limit`` characters."""
    text = reveal(text)
    if len(text) <= limit:
        return text
    short = f"{ELLIPSIS} (+{len(text)})"
    cut = safe_cut(text, max(limit - len(short), 0))
    return text[:cut] + f"{ELLIPSIS} (+{len(text) - cut})"


def reveal_inline(text: str) -> str:
    """``reveal`` for text shown on one line (names in inline code): newlines and tabs are spelled out too.

    Inline code cannot span lines: a newline in a tool name would end the span, and the rest of
    the name would render as mrkdwn (a fake quote, a bold "approved").
    """
    return reveal(text).replace("\n", "⟨U+000A⟩").replace("\t", "⟨U+0009⟩")


MAX_INLINE_ARGUMENTS: Final = 160
"""Characters of a call's arguments a one-line mention shows (App Home's recent decisions)."""


def code_inline(raw: str, limit: int = MAX_NAME) -> str:
    """``raw`` as inline code on one line: escaped, backticks replaced so the span cannot end early."""
    shown = clip(reveal_inline(raw.replace("`", "'")), limit) or " "
    return f"`{shown}`"


def mention_user(user_id: str) -> str:
    """A user mention (pings the user)."""
    return f"<@{escape(user_id[:MAX_ID])}>"


def mention_group(group_id: str) -> str:
    """A user-group mention (pings the group)."""
    return f"<!subteam^{escape(group_id[:MAX_ID])}>"


def unescape_slack(text: str) -> str:
    """Text as the person typed it: Slack sends ``&``, ``<`` and ``>`` of typed text as entities."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
