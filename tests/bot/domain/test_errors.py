"""The bot's errors share one base, and a catch-all ``except Exception`` stands only at a named boundary."""

import ast
import json
from pathlib import Path

from tests.bot.support.processes import ROOT, run_python

# The loopback Slack's own error (it answers the bot as Slack would): not an error of the bot. The cluster client's
# last timeout is redis-py's TimeoutError on purpose, and a cluster no node of which answers its ConnectionError:
# every handler of Redis trouble must take them as such, and none that catches the bot's own errors (answered as the
# person's or the operator's mistake) may.
_NOT_THE_BOTS = {
    "loopback_slack.calls.SlackError",
    "bot.store.cluster_client.FinalTimeout",
    "bot.store.cluster_client.ClusterUnreachable",
}

# Where a catch-all is the point, by (file, enclosing function): everything else names what it catches.
BOUNDARIES = {
    ("bot/store/queues/due.py", "DueQueue._claim_at"): "a claim that raised may still have run: remembered, raised",
    ("bot/store/queues/due.py", "_claim_each"): "claims that raised may still have run: remembered, raised",
    ("bot/flow/job_pool.py", "JobPool._run"): "a runner thread outlives any bug in the job it ran",
    ("bot/flow/runner.py", "SessionRunner._resume"): "the agent's code may raise anything; only its own bug is kept",
    ("bot/flow/runner.py", "SessionRunner._agent"): "the factory is the operator's code; only its own bug is kept",
    ("bot/flow/runner.py", "_run"): "the agent's code may raise anything; only its own bug is kept",
    ("bot/flow/escalation.py", "Escalator.tick"): "one scheduled step's bug must not hold up the batch",
    ("bot/worker.py", "Worker._loop"): "the worker's loops outlive any bug in one step",
    ("bot/slack/listeners/lazy.py", "lazily.run"): "Bolt only logs a lazy listener's failure: the clicker is told",
    ("bot/worker.py", "Worker._handle_job"): "the agent's code may raise anything; the job is retried",
    ("bot/api/app.py", "api_wsgi_app.application"): "a bug is answered as a 500 in the API's own shape",
    ("bot/slack/edge/clicks.py", "ApproveClicks.serve"): "a click is answered and the clicker told, whatever failed",
    ("bot/slack/edge/clicks.py", "ApproveClicks.serve_acked"): "the clicker is told, whatever failed",
    (
        "bot/slack/outbound/delivery.py",
        "Deliverer.deliver_due",
    ): "a lane's error is kept like a pool future's, then raised",
    (
        "bot/slack/outbound/delivery.py",
        "Deliverer._deliver",
    ): "an entry's bug or bad data parks it instead of a retry forever",
    ("bot/store/queues/shard_trouble.py", "_own_answer"): "one shard's bug must not cost the other shards' answers",
    (
        "bot/store/cluster_client.py",
        "BotNodesManager._refresh_layout",
    ): "a refresh on a thread of its own, whose error no caller would see: logged",
    ("bot/cli/gunicorn_config.py", "_built_in_a_child"): "a fork of gunicorn's master ends there, whatever failed",
    ("agent/agent.py", "Agent._save"): "memory is rolled back whatever failed the save, and the error raised",
    ("agent/tools.py", "AgentTool.invoke"): "a tool's failure, whatever it is, is reported to the model",
    ("agent/strands_bridge/multi_agent.py", "MultiAgentRunnable.__call__"): (
        "a Graph raises the error of a node its hook refused; any other error is raised again"
    ),
}


# Importing every module (the CLI, the sandbox) sets up process-wide state: the walk runs in its own interpreter.
_PROBE = """
import importlib, inspect, json, pkgutil, sys
import bot
from bot.domain.errors import SignoffError

errors, outside = 0, []
for module in pkgutil.walk_packages(bot.__path__, "bot."):
    if module.name.rsplit(".", 1)[-1] == "__main__":
        continue  # importing it would run the program
    for value in vars(importlib.import_module(module.name)).values():
        if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.name:
            name = f"{value.__module__}.{value.__qualname__}"
            if name not in sys.argv[1:]:
                errors += 1
                outside += [] if issubclass(value, SignoffError) else [name]
print(json.dumps({"errors": errors, "outside": sorted(set(outside))}))
"""


def test_every_error_bot_defines_derives_from_signoff_error() -> None:
    result = run_python(["-c", _PROBE, *_NOT_THE_BOTS])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["errors"] > 10  # the walk found them (ConfigError, PolicyError, NotReady, ...)
    assert report["outside"] == []


def _catch_alls(path: Path) -> list[tuple[str, int]]:
    """The enclosing function and line of each ``except Exception`` (or bare ``except``) in ``path``."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, scope: tuple[str, ...]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                visit(child, (*scope, child.name))
                continue
            if isinstance(child, ast.ExceptHandler):
                caught = child.type.elts if isinstance(child.type, ast.Tuple) else [child.type]
                if any(kind is None or (isinstance(kind, ast.Name) and kind.id == "Exception") for kind in caught):
                    found.append((".".join(scope), child.lineno))
            visit(child, scope)

    visit(ast.parse(path.read_text(), filename=str(path)), ())
    return found


def test_catch_alls_stand_only_at_the_named_boundaries() -> None:
    seen: set[tuple[str, str]] = set()
    unnamed: list[str] = []
    for package in ("bot", "loopback_slack", "agent", "state"):
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            for function, line in _catch_alls(path):
                if (relative, function) in BOUNDARIES:
                    seen.add((relative, function))
                else:
                    unnamed.append(f"{relative}:{line} in {function or '<module>'}")
    assert unnamed == [], "catch what can arise there, or name the boundary in BOUNDARIES with its reason"
    assert set(BOUNDARIES) - seen == set(), "a boundary that no longer catches everything leaves the list"
