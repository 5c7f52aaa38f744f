"""The one judge of who may do what to a request, the decide script, on every rule and asked by every path.

Each case of a matrix (policy, person, origin, kind) gets a fresh approval, posted and copied by DM. It is checked
first, as everything that decides nothing asks (``DecisionService.find_checked``: the script judging only), then
decided for real (``decide``). Both must give what the rules say (``_the_rules``: docs/policy.md's, as a table of
answers), the check allowing where the decision is recorded, or where only a deny's reason is missing (its form asks
for one). Membership and user groups come from the loopback Slack through a real ``Directory`` (cold caches, then
warm ones).

The matrix is two products, so that it stays fast: who may decide (every approver list, self-approval and
reason flag, person and kind) on the approval's own message; and where from (every origin, with and without
``allow_external``, every person and kind) under an open and a restricted policy. Then the rules it does not reach
(tiers, quorum, decided and expired requests, edits, questions, Discuss), and each path that decides nothing
(Take, the deny, edit, answer and "allow similar" forms, Discuss, App Home) refusing what the judge refuses.
"""

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import redis
from pydantic import SecretStr

from agent.approval import input_digest
from bot.domain.edits import CallEdit
from bot.domain.records import (
    ApprovalRequest,
    ApproverSet,
    PolicySummary,
    Question,
    approval_id_for,
    session_id_for,
)
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.judge import Check
from bot.flow.outcomes import Kind
from bot.services import Services
from bot.settings import Settings
from bot.store import keys
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.outbox import Outbox, update_approval
from loopback_slack.slack_requests import TEAM_ID
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET, demo_factory
from tests.redis_targets import contents, every_key, on_both

pytest_generate_tests = on_both

CHANNEL = "C0OPS"
OTHER_CHANNEL = "C0ELSEWHERE"
OTHER_TEAM = "T0ELSEWHERE"
# The people: who each is decides which policies admit them.
APPROVER = "U0APPROVER"  # listed by name
GROUPIE = "U0GROUPIE"  # in the on-call group
BOTH = "U0BOTH"  # listed by name and in the on-call group
REQUESTER = "U0REQUESTER"  # asked; in the on-call group and listed by some policies
MEMBER = "U0MEMBER"  # in the channel, listed nowhere
STRANGER = "U0STRANGER"  # not in the channel, listed nowhere
COPIED = "U0COPIED"  # not in the channel, sent a DM copy (escalation); listed by some policies
PEOPLE = (APPROVER, GROUPIE, BOTH, REQUESTER, MEMBER, STRANGER, COPIED)
IN_CHANNEL = (APPROVER, GROUPIE, BOTH, REQUESTER, MEMBER, "U0BOT")
ONCALL, EMPTY, GONE = "S0ONCALL", "S0EMPTY", "S0GONE"  # GONE: Slack answers no_such_subteam
USERGROUPS = {ONCALL: [GROUPIE, BOTH, REQUESTER], EMPTY: []}
COPY_CHANNEL = "D0COPIED"
TOOL_INPUT = {"service": "api"}
INPUT_SCHEMA = {"type": "object", "properties": {"service": {"type": "string"}}}

# Who may decide, before the flags: name -> (users, groups, also_approvers).
APPROVERS: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[ApproverSet, ...]]] = {
    "open": ((), (), ()),
    "users": ((APPROVER, BOTH, COPIED), (), ()),
    "group": ((), (ONCALL,), ()),
    "users+also-group": ((APPROVER, BOTH, REQUESTER, COPIED), (), (ApproverSet(usergroups=(ONCALL,)),)),
    "group+also-users": ((), (ONCALL,), (ApproverSet(users=(GROUPIE, REQUESTER, COPIED)),)),
    "empty-group": ((), (EMPTY,), ()),
    "gone-group": ((APPROVER,), (GONE,), ()),
}
KINDS: tuple[tuple[Kind, str | None], ...] = (("approve", None), ("deny", "too risky"), ("deny", None))


@dataclass(frozen=True)
class Shown:
    """Where one approval was shown: its thread, its message, and the DM copy sent to COPIED."""

    thread_ts: str
    message_ts: str
    copy_ts: str


