"""A text made only of whitespace and characters that draw nothing is blank; one with anything to read is not."""

import pytest

from bot.domain.hidden_characters import is_blank


@pytest.mark.parametrize(
    "text", ["", " \n\t", "\u200b", "\u2800\u3164", "\u200e\u200f", "\u00ad", "\ufeff\u2060 \u115f"]
)
def test_text_of_only_whitespace_and_invisible_characters_is_blank(text: str) -> None:
    assert is_blank(text)


@pytest.mark.parametrize("text", ["ok\u200b", "\u200b.", "👩\u200d💻", "\u2764\ufe0f", "e\u0301", "\u202eno"])
def test_text_with_anything_to_read_is_not_blank(text: str) -> None:
    assert not is_blank(text)
