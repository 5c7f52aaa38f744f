"""The sandbox's clock control: moving time forward shows the reminder the policy asks for."""

import time
from datetime import datetime, timedelta

from playwright.sync_api import Locator, Page, expect

from bot.render import action_ids as ids
from bot.sandbox.workspace import SandboxSlack
from tests.sandbox.browser import Steps
from tests.sandbox.client import REQUESTER

APPROVE = f"[data-testid=button-{ids.APPROVE_ACTION}]"


def _ask_for_a_restart(sandbox: SandboxSlack, page: Page) -> Locator:
    """The requester asks for a restart in the page; the thread it starts."""
    page.goto(f"http://127.0.0.1:{sandbox.port}/?as={REQUESTER}")
    composer = page.get_by_test_id("composer-input")
    composer.fill("@signoff restart checkout")
    composer.press("Enter")
    return page.get_by_test_id("thread-messages")


def _day_of(requested_s: float, *, now_s: float) -> str:
    """How the page names the day of ``requested_s`` when its clock reads ``now_s`` (in this machine's time zone,
    the browser's too): a test run near midnight crosses a day, so the name is worked out, not assumed."""
    requested, today = datetime.fromtimestamp(requested_s).date(), datetime.fromtimestamp(now_s).date()
    if requested == today:
        return "Today"
    if requested == today - timedelta(days=1):
        return "Yesterday"
    return f"{requested:%b} {requested.day}"


def test_moving_the_clock_shows_a_reminder(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    thread = _ask_for_a_restart(sandbox, page)
    expect(thread.locator(APPROVE)).to_be_visible()
    steps.shot("waiting-for-approval")
    page.get_by_role("button", name="+1 h").click()
    expect(thread).to_contain_text("Still waiting for a decision", timeout=20_000)
    expect(thread).to_contain_text("Escalation, level 1", timeout=20_000)
    steps.shot("reminder-after-an-hour")


def test_messages_are_stamped_and_dated_by_the_moved_clock(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    thread = _ask_for_a_restart(sandbox, page)
    approval = thread.locator("[data-testid=message]", has=page.locator(APPROVE)).last
    expect(approval).to_be_visible()
    requested_s = float(approval.get_attribute("data-ts") or 0)
    expect(approval).to_contain_text(f"Requested {_day_of(requested_s, now_s=time.time())}")

    page.get_by_role("button", name="+1 h").click()
    reminder = thread.locator("[data-testid=message]", has_text="Still waiting for a decision").last
    expect(reminder).to_be_visible(timeout=20_000)
    # Stamped an hour on, as the clock shows (Slack stamps a message when it is posted, in its own time).
    assert float(reminder.get_attribute("data-ts") or 0) > time.time() + 3000

    page.get_by_role("button", name="+1 day").click()
    a_day_and_an_hour_on = time.time() + 3600 + 86400
    assert _day_of(requested_s, now_s=a_day_and_an_hour_on) != "Today"
    expect(approval).to_contain_text(f"Requested {_day_of(requested_s, now_s=a_day_and_an_hour_on)}")
    steps.shot("a-day-later")
