"""The package layout: dependencies point one way (bot -> agent -> state), loopback_slack stands alone, and every
package ships types."""

import ast
import json
from pathlib import Path

import pytest

from tests.bot.support.processes import ROOT, run_python

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
    result = run_python(["-c", _PROBE, package])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    return report["imported"], set(report["loaded"])


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("state", {"strands", "agent", "bot", "slack_bolt", "slack_sdk"}),
        ("agent", {"bot", "slack_bolt", "slack_sdk"}),
        # Slack itself on a loopback port (the sandbox, the tests and the benches use it): it knows Slack, not the bot.
        # It signs the requests it sends with ``slack_sdk``'s signer, as Slack would sign them; Bolt is the bot's side.
        ("loopback_slack", {"bot", "agent", "state", "strands", "slack_bolt"}),
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


@pytest.mark.parametrize("package", ["state", "agent", "bot", "loopback_slack"])
def test_every_package_ships_py_typed(package: str) -> None:
    assert (ROOT / package / "py.typed").is_file()


# Inside ``bot`` the tree is the architecture: a click arrives in ``slack``, is decided in ``flow``, is kept
# in ``store``; ``render`` turns records into what people see; ``domain`` is the vocabulary of them all.
# Each layer may import only the layers listed for it. The modules at the top of ``bot`` (settings, the
# services that wire everything, the worker process, preflight) and ``cli`` / ``sandbox`` compose them.
_LAYERS: dict[str, set[str]] = {
    "domain": set(),
    # Operability (probes, logs, metrics): any layer records into it, it reads none of them.
    "observe": set(),
    "render": {"domain"},
    "store": {"domain", "observe"},
    "flow": {"store", "render", "domain", "observe"},
    "slack": {"flow", "store", "render", "domain", "observe"},
    # Inbound edges beside Slack: the HTTP API under /v1/, and the MCP server (a client of that API).
    "api": {"flow", "store", "render", "domain", "observe"},
    "mcp": {"render", "domain"},  # a client of the HTTP API: it reads no record and runs no flow
}
# Top-level modules a layer may still read: plain settings. ``slack`` never imports the services that build it (its
# listeners are handed the parts they use: ``bot.slack.parts``), so the two packages form no cycle; ``mcp`` reads
# none (``bot.cli.mcp`` hands it its own settings).
_SHARED = {
    "slack": {"settings", "preflight"},
    "api": {"settings", "preflight"},  # the services build it: it never imports them back
    "flow": {"settings"},
}


def _bot_imports(path: Path) -> set[str]:
    """The ``bot.<name>`` first components imported by the module at ``path``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "bot":
                continue
            if len(parts) > 1:
                found.add(parts[1])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "bot" and len(parts) > 1:
                    found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", sorted(_LAYERS))
def test_bot_layers_import_only_the_layers_below(layer: str) -> None:
    modules = sorted((ROOT / "bot" / layer).rglob("*.py"))
    assert modules, f"bot/{layer} has no modules"
    allowed = _LAYERS[layer] | {layer} | _SHARED.get(layer, set())
    wrong = {
        str(path.relative_to(ROOT)): sorted(imported - allowed)
        for path in modules
        if (imported := _bot_imports(path)) - allowed
    }
    assert wrong == {}, f"bot/{layer} may import only {sorted(allowed)}"


# Inside ``slack`` two sides meet only in the listeners and the app: ``edge`` receives Slack's requests, ``outbound``
# calls Slack (through the outbox). Neither imports the other.
_APART = (("slack/edge", "bot.slack.outbound"), ("slack/outbound", "bot.slack.edge"))


@pytest.mark.parametrize(("folder", "forbidden"), _APART)
def test_slack_edge_and_outbound_stay_apart(folder: str, forbidden: str) -> None:
    modules = sorted((ROOT / "bot" / folder).rglob("*.py"))
    assert modules, f"bot/{folder} has no modules"
    wrong = {
        str(path.relative_to(ROOT)): names
        for path in modules
        if (names := sorted(n for n in _imported_modules(path) if n == forbidden or n.startswith(f"{forbidden}.")))
    }
    assert wrong == {}


def test_bot_has_no_flat_modules_beyond_its_composition() -> None:
    flat = {path.stem for path in (ROOT / "bot").glob("*.py")}
    assert flat == {"__init__", "__main__", "settings", "services", "worker", "preflight"}


def test_listeners_reach_redis_only_through_its_owners() -> None:
    # Every Redis record has one owner in bot/store; a listener writing a raw key would be a second.
    raw = {
        str(path.relative_to(ROOT)): node.lineno
        for path in sorted((ROOT / "bot" / "slack" / "listeners").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if (isinstance(node, ast.Attribute) and node.attr == "redis")
        or (
            isinstance(node, ast.ImportFrom)
            and node.module == "bot.store"
            and any(a.name == "keys" for a in node.names)
        )
    }
    assert raw == {}, "listeners use services' stores, not services.stores.redis or bot.store.keys"


def _imported_modules(path: Path) -> set[str]:
    """Every dotted module the module at ``path`` imports (absolute imports)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_the_product_never_imports_the_tests() -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(name for name in _imported_modules(path) if name.split(".")[0] == "tests")
        for package in ("state", "agent", "bot", "loopback_slack")
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {path: names for path, names in wrong.items() if names} == {}