# Where an attempt comes from, given where the approval was shown.
ORIGINS: dict[str, Callable[[Shown], Origin]] = {
    "its message": lambda at: Origin("message", TEAM_ID, TEAM_ID, CHANNEL, at.message_ts, at.thread_ts),
    "another message": lambda at: Origin("message", TEAM_ID, TEAM_ID, CHANNEL, at.thread_ts, at.thread_ts),
    "another channel": lambda at: Origin("message", TEAM_ID, TEAM_ID, OTHER_CHANNEL, at.message_ts, at.thread_ts),
    "the DM copy": lambda at: Origin("message", TEAM_ID, TEAM_ID, COPY_CHANNEL, at.copy_ts),
    "App Home": lambda at: Origin("home", TEAM_ID, TEAM_ID),
    "its thread": lambda at: Origin("reply", TEAM_ID, TEAM_ID, CHANNEL, at.thread_ts),
    "another thread": lambda at: Origin("reply", TEAM_ID, TEAM_ID, CHANNEL, at.message_ts),
    "another workspace": lambda at: Origin("message", OTHER_TEAM, OTHER_TEAM, CHANNEL, at.message_ts, at.thread_ts),
    "a guest": lambda at: Origin("message", TEAM_ID, OTHER_TEAM, CHANNEL, at.message_ts, at.thread_ts),
}


@dataclass(frozen=True)
class Case:
    """One attempt: who, what, from where, under which policy."""

    policy: PolicySummary
    person: str
    origin: str
    kind: Kind
    reason: str | None

    def __str__(self) -> str:
        flags = [
            name
            for name in ("allow_self_approval", "reason_required_on_deny", "allow_external")
            if getattr(self.policy, name)
        ]
        reason = "" if self.kind == "approve" else (" with a reason" if self.reason else " without a reason")
        return f"{self.policy.name} {flags}: {self.person} {self.kind}s{reason} from {self.origin}"


def _policy(approvers: str, *, self_ok: bool, reason: bool, external: bool) -> PolicySummary:
    users, groups, also = APPROVERS[approvers]
    who = PolicySummary(name=approvers, approver_users=users, approver_groups=groups, also_approvers=also)
    flags = {"allow_self_approval": self_ok, "reason_required_on_deny": reason, "allow_external": external}
    return who.model_copy(update=flags)


_FLAGS = tuple(itertools.product((False, True), repeat=2))
# Who may decide: on the approval's own message, under every policy.
_WHO = [
    Case(_policy(approvers, self_ok=self_ok, reason=reason, external=False), person, origin, kind, given)
    for approvers in APPROVERS
    for self_ok, reason in _FLAGS
    for person in PEOPLE
    for origin in ("its message",)
    for kind, given in KINDS
]
# Where from: every origin, under an open policy and a restricted one that lets the requester approve.
_WHERE = [
    Case(_policy(approvers, self_ok=self_ok, reason=reason, external=external), person, origin, kind, given)
    for approvers, self_ok, reason in (("open", False, False), ("users+also-group", True, True))
    for external in (False, True)
    for person in PEOPLE
    for origin in ORIGINS
    for kind, given in KINDS
]
CASES = list(dict.fromkeys([*_WHO, *_WHERE]))


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    """The loopback Slack: who is in which channel and user group."""
    channels = {CHANNEL: IN_CHANNEL, OTHER_CHANNEL: PEOPLE}
    with FakeSlack(usergroups=USERGROUPS, users={user: {} for user in PEOPLE}, channels=channels) as slack:
        yield slack


@pytest.fixture
def services(slack: FakeSlack, redis_client: redis.Redis) -> Iterator[Services]:
    """The bot's services over the loopback Slack (no HTTP app, no worker: the judge is asked directly)."""
    settings = Settings(
        slack_bot_token=SecretStr(slack.token),
        slack_signing_secret=SecretStr(SIGNING_SECRET),
        slack_api_url=slack.url,
    )
    with closing(Services(settings, redis_client=redis_client, agent_factory=demo_factory)) as services:
        yield services


