"""Every Lua script of the project: loadable on Redis and on a cluster, named KEYS and ARGV only, and lint-clean."""

import re
from hashlib import sha1
from pathlib import Path

import pytest
import redis

from tests import lua_lint
from tests.redis_targets import TARGETS

ROOT = Path(__file__).resolve().parent.parent
_NUMBERED = re.compile(r"\b(KEYS|ARGV)\[\s*\d+\s*\]")


def _code(path: Path) -> str:
    """The Lua of ``path`` without its comments (they may speak of positions)."""
    return "\n".join(line.split("--", 1)[0] for line in path.read_text().splitlines())


@pytest.mark.parametrize("redis_target", TARGETS, indirect=True)
def test_every_script_loads_on_redis(redis_client: redis.Redis) -> None:
    for script in lua_lint.every_script():
        assert redis_client.script_load(script.text) == sha1(script.text.encode()).hexdigest(), script.name


def test_no_lua_file_reads_keys_or_argv_by_number() -> None:
    files = [path for folder in ("bot", "state", "agent") for path in (ROOT / folder).rglob("*.lua")]
    assert len(files) >= 26 + 6  # every script and every owners' file was found

    numbered = {str(path.relative_to(ROOT)): _NUMBERED.findall(_code(path)) for path in files}

    assert {path: found for path, found in numbered.items() if found} == {}


def test_each_script_s_file_is_read_with_its_spec_s_names() -> None:
    for script in lua_lint.every_script():
        words = set(re.findall(r"\w+", _code(ROOT / script.package.replace(".", "/") / f"{script.name}.lua")))
        assert {*script.keys, *script.optional_keys, *script.args} <= words, script.name


def test_luacheck_finds_nothing_in_the_scripts() -> None:
    verdict = lua_lint.lint((f"{script.package}.{script.name}", script.text) for script in lua_lint.every_script())

    assert verdict.returncode == 0, verdict.stdout


def test_luacheck_finds_an_undeclared_name_and_an_unused_key() -> None:
    [decide] = [script for script in lua_lint.every_script() if script.name == "decide"]
    planted = decide.text.replace("kind = attempt_kind,", "kind = attmept_kind,")

    verdict = lua_lint.lint([("planted", planted)])

    assert verdict.returncode != 0
    assert "accessing undefined variable 'attmept_kind'" in verdict.stdout.replace("\x1b", "")
    assert "unused variable 'attempt_kind'" in verdict.stdout


def test_the_check_says_to_install_lua_check_when_luacheck_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))

    assert lua_lint.main() == 1
    assert "install Debian's lua-check" in capsys.readouterr().err
