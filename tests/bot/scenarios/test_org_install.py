"""An Enterprise Grid org installs the app org-wide through the OAuth flow, beside an ordinary workspace: one org
token answers in each of its workspaces, and the org's uninstall (or its bot token revoked) ends the pending
requests of every workspace it served, and nothing of the other workspace; an org admin taking one workspace away
(``team_access_revoked``) ends that workspace's only, and giving it back serves it again."""

import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from bot.render.texts.decision_reasons import UNINSTALLED
from loopback_slack import slack_requests
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET
from tests.bot.support.oauth_bot import OAuthBot, oauth_bot
from tests.bot.support.people import APPROVER, REQUESTER
from tests.bot.support.tampering import TamperingPoster

ORG = "E0ORG"
ORG_TOKEN = "xoxb-org"
IN_ORG_A, IN_ORG_B, ELSEWHERE = "T0ORGA", "T0ORGB", "T0CHARLIE"
CHANNELS = {IN_ORG_A: "C0ORGA", IN_ORG_B: "C0ORGB", ELSEWHERE: "C0CHARLIE"}
PEOPLE = (REQUESTER, APPROVER)

# What Slack sends when the org-wide app leaves the org: the org in the envelope and in authorizations[0], with
# is_enterprise_install; the envelope's team_id may name one of the org's workspaces.
UNINSTALL_EVENTS: dict[str, dict[str, Any]] = {
    "app_uninstalled": {"type": "app_uninstalled"},
    "tokens_revoked": {"type": "tokens_revoked", "tokens": {"oauth": [], "bot": ["U0BOT"]}},
}


@pytest.fixture
def installed(redis_client: redis.Redis) -> Iterator[OAuthBot]:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(team_id=ELSEWHERE, team="Charlie", token="xoxb-charlie", users=users) as slack:
        slack.set_channel_members(CHANNELS[ELSEWHERE], PEOPLE)
        for team in (IN_ORG_A, IN_ORG_B):
            slack.add_workspace(team, token=f"xoxb-{team.lower()}", users=users, channels={CHANNELS[team]: PEOPLE})
        slack.add_org(ORG, token=ORG_TOKEN, workspaces=[IN_ORG_A, IN_ORG_B], name="Grid Org")
        with oauth_bot(redis_client, slack, CHANNELS) as bot:
            assert bot.install(enterprise_id=ORG) == 200
            assert bot.install(ELSEWHERE) == 200
            bot.org_of.update({IN_ORG_A: ORG, IN_ORG_B: ORG})
            yield bot


def test_the_org_wide_install_is_kept_for_the_org(installed: OAuthBot) -> None:
    found = installed.services.stores.installations.find_installation(
        enterprise_id=ORG, team_id=None, is_enterprise_install=True
    )
    assert found is not None
    assert found.bot_token == ORG_TOKEN
    assert found.is_enterprise_install is True
    assert found.team_id is None
    assert found.enterprise_name == "Grid Org"
    assert found.bot_id == f"B{ORG}"  # asked of auth.test with the org's token, as Bolt does