def _open(
    services: Services,
    redis_client: redis.Redis,
    round_index: int,
    policy: PolicySummary,
    count: int,
    *,
    question: Question | None = None,
) -> list[tuple[str, str, Shown]]:
    """``count`` fresh pending approvals under ``policy`` (or questions): one round in a thread of its own (so rounds
    spread over the shards, cold caches first), each posted and copied to COPIED. Returns (session id, approval id,
    where)."""
    thread_ts = f"1700000000.{round_index:06d}"
    session_id = session_id_for(TEAM_ID, CHANNEL, thread_ts)
    requests = []
    for index in range(count):
        interrupt_id = f"v1:approval:tooluse_{index}:x"
        requests.append(
            ApprovalRequest(
                approval_id=keys.approval_id(session_id, approval_id_for(session_id, 1, interrupt_id)),
                session_id=session_id,
                interrupt_id=interrupt_id,
                interrupt_name="approval",
                team_id=TEAM_ID,
                channel_id=CHANNEL,
                thread_ts=thread_ts,
                requested_by=REQUESTER,
                tool="restart_service",
                tool_input=TOOL_INPUT,
                input_digest=input_digest(TOOL_INPUT),
                input_schema=INPUT_SCHEMA,
                question=question,
                policy=policy,
                created_at=datetime.now(UTC),
            )
        )
    services.stores.approvals.open_round(session_id=session_id, version=1, requests=requests)
    opened = []
    posting = redis_client.pipeline(transaction=False)  # one slot: the session's
    for index, request in enumerate(requests):
        at = Shown(thread_ts, message_ts=f"1700000001.{index:06d}", copy_ts=f"1700000002.{index:06d}")
        # The records the outbox writes once the message and the copy are posted (``Outbox.complete_post``).
        for key, fields in (
            ApprovalStore.message_record(request, ts=at.message_ts, entry_id=f"post-{index}"),
            ApprovalStore.copy_record(request, user=COPIED, channel=COPY_CHANNEL, ts=at.copy_ts),
        ):
            posting.hset(key, mapping=dict(fields))
        opened.append((session_id, request.approval_id, at))
    posting.execute()
    return opened


def _the_rules(case: Case) -> Status:
    """What the rules answer ``case`` (docs/policy.md), in the order they apply: what the judge must answer."""
    policy, person = case.policy, case.person
    if case.origin in ("another workspace", "a guest") and not policy.allow_external:
        return Status.WRONG_WORKSPACE
    elsewhere = case.origin in ("another message", "another channel", "another thread")
    if elsewhere or (case.origin == "the DM copy" and person != COPIED):
        return Status.WRONG_PLACE
    if person == STRANGER:  # COPIED is not in the channel either, but was sent a copy
        return Status.NOT_A_MEMBER
    if not (case.kind == "deny" and person == REQUESTER):  # else: the asker withdraws their own request
        lists = [(policy.approver_users, policy.approver_groups)]
        lists += [(extra.users, extra.usergroups) for extra in policy.also_approvers]
        if any(GONE in groups for _users, groups in lists):
            return Status.UNAVAILABLE  # Slack cannot list the group: nobody is admitted by guess
        if person == REQUESTER and not policy.allow_self_approval:
            return Status.SELF_APPROVAL
        for users, groups in lists:
            listed = person in users or any(person in USERGROUPS.get(group, ()) for group in groups)
            if (users or groups) and not listed:
                return Status.NOT_AN_APPROVER
    if case.kind == "deny" and case.reason is None and policy.reason_required_on_deny:
        return Status.REASON_REQUIRED
    return Status.DECIDED


@dataclass(frozen=True)
class On:
    """An attempt's approval, and where the attempt comes from."""

    session_id: str
    approval_id: str
    origin: Origin


def _checked(services: Services, on: On, person: str, action: Check) -> Status:
    """What a check answers (``decided`` where it allows), having written nothing."""
    approval, refusal = services.decisions.find_checked(
        on.approval_id, user_id=person, action=action, origin=on.origin, session_id=on.session_id
    )
    assert approval is not None
    return Status.DECIDED if refusal is None else refusal.status


def _decided(services: Services, on: On, person: str, kind: Kind, *, shown: str = "") -> Status:
    """What deciding for real answers."""
    return services.decisions.decide(
        on.approval_id,
        user_id=person,
        kind=kind,
        reason=None,
        source="button",
        origin=on.origin,
        session_id=on.session_id,
        shown=shown,
    ).status


