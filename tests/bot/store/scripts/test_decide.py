"""The decide script's attempt, one argument per field, reads as the JSON attempt it replaced did.

Flags come as ``"1"`` or ``"0"`` (a ``"0"`` is true in Lua unless compared), numbers as digits, lists as JSON and
an origin's missing fields as ``""``: each test fails if the script read one of them as the string it arrives as.
"""

from datetime import UTC, datetime
from typing import Any, cast

import pytest
import redis

from bot.domain.records import ApprovalRequest, Decision, PolicySummary, Question, QuestionOption
from bot.domain.status import Status
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.approvals.decide_call import Attempt, DecideResult, keys_and_args
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox, update_approval
from bot.store.scripts.decide import DECIDE, TOO_LATE
from state.text import as_text
from tests.bot.support.approval_requests import SID, an_approval_request
from tests.redis_targets import contents, every_key, on_both

pytest_generate_tests = on_both

TEAM, CHANNEL, POSTED = "T0TEST", "C0OPS", "1700000001.000100"
SHARD = keys.shard_of(SID)


def _origin(**changes: str) -> dict[str, str]:
    """A click on the request's own message, from its own workspace: the origin ``Origin.fields`` sends."""
    fields = {"surface": "message", "team_id": TEAM, "user_team_id": TEAM, "channel_id": CHANNEL, "ts": POSTED}
    return {**fields, "thread_ts": "", **changes}


def _opened(redis_client: redis.Redis, **changes: Any) -> ApprovalRequest:
    """A request posted in #ops (its message's ts known), whose channel's members are cached."""
    request = an_approval_request(message_ts=POSTED, **changes)
    ApprovalStore(redis_client).open_round(session_id=SID, version=4, requests=[request])
    redis_client.sadd(keys.channel_members(TEAM, CHANNEL, shard=SHARD), "U0A", "U0B", "U0REQUESTER")
    return request


def _person(request: ApprovalRequest, kind: str, user: str, **changes: Any) -> Attempt:
    fields: dict[str, Any] = {"origin": _origin()} | changes
    return Attempt(SID, request.approval_id, kind, user, TEAM, CHANNEL, **fields)


def _reply(redis_client: redis.Redis, attempt: Attempt, *, answer_by_ms: int = 0) -> list[bytes]:
    """The script's reply to ``attempt`` (its own call: ``answer_by_ms`` as given, not the client's timeout)."""
    decision = None
    if not attempt.check:
        decision = Decision(decision=attempt.kind, decided_by=attempt.user, decided_at=datetime.now(UTC))
    request_keys, args = keys_and_args(
        attempt,
        decision=decision,
        update=Outbox.script_entry(update_approval(SID, attempt.approval_id), due_ms=0),
        audit=Audit(redis_client).script_events(("vote", "decision"), input_digest=None, edited_by=None, answer=None),
        answer_by_ms=answer_by_ms,
    )
    reply: list[bytes] = redis_client.eval(DECIDE.text, len(request_keys), *request_keys, *args)
    return reply


def _decide(redis_client: redis.Redis, attempt: Attempt, *, answer_by_ms: int = 0) -> DecideResult:
    return DecideResult.from_reply(attempt, _reply(redis_client, attempt, answer_by_ms=answer_by_ms))


def test_flags_sent_as_0_are_false(redis_client: redis.Redis) -> None:
    request = _opened(redis_client, policy=PolicySummary(name="default", reason_required_on_deny=True))

    denied = _decide(redis_client, _person(request, "deny", "U0A"))
    approved = _decide(redis_client, _person(request, "approve", "U0A"))

    assert denied.status is Status.REASON_REQUIRED, "reason_given '0': no reason given"
    # check '0' (recorded, not only judged), trust '0' (not offered here), replay '0' (no signature key to set)
    assert approved.status is Status.DECIDED
    assert approved.request_json == "", "with_request '0': a decided click is answered without the request"


