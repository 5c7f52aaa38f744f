"""The two judges of who may decide agree on every case of a matrix, so that they never drift apart silently.

A decision is judged by the decide script (``bot.store.scripts.decide``, through ``DecisionService.decide``);
what decides nothing (the deny modal, claims, App Home) is judged in Python (``DecisionService.check``, plus the
rule that a deny needs a reason when the policy says so, which only ``decide`` applies). Each case (policy,
person, origin, kind) gets a fresh approval, posted and copied by DM; the Python judge is asked, then the case is
decided for real: the script must give the Python judge's refusal, or ``decided`` where Python allows. Membership
and user groups come from the loopback Slack through a real ``Directory`` (cold caches, then warm ones).

The matrix is two products, so that it stays fast: who may decide (every approver list, self-approval and
reason flag, person and kind) on the approval's own message; and where from (every origin, with and without
``allow_external``, every person and kind) under an open and a restricted policy.
"""

import itertools
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
import redis
from pydantic import SecretStr

from bot.domain.hidden_characters import is_blank
from bot.domain.records import ApprovalRequest, ApproverSet, PolicySummary, approval_id_for, session_id_for
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.outcomes import Kind
from bot.loopback_slack.slack_requests import TEAM_ID
from bot.services import Services
from bot.settings import Settings
from bot.store import keys
from bot.store.approvals import ApprovalStore
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET, demo_factory
from tests.redis_targets import on_both

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
def services(redis_client: redis.Redis) -> Iterator[Services]:
    """The bot's services over the loopback Slack (no HTTP app, no worker: the judges are called directly)."""
    channels = {CHANNEL: IN_CHANNEL, OTHER_CHANNEL: PEOPLE}
    with FakeSlack(usergroups=USERGROUPS, users={user: {} for user in PEOPLE}, channels=channels) as slack:
        settings = Settings(
            slack_bot_token=SecretStr(slack.token),
            slack_signing_secret=SecretStr(SIGNING_SECRET),
            slack_api_url=slack.url,
        )
        yield Services(settings, redis_client=redis_client, agent_factory=demo_factory)


def _open(
    services: Services, redis_client: redis.Redis, round_index: int, policy: PolicySummary, count: int
) -> list[tuple[str, str, Shown]]:
    """``count`` fresh pending approvals under ``policy``: one round in a thread of its own (so rounds spread over
    the shards, cold caches first), each posted and copied to COPIED. Returns (session id, approval id, where)."""
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


def _python_judge(services: Services, session_id: str, approval_id: str, case: Case, origin: Origin) -> Status:
    """What the checks used where nothing is decided answer, plus ``decide``'s reason rule."""
    approval = services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    refusal = services.decisions.check(approval, user_id=case.person, kind=case.kind, origin=origin)
    if refusal is not None:
        return refusal.status
    no_reason = case.reason is None or is_blank(case.reason)
    if case.kind == "deny" and no_reason and approval.request.policy.reason_required_on_deny:
        return Status.REASON_REQUIRED
    return Status.DECIDED


def test_the_decide_script_and_the_python_checks_give_the_same_answer_on_every_case(
    services: Services, redis_client: redis.Redis
) -> None:
    disagreements = []
    answers: Counter[Status] = Counter()
    by_policy: dict[PolicySummary, list[Case]] = {}
    for case in CASES:
        by_policy.setdefault(case.policy, []).append(case)
    for round_index, (policy, cases) in enumerate(by_policy.items()):
        for case, (session_id, approval_id, at) in zip(
            cases, _open(services, redis_client, round_index, policy, len(cases)), strict=True
        ):
            origin = ORIGINS[case.origin](at)
            expected = _python_judge(services, session_id, approval_id, case, origin)
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
            if outcome.status is not expected:
                disagreements.append(f"{case}: python {expected}, script {outcome.status}")

    assert disagreements == [], f"{len(disagreements)} of {len(CASES)} cases:\n" + "\n".join(disagreements)
    # Every refusal is reached by some case (a rule no case reaches could drift unseen), and some cases decide.
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
