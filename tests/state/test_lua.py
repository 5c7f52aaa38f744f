"""``LuaScript``: a ``.lua`` file run with a prelude naming its KEYS, ARGV and constants, and the owners' functions."""

import pytest
import redis

from state.lua import LuaScript

_PRUNE = LuaScript("state", "prune_interrupted", keys=("session_key", "interrupted_key"), args=("session_id",))


def test_the_prelude_names_each_key_and_argument_in_its_place() -> None:
    assert _PRUNE.prelude.splitlines() == [
        "local session_key = KEYS[1]",
        "local interrupted_key = KEYS[2]",
        "local session_id = ARGV[1]",
    ]


def test_the_prelude_defines_only_the_constants_the_body_uses() -> None:
    script = LuaScript(
        "state",
        "save_session",
        keys=("session_key", "interrupted_key"),
        constants=(("session_id", "it's"), ("UNUSED", 7)),
        owners=("session",),
    )

    assert "local session_id = 'it\\'s'" in script.prelude
    assert "UNUSED" not in script.text


def test_an_owner_s_function_comes_before_the_prelude_when_the_body_uses_it() -> None:
    save = LuaScript("state", "save_session", keys=("session_key",), owners=("session",))
    unused = LuaScript("state", "prune_interrupted", keys=("session_key",), owners=("session",))

    assert save.text.index("local function read_version(") < save.text.index("local session_key = KEYS[1]")
    assert "read_version" not in unused.text


def test_a_call_s_keys_and_arguments_are_built_by_name_in_the_spec_s_order() -> None:
    assert _PRUNE.key_list(interrupted_key="i", session_key="s") == ["s", "i"]
    assert _PRUNE.arg_list(session_id="x") == ["x"]
    with pytest.raises(TypeError, match=r"missing=<\['interrupted_key'\]>, unknown=<\['other'\]>"):
        _PRUNE.key_list(session_key="s", other="o")
    with pytest.raises(TypeError, match="takes no keys past its named ones"):
        _PRUNE.key_list("more", session_key="s", interrupted_key="i")


def test_the_script_runs_as_named(redis_client: redis.Redis) -> None:
    redis_client.zadd("index", {"gone": 1})
    run = redis_client.register_script(_PRUNE.text)

    assert run(keys=_PRUNE.key_list(session_key="session", interrupted_key="index"), args=["gone"]) == 1
    assert redis_client.zcard("index") == 0


_OPTIONAL = LuaScript(
    "state", "prune_interrupted", keys=("session_key",), optional_keys=("interrupted_key", "extra_key")
)


def test_optional_keys_follow_the_others_in_the_prelude() -> None:
    assert _OPTIONAL.prelude.splitlines()[:3] == [
        "local session_key = KEYS[1]",
        "local interrupted_key = KEYS[2]",
        "local extra_key = KEYS[3]",
    ]


def test_a_call_leaves_out_a_trailing_run_of_optional_keys() -> None:
    assert _OPTIONAL.key_list(session_key="s") == ["s"]
    assert _OPTIONAL.key_list(session_key="s", interrupted_key="i", extra_key=None) == ["s", "i"]
    assert _OPTIONAL.key_list(extra_key="e", interrupted_key="i", session_key="s") == ["s", "i", "e"]
    with pytest.raises(TypeError, match=r"given=<\['extra_key'\]> \| optional keys are left out from one on"):
        _OPTIONAL.key_list(session_key="s", extra_key="e")  # the script would read it as interrupted_key
    with pytest.raises(TypeError, match=r"missing=<\['session_key'\]>, unknown=<\[\]>"):
        _OPTIONAL.key_list(session_key=None, interrupted_key="i")
    with pytest.raises(TypeError, match=r"unknown=<\['other_key'\]>"):
        _OPTIONAL.key_list(session_key="s", other_key="o")


def test_optional_keys_are_refused_with_more_keys() -> None:
    with pytest.raises(ValueError, match="optional_keys and more_keys"):
        LuaScript(
            "state", "prune_interrupted", keys=("session_key",), optional_keys=("interrupted_key",), more_keys=True
        )