def test_the_judge_answers_every_case_as_the_rules_say_whether_it_checks_or_decides(
    services: Services, redis_client: redis.Redis
) -> None:
    wrong = []
    answers: Counter[Status] = Counter()
    by_policy: dict[PolicySummary, list[Case]] = {}
    for case in CASES:
        by_policy.setdefault(case.policy, []).append(case)
    for round_index, (policy, cases) in enumerate(by_policy.items()):
        for case, (session_id, approval_id, at) in zip(
            cases, _open(services, redis_client, round_index, policy, len(cases)), strict=True
        ):
            origin = ORIGINS[case.origin](at)
            expected = _the_rules(case)
            checked = _checked(services, On(session_id, approval_id, origin), case.person, case.kind)
            outcome = services.decisions.decide(
                approval_id,
                user_id=case.person,
                kind=case.kind,
                reason=case.reason,
                source="reply" if origin.surface == "reply" else "button",
                origin=origin,
                # A typed reply decides only if written after the message was posted: this one was.
                written_at="1800000000.000100" if origin.surface == "reply" else None,
                session_id=session_id,
            )
            answers[expected] += 1
            # A check stops before the reason: the deny form is where it is given.
            if checked is not (Status.DECIDED if expected is Status.REASON_REQUIRED else expected):
                wrong.append(f"{case}: the rules say {expected}, the check {checked}")
            if outcome.status is not expected:
                wrong.append(f"{case}: the rules say {expected}, the decision {outcome.status}")

    assert wrong == [], f"{len(wrong)} of {2 * len(CASES)} answers:\n" + "\n".join(wrong)
    # Every refusal is reached by some case (a rule no case reaches could go wrong unseen), and some cases decide.
    assert set(answers) == {
        Status.DECIDED,
        Status.WRONG_WORKSPACE,
        Status.WRONG_PLACE,
        Status.NOT_A_MEMBER,
        Status.SELF_APPROVAL,
        Status.NOT_AN_APPROVER,
        Status.REASON_REQUIRED,
        Status.UNAVAILABLE,
    }, answers


OPEN = PolicySummary(name="open")
CHECKS: tuple[Check, ...] = ("approve", "deny", "decide")


def test_the_judge_on_tiers_quorum_decided_and_expired_requests_edits_questions_and_discussion(
    services: Services, redis_client: redis.Redis
) -> None:
    def opened(index: int, policy: PolicySummary, question: Question | None = None) -> On:
        [(session_id, approval_id, at)] = _open(services, redis_client, index, policy, 1, question=question)
        return On(session_id, approval_id, ORIGINS["its message"](at))

    # A rule that decides by itself (tier allow or deny) is decided by nobody, whoever asks, whatever they ask.
    for index, tier in enumerate(("deny", "allow")):
        on = opened(index, OPEN.model_copy(update={"tier": tier}))
        for kind in CHECKS:
            assert _checked(services, on, APPROVER, kind) is Status.NOT_AN_APPROVER
        assert _decided(services, on, APPROVER, "approve") is Status.NOT_AN_APPROVER
        assert _checked(services, on, MEMBER, "discuss") is Status.DECIDED  # may see it

    # A check writes nothing, allowed or not (only ``find_checked`` audits a refusal, apart: none here).
    on = opened(6, OPEN)
    _checked(services, on, STRANGER, "approve")  # fills the channel's cache first: Slack's answer is kept
    before = {key: contents(redis_client, key) for key in every_key(redis_client) if b"audit" not in key}
    asked: tuple[tuple[str, Check], ...] = ((APPROVER, "approve"), (APPROVER, "deny"), (MEMBER, "discuss"))
    for person, action in (*asked, (REQUESTER, "decide")):
        _checked(services, on, person, action)
    assert {key: contents(redis_client, key) for key in every_key(redis_client) if b"audit" not in key} == before

    # A quorum: a check counts no vote; the second approval decides; then every check says so, and who may see it.
    on = opened(2, OPEN.model_copy(update={"quorum": 2}))
    assert _checked(services, on, APPROVER, "approve") is Status.DECIDED
    assert redis_client.scard(keys.votes(on.session_id, on.approval_id)) == 0
    assert _decided(services, on, APPROVER, "approve") is Status.VOTE
    assert _decided(services, on, BOTH, "approve") is Status.DECIDED
    for kind in CHECKS:
        assert _checked(services, on, MEMBER, kind) is Status.ALREADY
    for person, may_see in ((MEMBER, Status.DECIDED), (COPIED, Status.DECIDED), (STRANGER, Status.NOT_A_MEMBER)):
        assert _checked(services, on, person, "discuss") is may_see, person

    # Expired: nobody decides it any more.
    on = opened(3, OPEN)
    approval = services.stores.approvals.get(on.session_id, on.approval_id)
    assert approval is not None
    assert services.decisions.expire(approval, outcome="deny").status is Status.DECIDED
    assert _checked(services, on, APPROVER, "approve") is Status.ALREADY

    # Edits: an editor whose rule wants another approver may still act on it (claim it, edit again), not approve it.
    on = opened(4, OPEN.model_copy(update={"edits": "other_approver"}))
    edited = {"service": "web"}
    edit = CallEdit(input=edited, digest=input_digest(edited), edited_by=APPROVER, edited_at=datetime.now(UTC))
    [event] = services.stores.audit.script_events(("edit",), session_id=on.session_id, actor=APPROVER)
    status, _digest = services.stores.edits.edit(
        on.session_id,
        on.approval_id,
        edit=edit,
        started_from=input_digest(TOOL_INPUT),
        update=Outbox.script_entry(update_approval(on.session_id, on.approval_id), due_ms=0),
        audit=event,
    )
    assert status is Status.EDITED
    assert _checked(services, on, APPROVER, "approve") is Status.DECIDED
    shown = edit.digest
    assert _decided(services, on, APPROVER, "approve", shown=shown) is (Status.EDITOR_APPROVAL)
    assert _decided(services, on, BOTH, "approve", shown=shown) is Status.DECIDED

    # A question is answered, never approved or denied; "decide" (App Home) asks whichever it takes.
    on = opened(5, OPEN, Question(text="Which region?"))
    assert _checked(services, on, APPROVER, "approve") is Status.WRONG_ACTION
    assert _checked(services, on, APPROVER, "answer") is Status.DECIDED
    assert _checked(services, on, APPROVER, "decide") is Status.DECIDED
    assert _checked(services, on, STRANGER, "decide") is Status.NOT_A_MEMBER


