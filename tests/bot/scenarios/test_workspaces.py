"""Two workspaces installed through the OAuth flow, side by side: each request answered with its own workspace's
token, nothing of one seen in the other (messages, App Home, /approvals, clicks), and an uninstall mid-request
that ends only that workspace's requests."""

import html
import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import redis

from bot.domain.grants import Grant
from bot.render import action_ids as ids
from bot.render.texts.decision_reasons import UNINSTALLED
from bot.slack.edge.oauth import INSTALL_PATH, REDIRECT_PATH
from loopback_slack import slack_requests
from tests.bot.support.crowd import OTHER_TEAM, commands_processed, other_approvals
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import home_click
from tests.bot.support.oauth_bot import OAuthBot, oauth_bot
from tests.bot.support.people import APPROVER, REQUESTER

ALPHA, BETA = "T0ALPHA", "T0BETA"
CHANNELS = {ALPHA: "C0ALPHA", BETA: "C0BETA"}
PEOPLE = (REQUESTER, APPROVER)  # the same ids in both workspaces: an Enterprise Grid person is in both


@contextmanager
def two_workspaces(redis_client: redis.Redis) -> Iterator[OAuthBot]:
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(team_id=ALPHA, team="Alpha", token="xoxb-alpha", users=users) as slack:
        slack.set_channel_members(CHANNELS[ALPHA], [*PEOPLE, "U0BOT"])
        slack.add_workspace(BETA, team="Beta", token="xoxb-beta", users=users, channels={CHANNELS[BETA]: PEOPLE})
        with oauth_bot(redis_client, slack, CHANNELS) as bot:
            yield bot


@pytest.fixture
def installed(redis_client: redis.Redis) -> Iterator[OAuthBot]:
    with two_workspaces(redis_client) as bot:
        assert bot.install(ALPHA) == 200
        assert bot.install(BETA) == 200
        yield bot


def test_the_oauth_flow_keeps_each_workspace_s_installation(installed: OAuthBot) -> None:
    for team in (ALPHA, BETA):
        found = installed.services.stores.installations.find_bot(enterprise_id=None, team_id=team)
        assert found is not None
        assert found.bot_token == installed.slack.token_of(team)
        assert found.bot_user_id == "U0BOT"
        assert found.bot_id  # asked of auth.test with the new token, as Bolt does


def test_no_workspace_s_token_is_in_redis_in_clear(installed: OAuthBot, redis_client: redis.Redis) -> None:
    dumped = b"".join(
        bytes(redis_client.dump(key) or b"") for key in redis_client.scan_iter(match="signoff:installation*")
    )
    assert dumped  # the installations are there
    for team in (ALPHA, BETA):
        assert installed.slack.token_of(team).encode() not in dumped


def test_a_state_is_good_for_one_callback_and_a_forged_one_for_none(redis_client: redis.Redis) -> None:
    with two_workspaces(redis_client) as bot:
        _status, headers, page = bot.get(INSTALL_PATH)
        state = parse_qs(urlsplit(html.unescape(re.search(r'<a href="([^"]+)"', page).group(1))).query)["state"][0]  # type: ignore[union-attr]
        cookie = headers["set-cookie"].split(";")[0]
        bot.slack.offer_install("code-1", ALPHA, installer=REQUESTER)
        bot.slack.offer_install("code-2", BETA, installer=REQUESTER)
        forged, _, _ = bot.get(f"{REDIRECT_PATH}?code=code-2&state=forged", cookie="slack-app-oauth-state=forged")
        assert forged >= 400
        assert bot.get(f"{REDIRECT_PATH}?code=code-1&state={state}", cookie=cookie)[0] == 200
        replayed, _, _ = bot.get(f"{REDIRECT_PATH}?code=code-2&state={state}", cookie=cookie)
        assert replayed >= 400
        installations = bot.services.stores.installations
        assert installations.find_bot(enterprise_id=None, team_id=ALPHA) is not None
        assert installations.find_bot(enterprise_id=None, team_id=BETA) is None  # neither the forged nor the replay


