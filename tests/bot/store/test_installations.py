"""Installations and OAuth states in Redis (Bolt's stores): kept per workspace or org, found for the team a call is
for, forgotten on uninstall (an org's with the notes of the workspaces it served), a state consumed once; an
unreadable record serves nobody and breaks nothing."""

import redis
from slack_sdk.oauth.installation_store import Installation

from bot.store import keys
from bot.store.installations import Installations
from bot.store.oauth_states import OAuthStates


def _installation(team_id: str | None, *, enterprise_id: str | None = None, org_wide: bool = False) -> Installation:
    return Installation(
        app_id="A0APP",
        enterprise_id=enterprise_id,
        team_id=team_id,
        bot_token=f"xoxb-{team_id or enterprise_id}",
        bot_id="B0BOT",
        bot_user_id="U0BOT",
        bot_scopes="chat:write,commands",
        user_id="U0INSTALLER",
        is_enterprise_install=org_wide,
    )


def test_each_workspace_keeps_its_own_installation(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client)
    installations.save(_installation("T0ALPHA"))
    installations.save(_installation("T0BETA"))
    alpha = installations.find_bot(enterprise_id=None, team_id="T0ALPHA")
    assert alpha is not None
    assert alpha.bot_token == "xoxb-T0ALPHA"
    assert alpha.bot_scopes == ["chat:write", "commands"]
    found = installations.for_team("T0BETA")
    assert found is not None
    assert found.bot_token == "xoxb-T0BETA"
    assert installations.for_team("T0GAMMA") is None
    installations.delete_installation(enterprise_id=None, team_id="T0BETA")
    assert installations.for_team("T0BETA") is None
    assert installations.for_team("T0ALPHA") is not None


def test_an_org_wide_install_serves_its_workspaces_once_one_is_seen(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client)
    installations.save(_installation(None, enterprise_id="E0ORG", org_wide=True))
    bot = installations.find_bot(enterprise_id="E0ORG", team_id=None, is_enterprise_install=True)
    assert bot is not None
    assert bot.bot_token == "xoxb-E0ORG"
    # A request from one of the org's workspaces finds the org's installation ...
    found = installations.find_installation(enterprise_id="E0ORG", team_id="T0ONE")
    assert found is not None
    assert found.bot_token == "xoxb-E0ORG"
    # ... and a call made outside a request (the outbox) finds it by team once that team was seen.
    assert installations.for_team("T0ONE") is None
    installations.remember_org("T0ONE", "E0ORG")
    found = installations.for_team("T0ONE")
    assert found is not None
    assert found.bot_token == "xoxb-E0ORG"
    installations.delete_installation(enterprise_id="E0ORG", team_id=None)
    assert installations.for_team("T0ONE") is None


def test_deleting_an_org_s_install_forgets_the_workspaces_it_served_only(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client)
    installations.save(_installation(None, enterprise_id="E0ORG", org_wide=True))
    installations.save(_installation(None, enterprise_id="E0OTHER", org_wide=True))
    installations.remember_org("T0ONE", "E0ORG")
    installations.remember_org("T0ELSE", "E0OTHER")
    assert installations.org_serving("T0ONE") == "E0ORG"
    assert installations.org_serving("T0NEVER") is None
    installations.delete_org("E0ORG", teams=["T0ONE", "T0ELSE", "T0NEVER"])
    assert installations.find_bot(enterprise_id="E0ORG", team_id=None, is_enterprise_install=True) is None
    assert installations.org_serving("T0ONE") is None
    assert installations.for_team("T0ONE") is None
    found = installations.for_team("T0ELSE")  # another org's workspace keeps its note
    assert found is not None
    assert found.bot_token == "xoxb-E0OTHER"


def test_an_unreadable_installation_serves_nobody(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client)
    installations.save(_installation("T0ALPHA"))
    redis_client.set(keys.installation(team_id="T0BAD", enterprise_id=None, org_wide=False), b"{garbage")
    assert installations.for_team("T0BAD") is None
    assert installations.find_bot(enterprise_id=None, team_id="T0BAD") is None
    assert installations.for_team("T0ALPHA") is not None


def test_a_state_is_consumed_once(redis_client: redis.Redis) -> None:
    states = OAuthStates(redis_client, kept_s=60)
    state = states.issue()
    other = states.issue()
    assert state != other
    assert 0 < redis_client.ttl(keys.oauth_state(state)) <= 60
    assert states.consume(state) is True
    assert states.consume(state) is False  # a replayed callback
    assert states.consume("never-issued") is False
    assert states.consume("") is False
    assert states.consume(other) is True
