"""What the bot's buttons carry is built and read back in one place (``bot.render.action_ids``)."""

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.domain.grants import Grant, ListedGrant
from bot.domain.question_kinds import MAX_BUTTONS
from bot.domain.records import PolicySummary, Question, QuestionOption
from bot.domain.trusts import Trust
from bot.render import action_ids as ids
from bot.render import blocks, controls
from bot.render.home_view import home_view
from bot.render.questions import question_message
from tests.bot.render.test_blocks import request

NOW = datetime(2026, 12, 2, tzinfo=UTC)


def _buttons(node: Any) -> list[dict[str, Any]]:
    """Every button of a Block Kit payload."""
    if isinstance(node, list):
        return [button for each in node for button in _buttons(each)]
    if not isinstance(node, dict):
        return []
    own = [node] if node.get("type") == "button" else []
    return own + [button for each in node.values() for button in _buttons(each)]


def test_every_button_the_bot_renders_is_declared_with_its_value() -> None:
    # A request offering every button (claims, an edit, grants, "allow similar", an answer instead), a question, a
    # standing approval.
    offering_all = request(
        policy=PolicySummary(name="p", claim_pause_s=600, grant_durations=(3600,)),
        call_digest="c" * 32,
        input_digest="i" * 32,
        trust_offered=True,
        answer_offered=True,
    )
    grant = Grant(
        grant_id="g1", team_id="T1", channel_id="C1", rule="p", tool="deploy", tool_input={"n": 1}, digest="d",
        terms="t", requester=None, granted_by="U1", granted_at=NOW, expires_at=NOW + timedelta(hours=1),
        granted_ms=0, approval_id="a",
    )  # fmt: skip
    question = request(question=Question(text="Which region?"))
    few = request(question=Question(text="Which?", kind="choice", options=tuple(_options(MAX_BUTTONS))))
    several = request(
        question=Question(text="Which?", kind="choice", options=tuple(_options(2)), multiple=True, other=True)
    )
    trust = Trust(
        session_id="T1:C1:1.0", tool="deploy", trusted_by="U1", requester="U2", team_id="T1", channel_id="C1",
        thread_ts="1.0", approval_id="a", trusted_at=NOW,
    )  # fmt: skip
    shown = (
        _buttons(blocks.approval_message(offering_all))
        + _buttons(question_message(question))
        + _buttons(question_message(few))
        + _buttons(question_message(several))
        + _buttons(home_view(queue=[], recent=[], now=NOW, grants=[ListedGrant(grant, 0)], trusts=[trust]))
    )
    named = {value for name, value in vars(ids).items() if name.endswith("_ACTION")} | ids.CHOOSE_BUTTONS
    older = {alias for control in controls.CONTROLS for alias in control.aliases}
    assert {button["action_id"] for button in shown} == named == controls.BUTTONS - older
    assert all(isinstance(button["value"], str) for button in shown)


def _options(count: int) -> list[QuestionOption]:
    return [QuestionOption(label=f"option {index}") for index in range(count)]


def test_an_option_button_names_its_option_and_a_malformed_one_names_none() -> None:
    value = ids.choice_button_value(4, "a-1", "T1:C1:1.0")
    assert ids.parse_choice_button_value(value) == (4, "a-1", "T1:C1:1.0")
    for malformed in ("a-1/T1:C1:1.0", "-1~a-1/T", "1e3~a", "٣~a", "1234~a"):
        assert ids.parse_choice_button_value(malformed) is None
    indexes = [ids.parse_choice_index(each) for each in ("0", "99", "x", "", "-1", "1000")]
    assert indexes == [0, 99, None, None, None, None]


def test_a_revoke_button_names_the_grant_it_ends() -> None:
    value = ids.revoke_button_value("T1", "C1", "g0123")
    assert ids.parse_revoke_button_value(value) == ("T1", "C1", "g0123")


def test_a_malformed_revoke_value_names_no_grant() -> None:
    assert ids.parse_revoke_button_value("T1") == ("T1", "", "")