# The loopback Slack's interface: what its package and its ``slack_requests`` export (``__all__``); the rest is its own.
_LOOPBACK_INTERFACE = ("loopback_slack", "loopback_slack.slack_requests")


def _exported(package: str) -> set[str]:
    """``package`` and the dotted names of what its ``__init__`` lists in ``__all__``."""
    init = ROOT.joinpath(*package.split("."), "__init__.py")
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return {package} | {f"{package}.{name}" for name in ast.literal_eval(node.value)}
    return {package}


def test_the_loopback_slack_is_used_through_its_interface() -> None:
    inside = ROOT / "loopback_slack"
    interface = set().union(*map(_exported, _LOOPBACK_INTERFACE))
    wrong = {
        str(path.relative_to(ROOT)): sorted(
            name for name in _imported_modules(path) if name.startswith("loopback_slack.") and name not in interface
        )
        for folder in ("bot", "tests", "bench", "recipes")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if inside not in path.parents
    }
    assert {path: names for path, names in wrong.items() if names} == {}


# The unit tests mirror the source tree, as Strands' tests mirror ``src/strands``:
# ``tests/<package>/<path>/test_<name>.py`` tests ``<package>/<path>/<name>.py`` (or the package
# ``<package>/<path>/<name>/``). Scenarios drive the whole bot or the whole agent loop across modules, and support
# serves them; neither mirrors. Files not named ``test_*`` (fixtures, doubles, helpers) are not checked. The Strands
# suite (``tests/strands``) and the sandbox, recipes and docs folders test their subject as a whole and are not
# mirrored either.
_NOT_MIRRORED: dict[str, set[str]] = {
    "state": set(),
    "agent": {"scenarios"},
    "bot": {"scenarios", "support"},
    "loopback_slack": set(),
}


def _orphans(package: str) -> list[str]:
    """The test files under ``tests/<package>`` that name no module of ``<package>`` at the same path."""
    tests = ROOT / "tests" / package
    orphans = []
    for path in sorted(tests.rglob("test_*.py")):
        relative = path.relative_to(tests)
        if relative.parts[0] in _NOT_MIRRORED[package]:
            continue
        module = ROOT / package / relative.with_name(path.name.removeprefix("test_"))
        if not module.is_file() and not (module.with_suffix("") / "__init__.py").is_file():
            orphans.append(str(path.relative_to(ROOT)))
    return orphans


@pytest.mark.parametrize("package", sorted(_NOT_MIRRORED))
def test_every_unit_test_names_the_module_it_tests(package: str) -> None:
    assert any((ROOT / "tests" / package).rglob("test_*.py")), f"tests/{package} has no tests"
    assert _orphans(package) == [], f"name each test file after the module of {package}/ it tests, at the same path"


_MAX_MODULE_LINES = 500


def _too_long(root: Path) -> dict[str, int]:
    """The product's modules and Lua scripts under ``root`` over the limit, with their lengths."""
    return {
        str(path.relative_to(root)): lines
        for package in ("state", "agent", "bot", "loopback_slack")
        for suffix in ("py", "lua")
        for path in sorted((root / package).rglob(f"*.{suffix}"))
        if (lines := len(path.read_text().splitlines())) > _MAX_MODULE_LINES
    }


def test_no_product_module_is_over_500_lines() -> None:
    # A module that long holds more than one idea: split it where its docstring would need an "and".
    assert _too_long(ROOT) == {}


def test_a_lua_script_counts_as_a_module(tmp_path: Path) -> None:
    (tmp_path / "bot" / "store").mkdir(parents=True)
    (tmp_path / "bot" / "store" / "long.lua").write_text("return 0\n" * (_MAX_MODULE_LINES + 1))
    (tmp_path / "bot" / "store" / "short.lua").write_text("return 0\n" * _MAX_MODULE_LINES)

    assert _too_long(tmp_path) == {"bot/store/long.lua": _MAX_MODULE_LINES + 1}
