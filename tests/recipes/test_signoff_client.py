"""The recipes' client (``recipes/signoff_client.py``) against a web process that refuses its first wait (429);
questions through it and through the MCP server's client (``bot.mcp.api_client``)."""

import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import redis

from bot.mcp.api_client import ApiError, SignoffApi
from bot.render import action_ids as ids
from recipes.signoff_client import ask_and_wait, ask_question_and_wait
from tests.bot.support.api_client import DEPLOY
from tests.bot.support.busy_api import approving_after_a_refusal, busy_bot
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER

WORDS = {"question": "Which region, and why?", "channel": CHANNEL, "requester": REQUESTER}


def test_a_wait_refused_with_429_is_asked_again_and_gets_the_decision(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    with busy_bot(redis_client) as bot:
        issued = bot.services.stores.api_keys.create("recipe-agent")
        assert issued is not None
        with approving_after_a_refusal(bot, caplog, "recipe-agent"):
            decided = ask_and_wait(bot.url, issued.key, {**DEPLOY, "idempotency_key": "recipe-1"}, timeout_s=30)
    assert (decided["status"], decided["decision"]["decided_by"]) == ("approved", APPROVER)


def _answer_or_approve(bot: Bot, answer: str) -> Callable[[str], Any]:
    """What the person in Slack does: a question is answered with ``answer``, an approval approved."""

    def act(approval_id: str) -> Any:
        approval = bot.services.decisions.find(approval_id)
        assert approval is not None
        if approval.request.asks:
            return bot.submit_answer(approval_id, user=REQUESTER, answer=answer)
        return bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)

    return act


def test_a_question_is_asked_again_after_a_refused_wait_and_gets_its_answer(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    with busy_bot(redis_client) as bot:
        issued = bot.services.stores.api_keys.create("recipe-agent")
        assert issued is not None
        with approving_after_a_refusal(bot, caplog, "recipe-agent", act=_answer_or_approve(bot, "eu-west-1, please")):
            answered = ask_question_and_wait(
                bot.url, issued.key, {**WORDS, "idempotency_key": "recipe-q1"}, timeout_s=30
            )
    assert (answered["kind"], answered["status"], answered["answer"]) == ("question", "answered", "eu-west-1, please")
    assert answered["answered_by"] == REQUESTER


def test_a_question_nobody_answers_in_time_is_withdrawn_and_so_is_one_through_the_mcp_client(
    bot: Bot, api_key: str
) -> None:
    withdrawn = ask_question_and_wait(bot.url, api_key, WORDS, timeout_s=0)
    assert (withdrawn["kind"], withdrawn["status"], withdrawn["answer"]) == ("question", "cancelled", None)

    api = SignoffApi(bot.url, api_key)
    asked = api.ask_question({**WORDS, "options": ["a", "b"]})
    assert (api.wait(asked["id"], wait_s=0, kind="question")["status"]) == "pending"
    with pytest.raises(ApiError) as not_an_approval:
        api.wait(asked["id"], wait_s=0)
    assert not_an_approval.value.status == 404
    assert api.cancel(asked["id"], kind="question")["status"] == "cancelled"
    assert api.cancel(asked["id"], kind="question")["status"] == "cancelled"  # a second withdrawal reads it


class _ActsBeforeWithdrawing(urllib.request.BaseHandler):
    """Lets the person act as the client's withdrawal is on its way: they answered just before it arrived."""

    def __init__(self, act: Callable[[], Any]) -> None:
        self.act = act

    def http_request(self, request: urllib.request.Request) -> urllib.request.Request:
        if request.get_method() == "POST" and request.full_url.endswith("/cancel"):
            self.act()
        return request


@contextmanager
def _acting_before_withdrawals(act: Callable[[], Any]) -> Iterator[None]:
    urllib.request.install_opener(urllib.request.build_opener(_ActsBeforeWithdrawing(act)))
    try:
        yield
    finally:
        urllib.request.install_opener(None)  # None: urlopen makes its own opener again


def test_an_answer_given_as_the_wait_runs_out_is_returned_not_raised_as_a_refused_withdrawal(
    bot: Bot, api_key: str
) -> None:
    def answer_it() -> None:
        bot.drain()
        assert bot.submit_answer(bot.approval_id(-1), user=REQUESTER, answer="eu-west-1").status == 200

    with _acting_before_withdrawals(answer_it):  # the wait ran out (timeout 0): the answer beat the withdrawal
        answered = ask_question_and_wait(bot.url, api_key, WORDS, timeout_s=0)
    assert (answered["status"], answered["answer"], answered["answered_by"]) == ("answered", "eu-west-1", REQUESTER)
