"""Requests that arrive while Redis is down: a clear "not recorded" answer, never a 500, and nothing recorded."""

import json
from typing import Any

import httpx
import redis

from bot.render import action_ids as ids
from bot.services import connect_redis
from loopback_slack import slack_requests
from state import RedisServer
from tests.bot.support import shards
from tests.bot.support.harness import demo_factory, running_bot
from tests.bot.support.lost_clicks import assert_it_wrote_nothing_and_the_next_click_decides, ephemeral_answers
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.outage import redis_stopped

_NOT_RECORDED = "Not recorded"


def _bot_client(server: RedisServer) -> redis.Redis:
    # The bot's own client (in-place retries), with a budget shorter than the outage.
    return connect_redis(server.url, retry_s=0.3)


def test_a_click_while_redis_is_down_is_told_it_was_not_recorded_and_the_next_one_works(
    own_redis: RedisServer,
) -> None:
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        approval_id, _session_id = bot.ask()

        with redis_stopped(own_redis):
            click = bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
            assert click.status == 200
            assert click.body == ""
            [said] = bot.slack.wait_for("response_url")
            assert _NOT_RECORDED in said.args["text"]
            assert said.args["response_type"] == "ephemeral"

        assert_it_wrote_nothing_and_the_next_click_decides(bot, approval_id)
        assert bot.texts_posted()[-1] == "checkout: 3 replicas restarted"
        assert len(ephemeral_answers(bot)) == 1


def test_a_command_a_modal_and_an_event_while_redis_is_down_get_answers_not_errors(own_redis: RedisServer) -> None:
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        approval_id, _session_id = bot.ask()
        opened = bot.open_deny(approval_id, user=APPROVER)
        jobs_before = shards.jobs_queued(bot.services.stores.redis)

        with redis_stopped(own_redis):
            command = slack_requests.slash_command(
                command=ids.AGENT_COMMAND,
                user_id=REQUESTER,
                channel_id=CHANNEL,
                text="restart search",
                response_url=bot.slack.response_url(channel=CHANNEL, user=REQUESTER),
            )
            answer = bot.poster.post_command(command)
            assert (answer.status, answer.body) == (200, "")
            [said] = bot.slack.wait_for("response_url")
            assert _NOT_RECORDED in said.args["text"]

            modal = bot.submit_deny(approval_id, user=APPROVER, reason="not now", view=opened)
            assert modal.status == 200
            assert _NOT_RECORDED in json.dumps(modal.json()["errors"])

            mention = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart search")
            event = bot.poster.post_event(mention)
            assert event.status == 503  # Slack delivers the event again later
            assert _NOT_RECORDED in event.json()["error"]

        assert shards.jobs_queued(bot.services.stores.redis) == jobs_before
        approval = bot.services.stores.approvals.find(approval_id)
        assert approval is not None
        assert approval.decision is None
        assert bot.poster.post_event(mention, retry_num=1).status == 200  # Slack's redelivery, Redis back
        bot.drain()
        assert len(bot.approval_messages()) == 2


def _input_blocks(view: dict[str, Any]) -> set[str]:
    return {block["block_id"] for block in view["blocks"] if block["type"] == "input"}


def test_an_answer_form_submitted_while_redis_is_down_is_told_so_under_its_own_field(own_redis: RedisServer) -> None:
    """Slack shows a view submission's errors only under the view's own input blocks (the deny form's are not there)."""
    form = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
    with running_bot(_bot_client(own_redis), agent_factory=demo_factory) as bot:
        api = bot.services.stores.api_keys.create("ci-runner")
        assert api is not None
        headers = {"Authorization": f"Bearer {api.key}"}
        views = []
        for asked in ({"question": "Why?"}, {"question": "How many?", "schema": form}):
            body = {**asked, "channel": CHANNEL, "requester": REQUESTER}
            assert httpx.post(f"{bot.url}/v1/questions", json=body, headers=headers).status_code == 201
            bot.drain()
            views.append(bot.open_answer(bot.approval_id(-1), user=REQUESTER))
        words, filled_in = views

        with redis_stopped(own_redis):
            typed = bot.submit_answer("", user=REQUESTER, answer="because", view=words)
            filled = bot.submit_answer_form(filled_in, user=REQUESTER, changes={"replicas": "3"})
            for view, modal in ((words, typed), (filled_in, filled)):
                assert modal.status == 200
                errors = modal.json()["errors"]
                assert _NOT_RECORDED in json.dumps(errors)
                assert set(errors) <= _input_blocks(view), (errors, _input_blocks(view))
