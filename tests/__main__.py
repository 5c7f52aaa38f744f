"""The whole suite in one command: ``python -m tests`` runs ruff, mypy and pytest.

Extra arguments go to pytest (``python -m tests -k store``). Every check runs even when an
earlier one fails, so one run shows everything that is wrong.

On a fresh Debian machine the sandbox's browser tests need Chromium, which no Python package
ships: run as root with ``apt-get`` at hand, this installs Debian's ``chromium`` first (as
``.ci/run`` does). Elsewhere those tests fail with a message saying what to install.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ensure_chromium() -> None:
    """Install Debian's Chromium when it is missing and this process may (root, apt-get, no override)."""
    if os.environ.get("SIGNOFF_CHROMIUM") or shutil.which("chromium") or Path("/usr/bin/chromium").exists():
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        print("== chromium: not installed; the browser tests will say how to install it", flush=True)
        return
    print("== chromium: installing Debian's chromium for the browser tests", flush=True)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium"]
    for command in (["apt-get", "update", "-qq"], install):
        if subprocess.run(command, check=False).returncode != 0:
            print(f"== chromium: {' '.join(command)} failed; the browser tests will fail", flush=True)
            return


def main(pytest_args: list[str]) -> int:
    """Run every check; return 0 only if all passed."""
    _ensure_chromium()
    checks = {
        "ruff lint": [sys.executable, "-m", "ruff", "check", "."],
        "ruff format": [sys.executable, "-m", "ruff", "format", "--check", "."],
        "mypy": [sys.executable, "-m", "mypy"],
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
