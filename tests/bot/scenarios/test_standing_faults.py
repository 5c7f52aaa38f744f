"""What a rule or a standing approval must never answer for a person: a call that may have run already (the
worker died inside it), a rule whose deciders changed since the grant, an HTTP API client's call, a call whose
input was shortened to be stored; and a corrupt grant record blinds nothing."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis

from agent import Agent
from bot.render import action_ids as ids
from bot.store import keys
from state import SessionStore
from tests.agent.support import WorkerDied
from tests.bot.support.agents import counting_agent, one_gated_call
from tests.bot.support.api_client import api_caller
from tests.bot.support.grant_clicks import approve_and_allow, grant_buttons
from tests.bot.support.harness import Bot, is_decided, running_bot, take_over
from tests.bot.support.people import APPROVER, CHANNEL, SECOND_APPROVER


def _dying_once(runs: dict[str, int], client: redis.Redis) -> Any:
    def factory(*, session_id: str, store: SessionStore) -> Agent:
        agent = counting_agent(session_id=session_id, store=store, client=client)

        def deploy(service: str) -> str:
            runs["n"] += 1
            if runs["n"] == 1:
                raise WorkerDied
            return f"deployed {service}"

        agent.tools["deploy"].func = deploy
        return agent

    return factory


def _policy(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.yml"
    path.write_text(text)
    return path


GRANTING = "rules:\n  - {name: deploys, match: {tools: [deploy]}, grants: {durations: [1h]}}\n"


@contextmanager
def _granted(redis_client: redis.Redis, tmp_path: Path, payload: Any = "api") -> Iterator[Bot]:
    """A bot whose rule offers grants, with one made for the gated ``deploy`` of ``payload`` (when it is offered)."""
    factory = one_gated_call("deploy", payload)
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path, GRANTING)) as bot:
        bot.mention("deploy")
        bot.drain()
        if ids.APPROVE_AND_ALLOW_ACTION in str(bot.approval_messages()[-1]["blocks"]):
            _approve_and_allow(bot)
            bot.drain()
        yield bot


def _approve_and_allow(bot: Bot, *, user: str = APPROVER) -> None:
    [button] = grant_buttons(bot.approval_messages()[-1])
    approve_and_allow(bot, button["value"], user=user)


@pytest.mark.parametrize(
    "policy",
    [
        "rules:\n  - {name: deploys, match: {tools: [deploy]}, tier: allow}\n",
        "rules:\n  - {name: deploys, match: {tools: [deploy]}, grants: {durations: [1h]}}\n",
    ],
    ids=["allow-rule", "grant"],
)
def test_a_call_that_may_have_run_is_asked_again_never_answered_by_a_rule_or_a_grant(
    redis_client: redis.Redis, tmp_path: Path, policy: str
) -> None:
    runs = {"n": 0}
    factory = _dying_once(runs, redis_client)
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path, policy)) as bot:
        bot.mention("deploy api")
        if "grants" in policy:
            bot.drain()
            _approve_and_allow(bot)
        with pytest.raises(WorkerDied):
            bot.drain()
        take_over(bot.services.worker(claim_idle_ms=0))  # another worker takes the job over
        bot.drain()
        rerun = bot.approval_messages()[-1]
        assert not is_decided(rerun), "the question whether to run again was answered for a person"
        assert ids.APPROVE_AND_ALLOW_ACTION not in str(rerun["blocks"])
        assert runs["n"] == 1


def test_a_grant_covers_nothing_once_the_rules_deciders_change(redis_client: redis.Redis, tmp_path: Path) -> None:
    before = "rules:\n  - {name: deploys, match: {tools: [deploy]}, grants: {durations: [1h]}}\n"
    after = (
        "rules:\n  - {name: deploys, match: {tools: [deploy]}, grants: {durations: [1h]},"
        f" approvers: {{users: [{SECOND_APPROVER}]}}}}\n"
    )
    factory = one_gated_call("deploy", "api")
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path, before)) as bot:
        bot.mention("deploy")
        bot.drain()
        _approve_and_allow(bot)
        bot.drain()
        bot.mention("deploy")
        bot.drain()
        assert is_decided(bot.approval_messages()[-1])  # covered, under the rule as it was
    with running_bot(redis_client, agent_factory=factory, policy_path=_policy(tmp_path, after)) as bot:
        bot.mention("deploy")
        bot.drain()
        assert not is_decided(bot.approval_messages()[-1]), "a grant outlived the deciders it was made under"


def test_a_grant_made_in_slack_never_covers_an_api_clients_call(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _granted(redis_client, tmp_path) as bot, api_caller(bot.services, bot.url) as api:
        asked = api.ask(tool="deploy", input={"payload": "api"}, channel=CHANNEL, requester="U0REQUESTER")
        assert asked.json()["status"] == "pending"


def test_a_shortened_input_offers_no_standing_approval(redis_client: redis.Redis, tmp_path: Path) -> None:
    huge = "x" * 40_000  # stored shortened: a grant could only cover the shortened form, another call
    with _granted(redis_client, tmp_path, huge) as bot:
        message = bot.approval_messages()[-1]
        assert ids.APPROVE_ACTION in str(message["blocks"])
        assert ids.APPROVE_AND_ALLOW_ACTION not in str(message["blocks"])
        assert bot.services.stores.grants.live(now_ms=0) == []


def test_a_corrupt_grant_record_covers_nothing_and_blinds_nothing(redis_client: redis.Redis, tmp_path: Path) -> None:
    with _granted(redis_client, tmp_path) as bot:
        record_key = keys.grants("T0TEST", CHANNEL)
        fields: list[bytes] = redis_client.hkeys(record_key)  # type: ignore[assignment]
        [grant_id] = [field for field in fields if not field.endswith(b":uses")]
        redis_client.hset(record_key, grant_id, "not json")
        bot.mention("deploy")
        bot.drain()
        asked = bot.approval_messages()[-1]
        assert not is_decided(asked)  # asked, as if there were no grant; the round was published
        assert ids.APPROVE_ACTION in str(asked["blocks"])
