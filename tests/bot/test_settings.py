"""Choosing one workspace (a bot token) or many (OAuth): a wrong choice is named, with how to fix it."""

import pytest

from bot.settings import ConfigError, load_settings

_KEY = "q2S0lxBiN1n4o3VQ6Wm5s3JbQ0e8r0iE1Qy3dAq7R0k="
_OAUTH = {
    "SLACK_CLIENT_ID": "111.222",
    "SLACK_CLIENT_SECRET": "s3cret",
    "SLACK_SIGNING_SECRET": "signing",
    "INSTALLATION_KEYS": _KEY,
}


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", *_OAUTH):
        monkeypatch.delenv(variable, raising=False)


def test_client_id_and_secret_without_a_token_is_oauth_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in _OAUTH.items():
        monkeypatch.setenv(variable, value)
    settings = load_settings("http")
    assert settings.oauth
    assert load_settings("worker").oauth


def test_a_token_keeps_the_single_workspace_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-one")
    assert not load_settings("worker").oauth


@pytest.mark.parametrize(
    ("unset", "named"),
    [
        ("SLACK_CLIENT_SECRET", "SLACK_CLIENT_SECRET is not set"),
        ("SLACK_SIGNING_SECRET", "SLACK_SIGNING_SECRET"),
        ("INSTALLATION_KEYS", "INSTALLATION_KEYS is not set: .*python -m bot installations new-key"),
    ],
)
def test_oauth_names_what_is_missing(monkeypatch: pytest.MonkeyPatch, unset: str, named: str) -> None:
    for variable, value in _OAUTH.items():
        if variable != unset:
            monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigError, match=named):
        load_settings("http")


def test_a_token_and_a_client_id_together_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-one")
    monkeypatch.setenv("SLACK_CLIENT_ID", "111.222")
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN and SLACK_CLIENT_ID are both set") as refused:
        load_settings("worker")
    assert "xoxb-one" not in str(refused.value)


def test_socket_mode_cannot_serve_many_workspaces(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable, value in _OAUTH.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-1")
    with pytest.raises(ConfigError, match="Socket Mode serves the one workspace"):
        load_settings("socket")


def test_an_installation_key_that_is_not_one_is_named_by_its_place_never_quoted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for variable, value in _OAUTH.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.setenv("INSTALLATION_KEYS", f"{_KEY}, not-a-key-but-a-secret")
    with pytest.raises(ConfigError, match="INSTALLATION_KEYS: key 2 of 2 is not a Fernet key") as refused:
        load_settings("http")
    assert "not-a-key-but-a-secret" not in str(refused.value)
    assert _KEY not in str(refused.value)


def test_the_web_process_cannot_serve_metrics_apart_on_its_own_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-one")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "signing")
    monkeypatch.setenv("PORT", "3000")
    monkeypatch.setenv("METRICS_PORT", "3000")
    with pytest.raises(ConfigError, match=r"METRICS_PORT must differ from PORT \(3000\)"):
        load_settings("http")
    assert load_settings("worker").metrics_port == 3000  # the worker serves nothing on PORT


@pytest.mark.parametrize(("written", "seconds"), [(None, 7 * 86_400), ("90", 90), ("1h30m", 5400), ("2d", 172_800)])
def test_default_expiry_is_a_duration_as_a_policy_file_writes_one(
    monkeypatch: pytest.MonkeyPatch, written: str | None, seconds: int
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-one")
    if written is None:
        monkeypatch.delenv("DEFAULT_EXPIRY", raising=False)
    else:
        monkeypatch.setenv("DEFAULT_EXPIRY", written)
    assert load_settings("worker").default_expiry == seconds


@pytest.mark.parametrize(
    ("written", "named"),
    [
        ("soon", "DEFAULT_EXPIRY: expected a duration like 90, '15m' or '1h30m', got 'soon'"),
        ("0", "DEFAULT_EXPIRY: a duration must be at least one second"),
        ("never", "DEFAULT_EXPIRY: must be a duration: a rule that waits until decided says 'expiry: never' itself"),
    ],
)
def test_a_default_expiry_that_is_not_a_duration_is_named(
    monkeypatch: pytest.MonkeyPatch, written: str, named: str
) -> None:
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-one")
    monkeypatch.setenv("DEFAULT_EXPIRY", written)
    with pytest.raises(ConfigError) as refused:
        load_settings("worker")
    assert named in str(refused.value)
