"""Hidden characters are made visible; emoji, flags and line breaks are not."""

import pytest

from bot.domain.storable_json import ELLIPSIS
from bot.render import blocks, safe_text


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("cat report_\u202egpj.sh", "cat report_⟨U+202E⟩gpj.sh"),
        ("a\u200bb\u2060c\ufeffd", "a⟨U+200B⟩b⟨U+2060⟩c⟨U+FEFF⟩d"),
        ("x\u200dy", "x⟨U+200D⟩y"),
        ("bell\x07 del\x7f nel\x85 ls\u2028", "bell⟨U+0007⟩ del⟨U+007F⟩ nel⟨U+0085⟩ ls⟨U+2028⟩"),
        ("tag\U000e0041smuggled", "tag⟨U+E0041⟩smuggled"),
        ("\u3164", "⟨U+3164⟩"),
        ("\ufe0fstart", "⟨U+FE0F⟩start"),
    ],
)
def test_hidden_characters_are_revealed(raw: str, shown: str) -> None:
    assert safe_text.reveal(raw) == shown
    assert safe_text.has_hidden(raw)


@pytest.mark.parametrize(
    "text",
    [
        "plain",
        "line\n\ttab",
        "👩\u200d💻 ❤\ufe0f 👍🏽",
        "🏴\U000e0067\U000e0062\U000e0077\U000e006c\U000e0073\U000e007f",
        "ünïcödé",
    ],
)
def test_visible_text_emoji_and_flags_stay_as_they_are(text: str) -> None:
    assert safe_text.reveal(text) == text
    assert not safe_text.has_hidden(text)


def test_truncation_never_splits_a_revealed_character() -> None:
    clipped = safe_text.clip("\u202e" * 100, 60)
    kept = clipped[: clipped.index(ELLIPSIS)]
    assert kept
    assert kept.count("⟨") == kept.count("⟩")
    for piece in blocks.agent_reply_blocks("\u202e" * 2_000):
        text = piece["text"]["text"]
        assert text.count("⟨") == text.count("⟩")


@pytest.mark.parametrize("name", ["deploy\n> *approved*", "deploy\tprod", "a\r\nb"])
def test_a_name_in_inline_code_stays_on_one_line_with_its_breaks_spelled_out(name: str) -> None:
    shown = safe_text.code_inline(name)
    assert "\n" not in shown
    assert "\t" not in shown
    assert "⟨U+000A⟩" in shown or "⟨U+0009⟩" in shown


def test_a_name_with_a_line_break_flags_the_message() -> None:
    from tests.bot.render.test_blocks import request

    assert not blocks.has_hidden_characters(request())
    assert blocks.has_hidden_characters(request(tool="deploy\nprod"))
    assert blocks.has_hidden_characters(request(interrupt_name="ask\n"))
