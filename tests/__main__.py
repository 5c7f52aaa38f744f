"""The whole suite in one command: ``python -m tests`` runs ruff, mypy and pytest.

Extra arguments go to pytest (``python -m tests -k store``). Every check runs even when an
earlier one fails, so one run shows everything that is wrong.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(pytest_args: list[str]) -> int:
    """Run every check; return 0 only if all passed."""
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