@pytest.mark.parametrize("event_type", sorted(UNINSTALL_EVENTS))
def test_the_org_s_uninstall_ends_what_waits_in_each_of_its_workspaces_only(
    installed: OAuthBot, event_type: str
) -> None:
    approvals = installed.services.stores.approvals
    # A mention in a workspace of the org is answered with the org's token, and decided there.
    decided = installed.ask(IN_ORG_A)
    assert installed.tokens_used("chat.postMessage", CHANNELS[IN_ORG_A]) == {ORG_TOKEN}
    assert installed.click(IN_ORG_A, decided) == 200
    installed.drain()
    assert approvals.find(decided).decision.decision == "approve"  # type: ignore[union-attr]
    assert installed.tokens_used("chat.update", CHANNELS[IN_ORG_A]) == {ORG_TOKEN}

    waiting = installed.ask(IN_ORG_B)
    assert installed.tokens_used("chat.postMessage", CHANNELS[IN_ORG_B]) == {ORG_TOKEN}
    elsewhere = installed.ask(ELSEWHERE)
    assert installed.tokens_used("chat.postMessage", CHANNELS[ELSEWHERE]) == {"xoxb-charlie"}
    home = {"type": "app_home_opened", "user": APPROVER, "channel": f"D{APPROVER}", "tab": "home"}
    opened = slack_requests.event_callback(home, team=installed.request_team(IN_ORG_B))
    assert installed.poster.post_event(opened).status == 200
    installed.drain()
    viewers = installed.services.stores.home_viewers
    assert viewers.of_team(IN_ORG_B) == [APPROVER]

    uninstall = slack_requests.event_callback(UNINSTALL_EVENTS[event_type], team=installed.request_team(IN_ORG_A))
    assert installed.poster.post_event(uninstall).status == 200
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded

    expired = approvals.find(waiting)
    assert expired is not None
    assert expired.decision is not None
    assert expired.decision.decision == "expired"
    assert expired.decision.reason == UNINSTALLED
    assert approvals.find(decided).decision.decision == "approve"  # type: ignore[union-attr]
    assert approvals.find(elsewhere).decision is None  # type: ignore[union-attr]
    installations = installed.services.stores.installations
    assert installations.find_installation(enterprise_id=ORG, team_id=None, is_enterprise_install=True) is None
    assert installations.org_serving(IN_ORG_A) is None
    assert installations.org_serving(IN_ORG_B) is None
    assert installations.for_team(ELSEWHERE) is not None
    assert viewers.of_team(IN_ORG_B) == []

    def sent_with_org_token() -> int:
        return len([call for call in installed.slack.calls() if ORG_TOKEN in call.headers.get("authorization", "")])

    before = sent_with_org_token()
    installed.drain()  # the agent resumes with the expiry; nothing it says can reach the org any more
    session_id = approvals.session_of(waiting)
    assert any(e.event == "resume" and e.session_id == session_id for e in installed.services.stores.audit.entries())
    assert installed.services.stores.outbox.dead_letters() == {}, "the org's entries are dropped, not parked"
    assert sent_with_org_token() == before

    # The ordinary workspace goes on as before.
    assert installed.click(ELSEWHERE, elsewhere) == 200
    installed.drain()
    assert approvals.find(elsewhere).decision.decision == "approve"  # type: ignore[union-attr]

    # A request from a workspace of the org now finds no installation: refused, nothing recorded.
    installed.mention(IN_ORG_B)
    installed.drain()
    assert installed.approval_ids(IN_ORG_B) == [waiting]


def test_a_workspace_of_the_org_uninstalled_alone_leaves_the_org_s_install(installed: OAuthBot) -> None:
    in_a = installed.ask(IN_ORG_A)
    in_b = installed.ask(IN_ORG_B)
    # A workspace-level app_uninstalled (no is_enterprise_install) ends that workspace's requests only.
    uninstall = slack_requests.event_callback(
        {"type": "app_uninstalled"}, team=slack_requests.Team(IN_ORG_A, enterprise_id=ORG)
    )
    assert installed.poster.post_event(uninstall).status == 200
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded
    approvals = installed.services.stores.approvals
    assert approvals.find(in_a).decision.reason == UNINSTALLED  # type: ignore[union-attr]
    assert approvals.find(in_b).decision is None  # type: ignore[union-attr]
    installations = installed.services.stores.installations
    assert installations.find_installation(enterprise_id=ORG, team_id=None, is_enterprise_install=True) is not None
    assert installations.for_team(IN_ORG_B) is not None


