"""Lints every Lua script as Redis runs it (prelude, owners' functions, body) with one ``luacheck`` run.

``python -m tests.lua_lint`` (a check of ``python -m tests``). Redis' Lua is 5.1 with ``redis``, ``cjson``,
``KEYS`` and ``ARGV`` (and a few libraries no script uses) as read-only globals: anything else a script names
is an error, as is a name it declares and never uses (a KEYS or ARGV its spec lists that its body ignores).
``luacheck`` is Debian's ``lua-check`` (no registry ships it as a Python package): ``python -m tests`` installs it
with the other ``DEBIAN_PACKAGES``.
"""

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from state.lua import LuaScript

OPTIONS: Final = ("--std", "lua51", "--read-globals", "redis", "cjson", "KEYS", "ARGV", "--max-line-length", "120")
INSTALL: Final = "luacheck not found: install Debian's lua-check (apt-get install lua-check), as `python -m tests` does"


def every_script() -> tuple[LuaScript, ...]:
    """Every script of the project: the bot's, the session store's, the Strands repository's."""
    from agent.strands_bridge.repository import SCRIPTS as REPOSITORY_SCRIPTS
    from bot.store.scripts import EVERY_SPEC
    from state.store import SCRIPTS as STORE_SCRIPTS

    return (*EVERY_SPEC, *STORE_SCRIPTS, *REPOSITORY_SCRIPTS)


def lint(texts: Iterable[tuple[str, str]]) -> subprocess.CompletedProcess[str]:
    """``luacheck``'s verdict on each (name, Lua text), in one run (its return code 0: clean)."""
    luacheck = shutil.which("luacheck")
    if luacheck is None:
        raise FileNotFoundError(INSTALL)
    with tempfile.TemporaryDirectory() as folder:
        for name, text in texts:
            (Path(folder) / f"{name}.lua").write_text(text)
        return subprocess.run(
            [luacheck, *OPTIONS, "--codes", "--no-color", "--quiet", "."],
            cwd=folder,
            capture_output=True,
            text=True,
            check=False,
        )


def main() -> int:
    """Lint every script; print what luacheck found; 0 if nothing."""
    try:
        verdict = lint((f"{script.package}.{script.name}", script.text) for script in every_script())
    except FileNotFoundError as error:
        print(error, file=sys.stderr)
        return 1
    print(verdict.stdout, end="")
    return verdict.returncode


if __name__ == "__main__":
    sys.exit(main())
