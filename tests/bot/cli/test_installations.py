"""``python -m bot installations``, run as an operator runs it: a new key, and every installation sealed with it."""

import redis
from slack_sdk.oauth.installation_store import Installation

from bot.store import keys
from bot.store.workspaces.installations import Installations
from bot.store.workspaces.token_seal import TokenSeal, key_problem
from tests.bot.support.processes import run_bot


def test_new_key_prints_a_key_installation_keys_takes() -> None:
    ran = run_bot(["installations", "new-key"])
    assert ran.returncode == 0, ran.stderr
    assert key_problem(ran.stdout.strip()) is None


def test_rotate_seals_every_installation_with_the_first_key_and_says_how_many(
    redis_url: str, redis_client: redis.Redis
) -> None:
    old = run_bot(["installations", "new-key"]).stdout.strip()
    new = run_bot(["installations", "new-key"]).stdout.strip()
    installation = Installation(app_id="A0APP", team_id="T0ALPHA", bot_token="xoxb-T0ALPHA", user_id="U0INSTALLER")
    Installations(redis_client, seal=TokenSeal([old])).save(installation)

    ran = run_bot(["installations", "rotate"], REDIS_URL=redis_url, INSTALLATION_KEYS=f"{new},{old}")

    assert ran.returncode == 0, ran.stderr
    assert "sealed with the first key: 1; already: 0; no key opens: 0" in ran.stdout
    found = Installations(redis_client, seal=TokenSeal([new])).for_team("T0ALPHA")
    assert found is not None
    assert found.bot_token == "xoxb-T0ALPHA"
    stored = redis_client.get(keys.installation(team_id="T0ALPHA", enterprise_id=None, org_wide=False))
    assert stored is not None
    assert b"xoxb-T0ALPHA" not in stored


def test_rotate_without_the_old_key_leaves_the_record_and_exits_1_naming_what_to_do(
    redis_url: str, redis_client: redis.Redis
) -> None:
    old = run_bot(["installations", "new-key"]).stdout.strip()
    new = run_bot(["installations", "new-key"]).stdout.strip()
    installation = Installation(app_id="A0APP", team_id="T0ALPHA", bot_token="xoxb-T0ALPHA", user_id="U0INSTALLER")
    Installations(redis_client, seal=TokenSeal([old])).save(installation)

    ran = run_bot(["installations", "rotate"], REDIS_URL=redis_url, INSTALLATION_KEYS=new)

    assert ran.returncode == 1
    assert "add that key after the first" in ran.stderr
    assert old not in ran.stderr + ran.stdout
    assert "xoxb-T0ALPHA" not in ran.stderr + ran.stdout


def test_rotate_without_keys_names_installation_keys() -> None:
    ran = run_bot(["installations", "rotate"], REDIS_URL="redis://127.0.0.1:1/0")
    assert ran.returncode == 2
    assert "INSTALLATION_KEYS is not set" in ran.stderr
