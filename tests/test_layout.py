"""The package layout: dependencies point one way (bot -> agent -> state), and every package ships types."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Imports every module of the package in a fresh interpreter, then prints the top-level names of all
# loaded modules. Imports only ever add modules, so if the union of all of them stays clean, each
# single import does too.
_PROBE = """
import importlib, json, pkgutil, sys
package = importlib.import_module(sys.argv[1])
imported = [package.__name__]
for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
    if module.name.rsplit(".", 1)[-1] == "__main__":
        continue  # importing it would run the program
    importlib.import_module(module.name)
    imported.append(module.name)
print(json.dumps({"imported": imported, "loaded": sorted({name.split(".")[0] for name in sys.modules})}))
"""


def import_everything(package: str) -> tuple[list[str], set[str]]:
    """Return the modules of ``package`` that were imported and the top-level packages then loaded."""
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, package],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    return report["imported"], set(report["loaded"])


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("state", {"strands", "agent", "bot", "slack_bolt", "slack_sdk"}),
        ("agent", {"bot", "slack_bolt", "slack_sdk"}),
    ],
)
def test_importing_a_package_loads_nothing_above_it(package: str, forbidden: set[str]) -> None:
    imported, loaded = import_everything(package)

    # The probe really imported every module of the package (state.store, state.interrupt, ...).
    modules = {f"{package}.{path.stem}" for path in (ROOT / package).glob("*.py")} - {
        f"{package}.__init__",
        f"{package}.__main__",
    }
    assert modules <= set(imported)
    assert package in loaded
    assert loaded & forbidden == set(), f"importing {imported} loaded {sorted(loaded & forbidden)}"


@pytest.mark.parametrize("package", ["state", "agent", "bot"])
def test_every_package_ships_py_typed(package: str) -> None:
    assert (ROOT / package / "py.typed").is_file()
