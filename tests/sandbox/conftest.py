"""Fixtures: a whole sandbox in this process (embedded Redis, stand-in, bot over HTTP, worker) on a free port, and a
real headless Chromium for the page."""

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bot.sandbox.run import running_sandbox
from bot.sandbox.workspace import SandboxSlack

if TYPE_CHECKING:
    from playwright.sync_api import Browser

    from tests.sandbox.browser import Steps


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[SandboxSlack]:
    """A fresh sandbox, configured as on a fresh machine (no Slack variables, no Redis URL, no policy)."""
    for name in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "REDIS_URL", "APPROVAL_POLICY"):
        monkeypatch.delenv(name, raising=False)
    with running_sandbox(port=0) as slack:
        yield slack


@pytest.fixture(scope="module")
def browser() -> Iterator["Browser"]:
    """Debian's Chromium, headless, through Playwright. Missing either is a failure, not a skip.

    One per module: Playwright's sync API keeps an event loop running in this thread while it is open, and a later
    module on the same pytest-xdist worker that runs its own loop (``asyncio.run``) would find it running."""
    from playwright import sync_api

    from tests.sandbox.browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def steps(browser: "Browser", request: pytest.FixtureRequest) -> Iterator["Steps"]:
    """A fresh page (1400x900) whose screenshots go to ``screenshots/<test name>/``."""
    from playwright.sync_api import expect

    from tests.sandbox.browser import SCREENSHOTS, Steps

    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(15_000)
    # Assertions wait as long as actions: on two busy cores a whole agent round can take over the default 5 s.
    expect.set_options(timeout=15_000)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    yield Steps(context.new_page(), SCREENSHOTS / name)
    context.close()
