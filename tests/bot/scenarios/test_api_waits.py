"""Long-polls are bounded per web process (``API_MAX_WAITS``): one over the bound is refused at once with 429 and
``Retry-After``, Slack's clicks are still answered, and a wait that ends (its client gone or not) frees its slot."""

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import redis

from bot.render import action_ids as ids
from tests.bot.support.api_client import ApiCaller, api_caller, until_waits_held
from tests.bot.support.harness import Bot, demo_factory, running_bot
from tests.bot.support.people import APPROVER


def _asked(bot: Bot, api: ApiCaller, **fields: Any) -> str:
    answer = api.ask(**fields)
    assert answer.status_code == 201, answer.text
    bot.drain()
    return str(answer.json()["id"])


def _assert_refused(answer: httpx.Response) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.headers["Retry-After"] == "1"
    error = answer.json()["error"]
    assert (error["code"], error["field"]) == ("busy", "wait")


def test_a_long_poll_over_the_bound_is_refused_at_once_and_a_click_still_lands(redis_client: redis.Redis) -> None:
    with (
        running_bot(redis_client, agent_factory=demo_factory, api_max_waits=2) as bot,
        api_caller(bot.services, bot.url) as api,
        ThreadPoolExecutor(2) as pool,
    ):
        request_id = _asked(bot, api)
        waiting = [pool.submit(api.get, request_id, wait="30s") for _ in range(2)]
        until_waits_held(bot.services, 2)

        started = time.monotonic()
        third = api.get(request_id, wait="30s")
        assert time.monotonic() - started < 5  # refused at once, not queued behind the two (their waits: 30 s)
        _assert_refused(third)
        assert api.get(request_id).json()["status"] == "pending"  # a read without wait is never refused
        assert not any(future.done() for future in waiting)

        started = time.monotonic()
        clicked = bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
        assert clicked.status == 200
        assert time.monotonic() - started < 3  # within Slack's 3 s (without the bound: after a wait ends, 30 s)
        answers = [future.result(timeout=10) for future in waiting]
        assert [(a.status_code, a.json()["decision"]["decided_by"]) for a in answers] == [(200, APPROVER)] * 2

        until_waits_held(bot.services, 0)
        other = _asked(bot, api, idempotency_key="other")
        held = [pool.submit(api.get, other, wait="30s") for _ in range(2)]  # both slots taken again
        until_waits_held(bot.services, 2)
        decided = api.get(request_id, wait="30s")  # decided already: answered, holding no slot
        assert (decided.status_code, decided.json()["status"]) == (200, "approved")
        _assert_refused(api.get(other, wait="30s"))
        bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
        assert [future.result(timeout=10).json()["status"] for future in held] == ["approved"] * 2


def test_a_client_that_hangs_up_frees_its_slot_when_its_wait_ends(redis_client: redis.Redis) -> None:
    with (
        running_bot(redis_client, agent_factory=demo_factory, api_max_waits=2) as bot,
        api_caller(bot.services, bot.url) as api,
    ):
        request_id = _asked(bot, api)
        for _ in range(2):  # each gives up after 0.3 s and closes its connection; the server waits on for 2 s
            with httpx.Client(base_url=bot.url, headers=api.http.headers, timeout=0.3) as impatient:
                try:
                    impatient.get(f"/v1/approvals/{request_id}", params={"wait": "2s"})
                except httpx.ReadTimeout:
                    pass
                else:
                    raise AssertionError("the wait answered before the client hung up")
        assert bot.services.api_waits.in_use == 2  # the server notices a hang-up only when it answers
        _assert_refused(api.get(request_id, wait="5s"))

        until_waits_held(bot.services, 0)  # both waits ended: both slots are back
        with ThreadPoolExecutor(2) as pool:
            again = [pool.submit(api.get, request_id, wait="1s") for _ in range(2)]
            assert [(a.result(timeout=10).status_code, a.result().json()["status"]) for a in again] == [
                (200, "pending")
            ] * 2
