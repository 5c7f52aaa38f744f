"""Which interrupts ask a question, and what the question offers (``agent.vended.question_of``)."""

from typing import Any

import pytest

from agent.vended import HANDOFF_INTERRUPT, AskedQuestion, question_of


def test_handoff_to_users_reason_is_its_question_in_words() -> None:
    assert question_of(HANDOFF_INTERRUPT, "Which region?") == AskedQuestion("Which region?")


def test_a_reason_with_a_question_asks_it_with_what_it_offers() -> None:
    assert question_of("ask-user", {"question": "Which?"}) == AskedQuestion("Which?")
    assert question_of("ask", {"question": "Which?", "options": ["a", "b"], "multiple": True}) == AskedQuestion(
        "Which?", ["a", "b"], True
    )
    assert question_of("ask", {"question": "How?", "schema": {"type": "object"}}) == AskedQuestion(
        "How?", schema={"type": "object"}
    )


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("approval", {"tool": "deploy"}),
        ("ask-user", {"question": "  "}),
        ("ask-user", {"question": 3, "options": ["a"]}),
        ("ask-user", "Which?"),  # a string is a question only from handoff_to_user
        (HANDOFF_INTERRUPT, None),
    ],
)
def test_other_reasons_ask_nothing(name: str, reason: Any) -> None:
    assert question_of(name, reason) is None
