"""Installations and OAuth states in Redis (Bolt's stores): kept per workspace or org, found for the team a call is
for, forgotten on uninstall (an org's with the notes of the workspaces it served, which it also forgets when they are
taken from it), a state consumed once; an unreadable record serves nobody and breaks nothing."""

import pytest
import redis
from slack_sdk.oauth.installation_store import Installation

from bot.store import keys
from bot.store.workspaces.installations import Installations
from bot.store.workspaces.oauth_states import OAuthStates
from bot.store.workspaces.token_seal import TokenSeal, new_key
from tests.redis_targets import on_both

pytest_generate_tests = on_both  # the rotation's compare-and-set runs on a cluster as on one server


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


def test_an_org_forgets_the_workspaces_taken_from_it_only(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client)
    installations.save(_installation(None, enterprise_id="E0ORG", org_wide=True))
    installations.save(_installation(None, enterprise_id="E0OTHER", org_wide=True))
    for team_id in ("T0ONE", "T0TWO"):
        installations.remember_org(team_id, "E0ORG")
    installations.remember_org("T0ELSE", "E0OTHER")
    installations.forget_org_of("E0ORG", teams=["T0ONE", "T0ELSE", "T0NEVER"])
    assert installations.for_team("T0ONE") is None
    assert installations.org_serving("T0TWO") == "E0ORG"
    assert installations.org_serving("T0ELSE") == "E0OTHER"
    assert installations.find_bot(enterprise_id="E0ORG", team_id=None, is_enterprise_install=True) is not None


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


def _key_of(team_id: str) -> str:
    return keys.installation(team_id=team_id, enterprise_id=None, org_wide=False)


def test_a_sealed_installation_keeps_no_token_in_clear_and_serves_with_it(redis_client: redis.Redis) -> None:
    installations = Installations(redis_client, seal=TokenSeal([new_key()]))
    installations.save(_installation("T0ALPHA"))
    stored = redis_client.get(_key_of("T0ALPHA"))
    assert stored is not None
    assert b"xoxb-T0ALPHA" not in stored
    found = installations.for_team("T0ALPHA")
    assert found is not None
    assert found.bot_token == "xoxb-T0ALPHA"


def test_rotating_seals_every_installation_with_the_new_key_then_the_old_one_can_go(
    redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    old, new = new_key(), new_key()
    Installations(redis_client, seal=TokenSeal([old])).save(_installation("T0ALPHA"))
    Installations(redis_client).save(_installation("T0BETA"))  # written before sealing existed: in clear
    assert Installations(redis_client, seal=TokenSeal([new])).for_team("T0ALPHA") is None  # the old key is needed
    assert "xoxb-T0ALPHA" not in caplog.text

    done = Installations(redis_client, seal=TokenSeal([new, old])).reseal_all()
    assert (done.resealed, done.current, done.unopenable) == (2, 0, 0)
    only_new = Installations(redis_client, seal=TokenSeal([new]))
    for team in ("T0ALPHA", "T0BETA"):
        found = only_new.for_team(team)
        assert found is not None
        assert found.bot_token == f"xoxb-{team}"
        stored = redis_client.get(_key_of(team))
        assert stored is not None
        assert f"xoxb-{team}".encode() not in stored
    again = Installations(redis_client, seal=TokenSeal([new, old])).reseal_all()
    assert (again.resealed, again.current, again.unopenable) == (0, 2, 0)


def test_an_installation_no_key_opens_is_left_as_it_is_and_counted(redis_client: redis.Redis) -> None:
    Installations(redis_client, seal=TokenSeal([new_key()])).save(_installation("T0ALPHA"))
    before = redis_client.get(_key_of("T0ALPHA"))
    done = Installations(redis_client, seal=TokenSeal([new_key()])).reseal_all()
    assert (done.resealed, done.unopenable) == (0, 1)
    assert redis_client.get(_key_of("T0ALPHA")) == before
