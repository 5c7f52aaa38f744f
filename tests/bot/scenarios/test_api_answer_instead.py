"""Answers in words where a choice was asked: an approval asked with ``respond: true`` ("Answer instead"), and a
question of options asked with ``other: true`` ("Other…").

Before, ``respond`` and ``other`` were refused (422: unknown fields), no message offered a way to answer in words,
and the decide script refused any answer to an approval, and words for a question of options (``wrong_action``).
"""

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from bot.render import action_ids as ids
from bot.render import controls
from bot.render.texts import approval_request, questions
from tests.bot.support.api_client import ApiCaller, api_caller
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER, REQUESTER, SECOND_APPROVER

WORDS = "Use the staging cluster <!channel>\u200b instead"


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url) as caller:
        yield caller


def _asked(bot: Bot, api: ApiCaller, **fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    response = api.ask(**fields)
    assert response.status_code == 201, response.text
    bot.drain()
    asked = api.get(response.json()["id"]).json()
    message = next(each for each in bot.approval_messages() if each["ts"] == asked["message_ts"])
    return asked, message


def _labels(message: dict[str, Any]) -> list[str]:
    return [
        element["text"]["text"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
    ]


def _told(bot: Bot, user: str, part: str) -> None:
    deadline = time.monotonic() + 10
    while not any(part in text for text in bot.ephemeral_texts(user)):
        assert time.monotonic() < deadline, bot.ephemeral_texts(user)
        time.sleep(0.02)
        bot.drain()


def _open(bot: Bot, action_id: str, approval_id: str, *, user: str) -> dict[str, Any]:
    opened = len(bot.slack.calls("views.open"))
    assert bot.click(action_id, approval_id, user=user).status == 200
    return dict(bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"])


def _open_answer_instead(bot: Bot, approval_id: str, *, user: str) -> dict[str, Any]:
    return _open(bot, controls.ANSWER_INSTEAD.action_id, approval_id, user=user)


def test_an_approval_asked_with_respond_is_answered_in_words_and_the_client_reads_answered(
    bot: Bot, api: ApiCaller
) -> None:
    asked, message = _asked(bot, api, respond=True)
    assert asked["respond"] is True
    assert approval_request.ANSWER_INSTEAD_LABEL in _labels(message)
    assert approval_request.APPROVE_LABEL in _labels(message)
    approval_id = bot.approval_id(-1)

    # Who may answer is who may decide: the requester may not approve their own request, nor answer it.
    assert bot.click(controls.ANSWER_INSTEAD.action_id, approval_id, user=REQUESTER).status == 200
    _told(bot, REQUESTER, "you can't approve it yourself")

    view = _open_answer_instead(bot, approval_id, user=APPROVER)
    assert view["callback_id"] == ids.ANSWER_MODAL_CALLBACK
    assert "in words instead of deciding it" in json.dumps(view)
    other_view = _open_answer_instead(bot, approval_id, user=SECOND_APPROVER)  # opened too, submitted too late
    assert bot.submit_answer(approval_id, user=APPROVER, answer=WORDS, view=view).status == 200

    answered = api.get(asked["id"], wait="5s").json()
    assert (answered["status"], answered["answer"]) == ("answered", WORDS)
    assert (answered["decision"]["decision"], answered["decision"]["decided_by"]) == ("answer", APPROVER)
    bot.drain()
    shown = next(each for each in bot.approval_messages() if each["ts"] == asked["message_ts"])
    assert is_decided(shown)
    assert not _labels(shown)  # no live controls left
    text = json.dumps(shown["blocks"], ensure_ascii=False)
    assert f"Answered by <@{APPROVER}>" in text
    assert "&lt;!channel&gt;" in text  # escaped: the answer pings nobody
    assert "<!channel>" not in text

    # One answer wins: a later answer, or an approval, is told it is decided already; nothing changes.
    late = bot.submit_answer(approval_id, user=SECOND_APPROVER, answer="no, prod", view=other_view)
    assert f"Already answered by <@{APPROVER}>" in late.body
    assert bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER).status == 200
    assert api.get(asked["id"]).json()["answer"] == WORDS
    decisions = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
    assert [each.details["answer"] for each in decisions] == [WORDS]


def test_without_respond_no_answer_is_offered_and_a_forged_one_records_nothing(bot: Bot, api: ApiCaller) -> None:
    asked, message = _asked(bot, api)
    assert asked["respond"] is False
    assert approval_request.ANSWER_INSTEAD_LABEL not in _labels(message)
    approval_id = bot.approval_id(-1)
    assert bot.click(controls.ANSWER_INSTEAD.action_id, approval_id, user=APPROVER).status == 200
    _told(bot, APPROVER, "That does not fit this request")
    view = {"callback_id": ids.ANSWER_MODAL_CALLBACK, "private_metadata": "", "id": "V1", "blocks": []}
    bot.submit_answer(approval_id, user=APPROVER, answer="words", view=view)
    assert api.get(asked["id"]).json()["status"] == "pending"


def test_a_question_of_options_with_other_takes_words_that_are_none_of_its_labels(bot: Bot, api: ApiCaller) -> None:
    refused = api.ask_question(question="Which region?", other=True, options=None)
    assert refused.status_code == 422
    assert "other" in refused.text
    response = api.ask_question(other=True)  # REGION: eu-west-1 or us-east-1, asked of the requester
    assert response.status_code == 201, response.text
    assert response.json()["other"] is True
    bot.drain()
    message = bot.approval_messages()[-1]
    assert _labels(message)[:3] == ["eu-west-1", "us-east-1", questions.OTHER_LABEL]
    view = _open(bot, ids.ANSWER_OTHER_ACTION, bot.approval_id(-1), user=REQUESTER)  # Other…: the words form
    words = "ap-south-1, if it can"
    assert bot.submit_answer(bot.approval_id(-1), user=REQUESTER, answer=words, view=view).status == 200
    answered = api.get_question(response.json()["id"], wait="5s").json()
    assert (answered["status"], answered["answer"]) == ("answered", words)
    # Without ``other``, words never answer a question of options (the form is not even opened).
    plain = api.ask_question().json()
    bot.drain()
    assert questions.OTHER_LABEL not in _labels(bot.approval_messages()[-1])
    assert bot.click(ids.ANSWER_ACTION, bot.approval_id(-1), user=REQUESTER).status == 200
    _told(bot, REQUESTER, "That does not fit this request")
    assert api.get_question(plain["id"]).json()["status"] == "pending"