def test_the_org_s_uninstall_leaves_a_workspace_served_by_its_own_install(installed: OAuthBot) -> None:
    # The org served IN_ORG_A once (the note stays), then IN_ORG_A installed the app itself: its own install serves it.
    installed.ask(IN_ORG_A)
    assert installed.services.stores.installations.org_serving(IN_ORG_A) == ORG
    assert installed.install(IN_ORG_A) == 200
    del installed.org_of[IN_ORG_A]
    installed.services.clients.forget(IN_ORG_A)  # the org's token kept for it expires within 30 s
    own = installed.ask(IN_ORG_A)
    assert installed.tokens_used("chat.postMessage", CHANNELS[IN_ORG_A]) >= {"xoxb-t0orga"}
    in_b = installed.ask(IN_ORG_B)

    uninstall = slack_requests.event_callback({"type": "app_uninstalled"}, team=installed.request_team(IN_ORG_B))
    assert installed.poster.post_event(uninstall).status == 200
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded

    approvals = installed.services.stores.approvals
    assert approvals.find(in_b).decision.reason == UNINSTALLED  # type: ignore[union-attr]
    assert approvals.find(own).decision is None  # type: ignore[union-attr]
    installations = installed.services.stores.installations
    kept = installations.for_team(IN_ORG_A)
    assert kept is not None
    assert kept.bot_token == "xoxb-t0orga"
    assert installations.org_serving(IN_ORG_A) is None  # the org serves nothing any more
    # IN_ORG_A goes on with its own install: a click decides, the update is sent with its token.
    assert installed.click(IN_ORG_A, own) == 200
    installed.drain()
    assert approvals.find(own).decision.decision == "approve"  # type: ignore[union-attr]
    assert installed.tokens_used("chat.update", CHANNELS[IN_ORG_A]) == {"xoxb-t0orga"}


def _access_event(kind: str, team_ids: list[str], *, org: str = ORG, is_enterprise_install: bool = True) -> Any:
    """``team_access_revoked`` (or ``_granted``) as Slack sends it to the org's install, naming ``team_ids``."""
    # Slack's envelope names one of the org's workspaces in team_id, and its example marks the authorization as
    # not org-wide: neither may matter.
    envelope = slack_requests.Team(IN_ORG_A, enterprise_id=org, is_enterprise_install=is_enterprise_install)
    return slack_requests.event_callback({"type": kind, "team_ids": team_ids}, team=envelope)


@pytest.mark.parametrize("is_enterprise_install", [True, False])
def test_a_workspace_taken_from_the_org_s_install_ends_what_waits_there_only(
    installed: OAuthBot, is_enterprise_install: bool
) -> None:
    approvals = installed.services.stores.approvals
    in_a = installed.ask(IN_ORG_A)
    in_b = installed.ask(IN_ORG_B)
    elsewhere = installed.ask(ELSEWHERE)
    home = {"type": "app_home_opened", "user": APPROVER, "channel": f"D{APPROVER}", "tab": "home"}
    opened = slack_requests.event_callback(home, team=installed.request_team(IN_ORG_B))
    assert installed.poster.post_event(opened).status == 200
    installed.drain()
    viewers = installed.services.stores.home_viewers
    assert viewers.of_team(IN_ORG_B) == [APPROVER]

    revoked = _access_event("team_access_revoked", [IN_ORG_B], is_enterprise_install=is_enterprise_install)
    started = time.monotonic()
    assert installed.poster.post_event(revoked).status == 200
    assert time.monotonic() - started < 3  # within Slack's window
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded

    expired = approvals.find(in_b)
    assert expired is not None
    assert expired.decision is not None
    assert expired.decision.decision == "expired"
    assert expired.decision.reason == UNINSTALLED
    assert approvals.find(in_a).decision is None  # type: ignore[union-attr]
    assert approvals.find(elsewhere).decision is None  # type: ignore[union-attr]
    installations = installed.services.stores.installations
    assert installations.org_serving(IN_ORG_B) is None
    assert installations.for_team(IN_ORG_B) is None
    assert installations.org_serving(IN_ORG_A) == ORG
    assert installations.find_installation(enterprise_id=ORG, team_id=None, is_enterprise_install=True) is not None
    assert viewers.of_team(IN_ORG_B) == []

    def sent_to_b() -> int:
        return len([call for call in installed.slack.calls() if call.args.get("channel") == CHANNELS[IN_ORG_B]])

    before = sent_to_b()
    installed.drain()  # the agent resumes with the expiry; nothing it says reaches the workspace taken away
    session_id = approvals.session_of(in_b)
    assert any(e.event == "resume" and e.session_id == session_id for e in installed.services.stores.audit.entries())
    assert installed.services.stores.outbox.dead_letters() == {}, "B's entries are dropped, not parked"
    assert sent_to_b() == before

    # Slack redelivers the event: nothing more happens.
    audited = len(list(installed.services.stores.audit.entries()))
    with TamperingPoster(installed.url, SIGNING_SECRET) as redelivering:
        assert redelivering.post_event(revoked, retry_num=1, timestamp=int(time.time()) - 5).status == 200
    assert len(list(installed.services.stores.audit.entries())) == audited

    # The org's other workspace goes on with the org's token, the ordinary one with its own.
    assert installed.click(IN_ORG_A, in_a) == 200
    assert installed.click(ELSEWHERE, elsewhere) == 200
    installed.drain()
    assert approvals.find(in_a).decision.decision == "approve"  # type: ignore[union-attr]
    assert approvals.find(elsewhere).decision.decision == "approve"  # type: ignore[union-attr]
    assert installed.tokens_used("chat.update", CHANNELS[IN_ORG_A]) == {ORG_TOKEN}
    assert installed.tokens_used("chat.update", CHANNELS[ELSEWHERE]) == {"xoxb-charlie"}