def test_flags_sent_as_1_are_true(redis_client: redis.Redis) -> None:
    request = _opened(redis_client)

    trusting = _decide(redis_client, _person(request, "approve", "U0A", trust=True))
    checked = _decide(redis_client, _person(request, "approve", "U0A", check=True))
    decided = _decide(redis_client, _person(request, "approve", "U0A", with_request=True))

    assert trusting.status is Status.WRONG_ACTION, "trust '1' where the request offers none"
    assert checked.status is Status.ALLOWED
    assert decided.status is Status.DECIDED
    assert decided.request is not None
    assert decided.request.approval_id == request.approval_id


def test_the_clock_s_checks_0_skips_a_person_s_rights_and_a_person_s_checks_1_applies_them(
    redis_client: redis.Redis,
) -> None:
    request = _opened(redis_client, policy=PolicySummary(name="default", approver_users=("U0LEAD",)))

    refused = _decide(redis_client, _person(request, "approve", "U0A"))
    by_clock = _decide(redis_client, _person(request, "approve", "signoff:expiry", origin=None))

    assert refused.status is Status.NOT_AN_APPROVER
    assert by_clock.status is Status.DECIDED


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        (_origin(user_team_id=""), Status.WRONG_WORKSPACE),
        (_origin(team_id=""), Status.WRONG_WORKSPACE),
        (_origin(ts="", thread_ts=""), Status.WRONG_PLACE),
        (_origin(surface="reply", ts=""), Status.WRONG_PLACE),
        (_origin(thread_ts=SID.rsplit(":", 1)[1]), Status.DECIDED),
    ],
    ids=["no-user-team", "no-team", "message-without-thread", "reply-without-ts", "in-its-thread"],
)
def test_an_origin_s_empty_field_matches_none_of_the_request_s(
    redis_client: redis.Redis, origin: dict[str, str], status: Status
) -> None:
    # Posted, its message's ts not recorded yet: a click is matched by its thread.
    request = an_approval_request()
    ApprovalStore(redis_client).open_round(session_id=SID, version=4, requests=[request])
    redis_client.sadd(keys.channel_members(TEAM, CHANNEL, shard=SHARD), "U0A")

    assert _decide(redis_client, _person(request, "approve", "U0A", origin=origin)).status is status


def test_a_quorum_sent_as_digits_counts_votes(redis_client: redis.Redis) -> None:
    request = _opened(redis_client)

    first = _decide(redis_client, _person(request, "approve", "U0A", quorum=2))
    second = _decide(redis_client, _person(request, "approve", "U0B", quorum=2))

    assert (first.status, first.votes) == (Status.VOTE, 1)
    assert second.status is Status.DECIDED
    assert second.decision is not None
    assert second.decision.approved_by == ("U0A", "U0B")


def test_an_answer_by_time_sent_as_digits_is_compared_with_redis_time(redis_client: redis.Redis) -> None:
    request = _opened(redis_client)
    attempt = _person(request, "approve", "U0A")

    late = _reply(redis_client, attempt, answer_by_ms=1)
    in_time = _decide(redis_client, attempt, answer_by_ms=int(datetime.now(UTC).timestamp() * 1000) + 60_000)

    assert late[0].decode() == TOO_LATE
    assert in_time.status is Status.DECIDED


def test_a_replay_s_key_follows_the_groups_sent_as_json_and_keeps_its_ttl(redis_client: redis.Redis) -> None:
    request = _opened(redis_client)
    attempt = _person(request, "approve", "U0A", groups=("S0ONE", "S0TWO"), replay="v0=abc", replay_ttl_s=77)

    assert _decide(redis_client, attempt).status is Status.DECIDED
    assert 0 < redis_client.ttl(keys.seen_signature("v0=abc", shard=SHARD)) <= 77
    assert not redis_client.exists(keys.usergroup(TEAM, "S0TWO", shard=SHARD)), "no group's key took the mark"
    assert _decide(redis_client, attempt).status is Status.REPLAYED


