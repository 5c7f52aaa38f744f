"""The whole suite in one command: ``python -m tests`` runs ruff, mypy, luacheck and pytest.

Extra arguments go to pytest (``python -m tests -k store``). Every check runs even when an
earlier one fails, so one run shows everything that is wrong.

On a fresh Debian machine the sandbox's browser tests need Chromium, which no Python package ships, and an emoji
font for their screenshots; the Lua lint needs ``luacheck``: run as root with ``apt-get`` at hand, this installs the
missing ``DEBIAN_PACKAGES`` first (those ``.ci/run`` installs; ``tests/test_ci.py`` keeps the two alike). Elsewhere
the browser tests and the Lua lint fail with a message saying what to install.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


DEBIAN_PACKAGES = ("chromium", "fonts-noto-color-emoji", "prometheus", "lua-check")
"""What the tests need from Debian: the browser Playwright drives, emoji for its screenshots, ``promtool``
(in ``prometheus``) that checks the example alert rules, and ``luacheck`` (in ``lua-check``) that lints the Lua
scripts (``tests.lua_lint``)."""


def _installed(package: str) -> bool:
    if package == "chromium" and (
        os.environ.get("SIGNOFF_CHROMIUM") or shutil.which("chromium") or Path("/usr/bin/chromium").exists()
    ):
        return True
    if shutil.which("dpkg") is None:
        return False
    return subprocess.run(["dpkg", "-s", package], capture_output=True, check=False).returncode == 0


def _ensure_debian_packages() -> None:
    """Install the missing ``DEBIAN_PACKAGES`` when this process may (root, apt-get)."""
    missing = [package for package in DEBIAN_PACKAGES if not _installed(package)]
    if not missing:
        return
    names = " ".join(missing)
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        print(f"== {names}: not installed; the checks that need them will say how to install them", flush=True)
        return
    print(f"== {names}: installing from Debian for the browser tests", flush=True)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]
    for command in (["apt-get", "update", "-qq"], install):
        if subprocess.run(command, check=False).returncode != 0:
            print(f"== {names}: {' '.join(command)} failed; the browser tests will fail", flush=True)
            return


def main(pytest_args: list[str]) -> int:
    """Run every check; return 0 only if all passed."""
    _ensure_debian_packages()
    checks = {
        "ruff lint": [sys.executable, "-m", "ruff", "check", "."],
        "ruff format": [sys.executable, "-m", "ruff", "format", "--check", "."],
        "mypy": [sys.executable, "-m", "mypy"],
        "luacheck": [sys.executable, "-m", "tests.lua_lint"],
        "pytest": [sys.executable, "-m", "pytest", *pytest_args],
    }
    failed = []
    for name, command in checks.items():
        print(f"== {name}: {' '.join(command[2:])}", flush=True)
        if subprocess.run(command, cwd=ROOT, check=False).returncode != 0:
            failed.append(name)
    print(f"== failed: {', '.join(failed)}" if failed else "== all checks passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