def test_a_revoke_naming_workspaces_the_org_does_not_serve_changes_nothing(installed: OAuthBot) -> None:
    in_a = installed.ask(IN_ORG_A)
    elsewhere = installed.ask(ELSEWHERE)
    installations = installed.services.stores.installations
    # IN_ORG_B was never seen, ELSEWHERE has its own install, T0NEVER is unknown; another org names IN_ORG_A.
    unserved = _access_event("team_access_revoked", [IN_ORG_B, ELSEWHERE, "T0NEVER"])
    assert installed.poster.post_event(unserved).status == 200
    other_org = _access_event("team_access_revoked", [IN_ORG_A], org="E0OTHER")
    assert installed.poster.post_event(other_org).status == 200
    approvals = installed.services.stores.approvals
    assert approvals.find(in_a).decision is None  # type: ignore[union-attr]
    assert approvals.find(elsewhere).decision is None  # type: ignore[union-attr]
    assert installations.org_serving(IN_ORG_A) == ORG
    assert installations.for_team(ELSEWHERE) is not None
    assert installed.click(IN_ORG_A, in_a) == 200
    installed.drain()
    assert approvals.find(in_a).decision.decision == "approve"  # type: ignore[union-attr]


def test_a_workspace_given_back_to_the_org_s_install_is_served_again(installed: OAuthBot) -> None:
    first = installed.ask(IN_ORG_B)
    revoked = _access_event("team_access_revoked", [IN_ORG_B])
    assert installed.poster.post_event(revoked).status == 200
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded
    approvals = installed.services.stores.approvals
    assert approvals.find(first).decision.reason == UNINSTALLED  # type: ignore[union-attr]
    installed.drain()

    # The org admin gives it back (Slack's team_access_granted, which the bot does not subscribe to): its next
    # request is served by the org's install, as any workspace of the org is.
    again = installed.ask(IN_ORG_B)
    assert installed.services.stores.installations.org_serving(IN_ORG_B) == ORG
    assert installed.click(IN_ORG_B, again) == 200
    installed.drain()
    assert approvals.find(again).decision.decision == "approve"  # type: ignore[union-attr]
    assert installed.tokens_used("chat.update", CHANNELS[IN_ORG_B]) == {ORG_TOKEN}

    # A late redelivery of the revoke ends nothing raised since.
    newer = installed.ask(IN_ORG_B)
    with TamperingPoster(installed.url, SIGNING_SECRET) as redelivering:
        assert redelivering.post_event(revoked, retry_num=2, timestamp=int(time.time()) - 5).status == 200
    assert approvals.find(newer).decision is None  # type: ignore[union-attr]


@pytest.mark.parametrize("team_ids", [IN_ORG_B, [IN_ORG_B, 5], None])
def test_a_revoke_whose_workspaces_cannot_be_read_is_a_400_and_ends_nothing(installed: OAuthBot, team_ids: Any) -> None:
    in_b = installed.ask(IN_ORG_B)
    malformed = _access_event("team_access_revoked", [])
    malformed["event"]["team_ids"] = team_ids
    result = installed.poster.post_event(malformed)
    assert result.status == 400, result.body
    assert "event.team_ids must be a list of strings" in result.json()["error"]
    assert installed.services.stores.approvals.find(in_b).decision is None  # type: ignore[union-attr]
    assert installed.services.stores.installations.org_serving(IN_ORG_B) == ORG
