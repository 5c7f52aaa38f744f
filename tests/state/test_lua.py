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