def test_every_path_that_decides_nothing_asks_the_judge(
    services: Services, slack: FakeSlack, redis_client: redis.Redis
) -> None:
    # A rule that decides by itself (tier deny), offering all that a person could otherwise open on it.
    offers = {"claim_pause_s": 600, "grant_durations": (3600,), "edits": "allowed"}
    ruled = OPEN.model_copy(update={"tier": "deny", **offers})
    [(session_id, approval_id, at)] = _open(services, redis_client, 0, ruled, 1)
    [(_, question_id, _)] = _open(services, redis_client, 1, ruled, 1, question=Question(text="Which region?"))
    [(_, waiting_id, _)] = _open(services, redis_client, 2, OPEN, 1)  # asks people: App Home lists it
    origin, shown = ORIGINS["its message"](at), input_digest(TOOL_INPUT)

    # Discuss: who could see it (a tier is no matter); while Slack cannot say who is in the channel (a cold cache),
    # nobody is told they are not in it.
    slack.error_next("conversations.members", "internal_error")
    refusal = services.attending.discuss(approval_id, user_id=MEMBER, origin=origin)
    assert refusal is not None
    assert refusal.status is Status.UNAVAILABLE

    # Take, and opening the deny, answer, edit and "allow similar" forms: each refused as the judge refuses.
    taken = services.attending.take(approval_id, user_id=APPROVER, origin=origin)
    assert taken.outcome.status is Status.NOT_AN_APPROVER
    forms: tuple[tuple[Check, str], ...] = (("deny", approval_id), ("answer", question_id))
    for action, on in forms:
        _approval, refusal = services.decisions.find_checked(on, user_id=APPROVER, action=action, origin=origin)
        assert refusal is not None, action
        assert refusal.status is Status.NOT_AN_APPROVER, action
    edit = services.edit_flow.open(approval_id, user_id=APPROVER, origin=origin, shown=shown)
    assert edit.refusal is not None
    assert edit.refusal.status is Status.NOT_AN_APPROVER
    similar = services.grant_flow.open_similar(approval_id, user_id=APPROVER, origin=origin, shown=shown)
    assert similar.refusal is not None
    assert similar.refusal.status is Status.NOT_AN_APPROVER
    # App Home lists only what the person may decide now.
    home = services.home_queue.contents_for(APPROVER, team_id=TEAM_ID)
    assert [request.approval_id for request, _progress in home.queue] == [waiting_id]
    assert redis_client.scard(keys.votes(session_id, approval_id)) == 0
