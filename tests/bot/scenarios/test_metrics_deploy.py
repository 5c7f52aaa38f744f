"""The example alert rules and Grafana dashboard (``deploy/``) name only metrics the bot really exports (as a live
``/metrics`` shows them), the dashboard shows every one of them, and ``promtool`` accepts the rules (when installed)."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from tests.bot.support.harness import Bot
from tests.bot.support.scrapes import Scrape

ROOT = Path(__file__).resolve().parents[3]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "signoff.json"
_METRIC = re.compile(r"\bsignoff_[a-z_]+\b")
_SERIES_SUFFIXES = ("_bucket", "_count", "_sum", "_total")


def _alert_expressions() -> list[str]:
    rules = [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]
    return [str(rule["expr"]) for rule in rules]


def _dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [str(target["expr"]) for panel in panels for target in panel["targets"]]


@pytest.mark.single_redis  # reads the names off one live /metrics; the layout does not change them
def test_every_alert_and_dashboard_expression_names_exported_metrics(bot: Bot) -> None:
    exported = Scrape(bot.url.rstrip("/") + "/metrics").sample_names()
    expressions = _alert_expressions() + _dashboard_expressions()
    assert expressions
    for expression in expressions:
        named = set(_METRIC.findall(expression))
        assert named, f"names no metric of Signoff: {expression}"
        assert named <= exported, f"{sorted(named - exported)} not exported; in: {expression}"


@pytest.mark.single_redis
def test_the_dashboard_shows_every_exported_metric(bot: Bot) -> None:
    families = {family.name for family in Scrape(bot.url.rstrip("/") + "/metrics").families}
    ours = {name for name in families if name.startswith("signoff_")}
    shown = {_family(name) for expression in _dashboard_expressions() for name in _METRIC.findall(expression)}
    assert ours - shown == set()


def test_promtool_accepts_the_alert_rules() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    checked = subprocess.run(
        [promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _family(sample: str) -> str:
    for suffix in _SERIES_SUFFIXES:
        if sample.endswith(suffix):
            return sample.removesuffix(suffix)
    return sample
