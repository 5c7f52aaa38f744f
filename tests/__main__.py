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


PYTEST_WORKERS = "2"
"""pytest-xdist workers: most tests wait on servers and sockets rather than compute, so two workers share 2 cores
well. Each worker starts its own Redis servers (session fixtures); a file's tests stay on one worker
(``--dist loadfile``), so the servers a module shares stay its own. ``-n 0`` runs them in one process."""


def _pytest_command(pytest_args: list[str]) -> list[str]:
    """pytest with the suite's workers, unless the arguments choose their own."""
    chosen = any(arg == "-n" or arg.startswith(("-n", "--numprocesses", "--dist")) for arg in pytest_args)
    workers = [] if chosen or "no:xdist" in pytest_args else ["-n", PYTEST_WORKERS, "--dist", "loadfile"]
    return [sys.executable, "-m", "pytest", *workers, *pytest_args]


def main(pytest_args: list[str]) -> int:
    """Run every check; return 0 only if all passed.

    The lints run beside pytest (their output is shown once pytest ends): they need a core for a minute, while the
    tests mostly wait."""
    _ensure_debian_packages()
    lints = {
        "ruff lint": [sys.executable, "-m", "ruff", "check", "."],
        "ruff format": [sys.executable, "-m", "ruff", "format", "--check", "."],
        "mypy": [sys.executable, "-m", "mypy"],
        "luacheck": [sys.executable, "-m", "tests.lua_lint"],
    }
    running = {
        name: subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, command in lints.items()
    }
    pytest = _pytest_command(pytest_args)
    print(f"== pytest: {' '.join(pytest[2:])}", flush=True)
    failed = [] if subprocess.run(pytest, cwd=ROOT, check=False).returncode == 0 else ["pytest"]
    for name, process in running.items():
        output, _ = process.communicate()
        print(f"== {name}: {' '.join(lints[name][2:])}", flush=True)
        print(output, end="", flush=True)
        if process.returncode != 0:
            failed.append(name)
    print(f"== failed: {', '.join(failed)}" if failed else "== all checks passed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
