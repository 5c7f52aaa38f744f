"""An answer is posted in the request's thread once given, once only, whatever answered it (words, an option, several
options, a form, an approval's "Answer instead"), escaped with hidden characters shown.

Before, the answer showed on the message only: nothing was posted in the thread.
"""

import time
from collections.abc import Iterator
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.domain.workspaces import OneWorkspace
from bot.render import controls
from bot.slack.outbound.delivery import Deliverer
from bot.store.queues.outbox import Outbox
from tests.bot.support.api_client import ApiCaller, api_caller
from tests.bot.support.choices import click_option, send_chosen
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER

FORM = {"type": "object", "properties": {"replicas": {"type": "integer"}}, "required": ["replicas"]}


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url) as caller:
        yield caller


def _question(bot: Bot, api: ApiCaller, **fields: Any) -> tuple[str, dict[str, Any]]:
    response = api.ask_question({"channel": CHANNEL, "requester": REQUESTER, **fields})
    assert response.status_code == 201, response.text
    bot.drain()
    ts = api.get_question(response.json()["id"]).json()["message_ts"]
    return ts, next(each for each in bot.approval_messages() if each["ts"] == ts)


def _replies(bot: Bot, ts: str) -> list[str]:
    return [str(each.get("text", "")) for each in bot.slack.messages(CHANNEL, ts)[1:]]


def test_every_kind_of_answer_is_posted_in_the_thread_once_escaped(bot: Bot, api: ApiCaller) -> None:
    words_ts, _ = _question(bot, api, question="Anything to add?")
    assert bot.submit_answer(bot.approval_id(-1), user=REQUESTER, answer="ping <!channel>\u202egpj.sh").status == 200
    one_ts, one = _question(bot, api, question="Which region?", options=["eu-west-1", "us-east-1"])
    assert click_option(bot, one, 1, user=REQUESTER).status == 200
    several_ts, several = _question(bot, api, question="Who?", options=["ops", "sre", "dev"], multiple=True)
    assert send_chosen(bot, several, ["2", "0"], user=REQUESTER).status == 200
    form_ts, _ = _question(bot, api, question="How many?", schema=FORM)
    view = bot.open_answer(bot.approval_id(-1), user=REQUESTER)
    assert bot.submit_answer_form(view, user=REQUESTER, changes={"replicas": "3"}).status == 200
    approval = api.ask(respond=True).json()
    bot.drain()
    approval_ts = api.get(approval["id"]).json()["message_ts"]
    opened = len(bot.slack.calls("views.open"))
    assert bot.click(controls.ANSWER_INSTEAD.action_id, bot.approval_id(-1), user=APPROVER).status == 200
    instead = bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"]
    bot.submit_answer(bot.approval_id(-1), user=APPROVER, answer="use staging", view=instead)
    bot.drain()
    bot.drain()  # a second pass posts nothing more

    [words] = _replies(bot, words_ts)
    assert f"<@{REQUESTER}> answered the question `Anything to add?`" in words
    assert "> ping &lt;!channel&gt;⟨U+202E⟩gpj.sh" in words
    assert "<!channel>" not in words
    [one_reply] = _replies(bot, one_ts)
    assert "> us-east-1" in one_reply
    [several_reply] = _replies(bot, several_ts)
    assert "> • ops\n> • dev" in several_reply
    [form_reply] = _replies(bot, form_ts)
    assert '"replicas": 3' in form_reply
    [instead_reply] = _replies(bot, approval_ts)
    assert f"<@{APPROVER}> answered the request `restart_service`" in instead_reply
    assert "> use staging" in instead_reply


def test_an_answer_whose_post_slack_answered_too_late_is_not_posted_twice(bot: Bot, api: ApiCaller) -> None:
    ts, _ = _question(bot, api, question="Anything to add?")
    assert bot.submit_answer(bot.approval_id(-1), user=REQUESTER, answer="ship it").status == 200
    bot.slack.slow_next("chat.postMessage", 1.5)
    _deliverer(bot, after_s=0, timeout=1).deliver_due()  # Slack posts it, the client gives up: retried
    assert len(_replies(bot, ts)) == 1
    _deliverer(bot, after_s=60, timeout=5).deliver_due()  # the retry finds the copy posted, and keeps it
    bot.drain()
    [reply] = _replies(bot, ts)
    assert "> ship it" in reply
    assert bot.services.stores.outbox.pending() == 0


def _deliverer(bot: Bot, *, after_s: float, timeout: int) -> Deliverer:
    """Another dispatcher, ``after_s`` later (a lease held before has run out), whose client waits ``timeout``."""
    return Deliverer(
        clients=OneWorkspace(WebClient(token=bot.slack.token, base_url=bot.slack.url, timeout=timeout)),
        outbox=Outbox(bot.services.stores.redis, clock=lambda: time.time() + after_s),
        approvals=bot.services.stores.approvals,
        redis=bot.services.stores.redis,
    )