def test_each_workspace_is_answered_with_its_own_token_and_sees_only_its_own(installed: OAuthBot) -> None:
    alpha = installed.ask(ALPHA)
    beta = installed.ask(BETA)
    assert installed.approval_ids(ALPHA) == [alpha]
    assert installed.approval_ids(BETA) == [beta]
    assert installed.tokens_used("chat.postMessage", CHANNELS[ALPHA]) == {"xoxb-alpha"}
    assert installed.tokens_used("chat.postMessage", CHANNELS[BETA]) == {"xoxb-beta"}

    # App Home: the same person, one tab per workspace, each with its own workspace's request only.
    for team, own, other in ((ALPHA, alpha, beta), (BETA, beta, alpha)):
        event = {"type": "app_home_opened", "user": APPROVER, "channel": f"D{APPROVER}", "tab": "home"}
        opened = slack_requests.event_callback(event, team=slack_requests.Team(team))
        assert installed.poster.post_event(opened).status == 200
        installed.drain()
        view = installed.slack.home_view(APPROVER, team=team)
        assert view is not None
        assert own in str(view)
        assert other not in str(view)

    # /approvals lists the channel's own; the other workspace's channel id names nothing here.
    for team in (ALPHA, BETA):
        for channel, expected in ((CHANNELS[team], True), (CHANNELS[ALPHA if team == BETA else BETA], False)):
            answered = len(installed.slack.calls("response_url"))
            command = slack_requests.slash_command(
                command=ids.APPROVALS_COMMAND,
                user_id=REQUESTER,
                channel_id=channel,
                team=slack_requests.Team(team),
                response_url=installed.slack.response_url(channel=channel),
            )
            assert installed.poster.post_command(command).status == 200
            text = str(installed.slack.wait_for("response_url", count=answered + 1)[-1].args["text"])
            assert ("restart" in text) is expected, (team, channel, text)

    # A click on BETA's request that says it comes from ALPHA decides nothing.
    assert installed.click(BETA, beta, from_team=ALPHA) == 200
    installed.drain()
    assert installed.services.stores.approvals.find(beta).decision is None  # type: ignore[union-attr]

    # Approving in ALPHA resumes ALPHA's agent; its reply goes to ALPHA with ALPHA's token.
    assert installed.click(ALPHA, alpha) == 200
    installed.drain()
    assert installed.services.stores.approvals.find(alpha).decision.decision == "approve"  # type: ignore[union-attr]
    assert installed.services.stores.approvals.find(beta).decision is None  # type: ignore[union-attr]
    assert installed.tokens_used("chat.update", CHANNELS[ALPHA]) == {"xoxb-alpha"}
    assert installed.tokens_used("chat.postMessage", CHANNELS[BETA]) == {"xoxb-beta"}


def test_an_uninstall_mid_request_expires_that_workspace_s_requests_only(installed: OAuthBot) -> None:
    alpha = installed.ask(ALPHA)
    beta = installed.ask(BETA)
    event = slack_requests.event_callback({"type": "app_uninstalled"}, team=slack_requests.Team(BETA))
    assert installed.poster.post_event(event).status == 200
    installed.worker.finish_uninstalls()  # the worker carries out what the ack recorded

    approvals = installed.services.stores.approvals
    expired = approvals.find(beta)
    assert expired is not None
    assert expired.decision is not None
    assert expired.decision.decision == "expired"
    assert expired.decision.reason == UNINSTALLED
    assert approvals.find(alpha).decision is None  # type: ignore[union-attr]
    assert installed.services.stores.installations.find_bot(enterprise_id=None, team_id=BETA) is None
    assert installed.services.stores.installations.find_bot(enterprise_id=None, team_id=ALPHA) is not None

    def sent_to_beta() -> int:
        return len([call for call in installed.slack.calls() if "xoxb-beta" in call.headers.get("authorization", "")])

    before = sent_to_beta()
    installed.drain()  # the agent resumes with the expiry; nothing it says can reach BETA any more
    assert installed.services.stores.outbox.dead_letters() == {}, (
        "an uninstalled workspace's entries are dropped, not parked"
    )
    assert sent_to_beta() == before

    # ALPHA goes on as before.
    assert installed.click(ALPHA, alpha) == 200
    installed.drain()
    assert approvals.find(alpha).decision.decision == "approve"  # type: ignore[union-attr]

    # A request from BETA now finds no installation: refused, nothing recorded.
    mention = slack_requests.app_mention(
        user=REQUESTER, channel=CHANNELS[BETA], text="<@U0BOT> restart", team=slack_requests.Team(BETA)
    )
    installed.poster.post_event(mention)
    installed.drain()
    assert installed.approval_ids(BETA) == [beta]