def test_choices_sent_as_json_pick_their_labels_and_none_picks_nothing(redis_client: redis.Redis) -> None:
    options = tuple(QuestionOption(label=label) for label in ("red", "green", "blue"))
    request = _opened(redis_client, question=Question(text="Which?", kind="choice", options=options))

    none = _decide(redis_client, _person(request, "answer", "U0A", answer_kind="choice"))
    picked = _decide(redis_client, _person(request, "answer", "U0A", answer_kind="choice", choices=(2,)))

    assert none.status is Status.WRONG_ACTION
    assert picked.status is Status.DECIDED
    assert picked.decision is not None
    assert picked.decision.answer == "blue"


def test_a_check_writes_nothing(redis_client: redis.Redis) -> None:
    request = _opened(redis_client)
    before = {key: contents(redis_client, key) for key in every_key(redis_client)}

    judged = [
        _decide(redis_client, _person(request, kind, "U0A", check=True)).status
        for kind in ("approve", "deny", "decide", "discuss")
    ]
    by_clock = _decide(redis_client, _person(request, "approve", "signoff:expiry", origin=None, check=True))

    assert judged == [Status.ALLOWED] * 4
    assert by_clock.status is Status.WRONG_ACTION
    assert {key: contents(redis_client, key) for key in every_key(redis_client)} == before


def _recent_by(redis_client: redis.Redis) -> list[str]:
    """The lists the shard's recent-by index holds a decision in (each member's prefix: its stamp and id cut)."""
    members = cast(list[bytes], redis_client.zrange(keys.recent_by(SHARD), 0, -1))
    return sorted(as_text(member).rsplit(":", 2)[0] for member in members)


def test_a_decision_is_listed_once_for_its_workspace_and_each_person_it_concerns(redis_client: redis.Redis) -> None:
    request = _opened(redis_client, policy=PolicySummary(name="default", allow_self_approval=True))
    _decide(redis_client, _person(request, "approve", "U0A", quorum=3))
    _decide(redis_client, _person(request, "approve", "U0REQUESTER", quorum=3))

    decided = _decide(redis_client, _person(request, "approve", "U0B", quorum=3))

    assert decided.status is Status.DECIDED
    assert _recent_by(redis_client) == ["p:T0TEST:U0A", "p:T0TEST:U0B", "p:T0TEST:U0REQUESTER", "w:T0TEST"]


def _decision_event(redis_client: redis.Redis) -> dict[str, Any]:
    [event] = [entry for entry in Audit(redis_client).entries() if entry.event == "decision"]
    return event.details


def test_the_audit_names_the_input_approved_and_its_editor(redis_client: redis.Redis) -> None:
    request = _opened(redis_client, input_digest="d-original")
    redis_client.hset(
        keys.approval_edit(SID, request.approval_id), mapping={"digest": "d-edited", "by": "U0B", "input": "{}"}
    )

    decided = _decide(redis_client, _person(request, "approve", "U0A", shown="d-edited"))

    assert decided.status is Status.DECIDED
    assert {name: _decision_event(redis_client)[name] for name in ("input_digest", "edited_by")} == {
        "input_digest": "d-edited",
        "edited_by": "U0B",
    }


def test_the_audit_of_an_unedited_approval_names_its_input_and_no_editor(redis_client: redis.Redis) -> None:
    request = _opened(redis_client, input_digest="d-original")

    _decide(redis_client, _person(request, "approve", "U0A", shown="d-original"))

    details = _decision_event(redis_client)
    assert (details["input_digest"], details["edited_by"]) == ("d-original", None)


def test_the_audit_of_a_denial_is_added_as_it_came(redis_client: redis.Redis) -> None:
    request = _opened(redis_client, input_digest="d-original")

    _decide(redis_client, _person(request, "deny", "U0A"))

    details = _decision_event(redis_client)
    assert (details["input_digest"], details["edited_by"], details["answer"]) == (None, None, None)
