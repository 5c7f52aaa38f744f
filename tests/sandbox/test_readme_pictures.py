"""The README's pictures of the sandbox are made by this browser test: an approval, a denial with its reason, and
App Home. ``screenshots/test_the_readme_pictures/`` holds them after a run; ``docs/`` keeps the copies the README
shows (copy them over when the page changes)."""

from pathlib import Path

from playwright.sync_api import expect

from bot.render import action_ids as ids
from bot.sandbox.workspace import SandboxSlack
from tests.sandbox.browser import Steps
from tests.sandbox.client import APPROVER, REQUESTER

ROOT = Path(__file__).resolve().parents[2]
PICTURES = ("docs/sandbox-approval.png", "docs/sandbox-denied.png", "docs/sandbox-home.png")
APPROVE = f"[data-testid=button-{ids.APPROVE_ACTION}]"
DENY = f"[data-testid=button-{ids.DENY_ACTION}]"


def test_the_readme_pictures(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(f"http://127.0.0.1:{sandbox.port}/?as={REQUESTER}")
    composer = page.get_by_test_id("composer-input")
    thread = page.get_by_test_id("thread-messages")
    composer.fill("@signoff roll back payments")
    composer.press("Enter")
    expect(thread.locator(DENY).last).to_be_visible()
    page.get_by_test_id("user-switcher").select_option(APPROVER)
    thread.locator(DENY).last.click()
    page.get_by_test_id(f"input-{ids.DENY_REASON_BLOCK}").fill("Release freeze until 18:00, page me if it is urgent")
    page.get_by_test_id("modal-submit").click()
    expect(thread).to_contain_text("Denied by")
    expect(thread).to_contain_text("Release freeze until 18:00")
    steps.shot("denied-with-its-reason")

    page.get_by_test_id("user-switcher").select_option(REQUESTER)
    composer.fill("@signoff restart checkout")
    composer.press("Enter")
    expect(page.get_by_test_id("thread-messages").locator(APPROVE).last).to_be_visible()
    page.get_by_test_id("user-switcher").select_option(APPROVER)
    expect(page.get_by_test_id("thread-messages")).to_contain_text("restart_service")
    steps.shot("approval-waiting")
    page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    expect(home).to_contain_text("restart_service")
    expect(home).to_contain_text("Release freeze")  # the denial among the recent decisions
    steps.shot("home")


def test_the_readme_shows_the_pictures_the_browser_test_makes() -> None:
    readme = (ROOT / "README.md").read_text()
    for picture in PICTURES:
        assert f"]({picture})" in readme, f"the README does not show {picture}"
        data = (ROOT / picture).read_bytes()
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), f"{picture} is not a PNG"
        assert len(data) > 20_000, f"{picture} is too small to be a screenshot of the page"
