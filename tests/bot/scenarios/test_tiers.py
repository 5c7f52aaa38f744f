"""Rules on a call's arguments (CEL conditions) and risk tiers, end to end: the agent asks, the rule decides by
itself where its tier says so (``deny``: refused and never asked; ``allow``: runs without asking), both audited
and shown in the thread; everything else is asked as before. Through the HTTP API too."""

from collections.abc import Iterator

import pytest
import redis
from prometheus_client import REGISTRY

from bot.render import action_ids as ids
from tests.bot.support.api_client import api_caller
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL
from tests.bot.support.policy_files import POLICIES


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[Bot]:
    # Scaling past 10 replicas is refused, up to 3 runs unasked, anything between is asked.
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=POLICIES / "tiers.yml") as running:
        yield running


def _ask(bot: Bot, text: str) -> tuple[dict[str, object], list[str]]:
    """Mention the bot; the approval message and the thread's texts once the worker settled."""
    bot.mention(text)
    bot.drain()
    message = bot.approval_messages()[-1]
    return message, bot.thread_texts(str(message["thread_ts"]))


def _decisions_counted(outcome: str, source: str) -> float:
    return REGISTRY.get_sample_value("signoff_decisions_total", {"outcome": outcome, "source": source}) or 0.0


def test_a_deny_rule_refuses_the_call_without_asking_anyone(bot: Bot) -> None:
    counted = _decisions_counted("deny", "policy")
    message, thread = _ask(bot, "scale checkout to 12")
    assert _decisions_counted("deny", "policy") == counted + 1
    assert is_decided(message), "a refused call is posted decided, never with buttons"
    assert "Refused by rule `big-scale`" in str(message["blocks"])
    assert "capacity review" in str(message["blocks"])
    assert "scaled" not in thread[-1]
    assert "Past 10 replicas needs a capacity review." in thread[-1]
    [decision] = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
    assert decision.actor == "policy:big-scale"
    assert (decision.details["source"], decision.details["rule"], decision.details["decision"]) == (
        "policy",
        "big-scale",
        "deny",
    )
    clicked = bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER)
    assert clicked.status == 200
    bot.drain()
    assert "Already decided" in bot.ephemeral_texts(APPROVER)[-1]
    assert "scaled" not in bot.thread_texts(str(message["thread_ts"]))[-1]


def test_an_allow_rule_runs_the_call_without_asking(bot: Bot) -> None:
    counted = _decisions_counted("approve", "policy")
    message, thread = _ask(bot, "scale checkout to 2")
    assert _decisions_counted("approve", "policy") == counted + 1
    assert is_decided(message)
    assert "Allowed without asking by rule `small-scale`" in str(message["blocks"])
    assert thread[-1] == "checkout: scaled from 3 to 2 replicas"
    assert [entry.actor for entry in bot.services.stores.audit.entries() if entry.event == "decision"] == [
        "policy:small-scale"
    ]


def test_a_call_no_condition_decides_is_asked_as_before(bot: Bot) -> None:
    message, _ = _ask(bot, "scale checkout to 5")
    assert not is_decided(message)
    assert "scaling" in str(message["blocks"])
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER).status == 200
    bot.drain()
    assert bot.thread_texts(str(message["thread_ts"]))[-1] == "checkout: scaled from 3 to 5 replicas"


def test_through_the_api_a_rule_answers_at_once_and_a_condition_without_an_answer_is_read_strictly(
    bot: Bot,
) -> None:
    with api_caller(bot.services, bot.url) as api:
        allowed = api.ask(tool="scale_service", input={"service": "api", "replicas": 2}, channel=CHANNEL)
        assert allowed.status_code == 201, allowed.text
        assert allowed.json()["status"] == "approved"
        assert allowed.json()["decision"]["by_rule"] == "small-scale"
        assert allowed.json()["decision"]["decided_by"] is None
        # "many" is no number: neither condition has an answer. The allow rule does not apply; the deny rule does.
        unclear = api.ask(tool="scale_service", input={"service": "api", "replicas": "many"}, channel=CHANNEL)
        assert (unclear.json()["status"], unclear.json()["decision"]["by_rule"]) == ("denied", "big-scale")
        assert unclear.json()["decision"]["reason"] == "Past 10 replicas needs a capacity review."
        asked = api.ask(tool="scale_service", input={"service": "api", "replicas": 5}, channel=CHANNEL)
        assert asked.json()["status"] == "pending"
        bot.drain()
        assert api.get(allowed.json()["id"]).json()["status"] == "approved"


def test_a_request_its_rule_decides_is_never_decided_by_a_person_even_if_the_rules_decision_was_lost(
    bot: Bot, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A fault: the rule's own decision is not written with the request (it always is; the decide script must
    # refuse a person anyway, by the tier stored in the request's terms).
    monkeypatch.setattr(bot.services.decisions, "by_rule_in", lambda *_args: None)
    message, _ = _ask(bot, "scale checkout to 12")
    assert bot.click(ids.APPROVE_ACTION, bot.approval_id(-1), user=APPROVER).status == 200
    bot.drain()
    assert "You can't decide this request" in bot.ephemeral_texts(APPROVER)[-1]
    assert bot.services.stores.approvals.find(bot.approval_id(-1)).decision is None  # type: ignore[union-attr]
    assert "scaled" not in bot.thread_texts(str(message["thread_ts"]))[-1]