def _ask_over_api(bot: OAuthBot, key: str, channel: str, *, question: bool = False) -> tuple[int, dict[str, Any]]:
    asked = {"question": "Which region?"} if question else {"tool": "deploy", "input": {"service": "checkout"}}
    body = json.dumps({**asked, "channel": channel}).encode()
    request = urllib.request.Request(
        bot.url.rstrip("/") + ("/v1/questions" if question else "/v1/approvals"),
        data=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_an_api_key_asks_in_the_workspace_it_names(installed: OAuthBot) -> None:
    keys = installed.services.stores.api_keys
    bound = keys.create("beta-ci", team_id=BETA)
    unbound = keys.create("anywhere-ci")
    assert bound is not None
    assert unbound is not None

    status, answer = _ask_over_api(installed, unbound.key, CHANNELS[BETA])
    assert status == 403, answer
    assert answer["error"]["field"] == "Authorization"
    assert "--team" in answer["error"]["message"]
    assert _ask_over_api(installed, unbound.key, CHANNELS[BETA], question=True)[0] == 403
    assert installed.approval_ids(BETA) == []

    status, answer = _ask_over_api(installed, bound.key, CHANNELS[BETA])
    assert status == 201, answer
    installed.drain()
    assert len(installed.approval_ids(BETA)) == 1
    assert installed.approval_ids(ALPHA) == []
    assert installed.tokens_used("chat.postMessage", CHANNELS[BETA]) == {"xoxb-beta"}


def test_a_revoke_button_naming_another_workspace_revokes_nothing(installed: OAuthBot) -> None:
    now = datetime.now(UTC)
    grant = Grant(
        grant_id="g1",
        team_id=BETA,
        channel_id=CHANNELS[BETA],
        rule="service-changes",
        tool="restart_service",
        tool_input={"service": "checkout"},
        digest="d" * 64,
        terms="t",
        requester=None,
        granted_by=APPROVER,
        granted_at=now,
        expires_at=now + timedelta(hours=1),
        approval_id="0-x",
        granted_ms=int(now.timestamp() * 1000),
    )
    installed.services.stores.grants.create(grant)
    value = ids.revoke_button_value(BETA, CHANNELS[BETA], "g1")
    for team, kept in ((ALPHA, True), (BETA, False)):  # APPROVER made it: only a click from BETA ends it
        payload = home_click(ids.REVOKE_GRANT_ACTION, value, user=APPROVER, team=slack_requests.Team(team))
        assert installed.poster.post_action(payload).status == 200
        installed.drain()
        assert (installed.services.stores.grants.get(BETA, CHANNELS[BETA], "g1") is not None) is kept, team


def test_an_uninstall_is_acked_within_slack_s_window_whatever_waits_elsewhere(installed: OAuthBot) -> None:
    beta = installed.ask(BETA)
    other_approvals(installed.services.stores.redis, 10_000)  # pipelined
    event = slack_requests.event_callback({"type": "app_uninstalled"}, team=slack_requests.Team(BETA))

    started = time.monotonic()
    assert installed.poster.post_event(event).status == 200
    acked_ms = (time.monotonic() - started) * 1000
    print(f"uninstall acked in {acked_ms:.0f} ms with 10,000 open approvals elsewhere")
    assert acked_ms < 3000  # Slack's window
    assert installed.services.stores.owed_uninstalls.waiting() == 1  # a worker carries it out (the test below)
    assert installed.services.stores.approvals.find(beta) is not None


def test_an_uninstall_a_worker_dropped_half_way_is_finished_by_another(installed: OAuthBot) -> None:
    beta = installed.ask(BETA)
    event = slack_requests.event_callback({"type": "app_uninstalled"}, team=slack_requests.Team(BETA))
    assert installed.poster.post_event(event).status == 200  # acked: the work is owed, nothing of it done
    owed = installed.services.stores.owed_uninstalls
    assert [uninstall.team_id for _id, uninstall in owed.take(lease_s=0.2)] == [BETA]  # a worker takes it, dies

    assert installed.worker.finish_uninstalls() == 0  # held by the dead worker until its lease runs out
    assert installed.services.stores.approvals.find(beta).decision is None  # type: ignore[union-attr]
    time.sleep(0.25)
    assert installed.worker.finish_uninstalls() == 1
    assert installed.services.stores.approvals.find(beta).decision.reason == UNINSTALLED  # type: ignore[union-attr]
    assert owed.waiting() == 0


def test_an_uninstall_reads_and_ends_its_own_workspace_s_requests_only(
    installed: OAuthBot, redis_client: redis.Redis
) -> None:
    beta = [installed.ask(BETA) for _ in range(2)]
    others = other_approvals(redis_client, 3_000)
    before = commands_processed(redis_client)
    event = slack_requests.event_callback({"type": "app_uninstalled"}, team=slack_requests.Team(BETA))
    assert installed.poster.post_event(event).status == 200
    installed.drain()
    spent = commands_processed(redis_client) - before

    approvals = installed.services.stores.approvals
    assert [approvals.find(approval_id).decision.decision for approval_id in beta] == ["expired"] * 2  # type: ignore[union-attr]
    assert approvals.open_in_workspace(BETA, limit=10) == []
    assert len(approvals.open_in_workspace(OTHER_TEAM, limit=5)) == 5, "others' requests stay as they were"
    assert approvals.find(others[0]).decision is None  # type: ignore[union-attr]
    assert spent < 1_500, f"the uninstall cost {spent} Redis commands with 3,000 requests waiting elsewhere"
