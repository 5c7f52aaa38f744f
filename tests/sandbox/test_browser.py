"""The sandbox page in real headless Chromium: one person plays every role, as a new user would."""

import re

from playwright.sync_api import Locator, expect

from bot.render import action_ids as ids
from bot.sandbox.workspace import SandboxSlack
from tests.sandbox.browser import Steps
from tests.sandbox.client import APPROVER, OUTSIDER, REQUESTER

APPROVE = f"[data-testid=button-{ids.APPROVE_ACTION}]"
DENY = f"[data-testid=button-{ids.DENY_ACTION}]"


def _open(steps: Steps, sandbox: SandboxSlack, user: str) -> None:
    steps.page.goto(f"http://127.0.0.1:{sandbox.port}/?as={user}")
    expect(steps.page.get_by_test_id("user-switcher")).to_have_value(user)


def _ask(steps: Steps, text: str) -> None:
    composer = steps.page.get_by_test_id("composer-input")
    composer.fill(text)
    composer.press("Enter")
    expect(steps.page.get_by_test_id("thread-messages").locator(APPROVE).last).to_be_visible()


def _pinned(steps: Steps, button: str) -> Locator:
    """The thread's approval message, found by its buttons and then pinned by its ts (it keeps it when updated)."""
    thread = steps.page.get_by_test_id("thread-messages")
    ts = thread.locator("[data-testid=message]", has=steps.page.locator(button)).last.get_attribute("data-ts")
    return thread.locator(f'[data-testid=message][data-ts="{ts}"]')


def _requested(steps: Steps, sandbox: SandboxSlack, text: str, button: str) -> Locator:
    """The requester opens the page and asks ``text``: its approval message, pinned (found by ``button``)."""
    _open(steps, sandbox, REQUESTER)
    _ask(steps, text)
    return _pinned(steps, button)


def _approval_shown_to(user: str, steps: Steps, sandbox: SandboxSlack, text: str) -> Locator:
    """The requester asks ``text``; its approval message (with an Approve button), the page switched to ``user``."""
    approval = _requested(steps, sandbox, text, APPROVE)
    _switch(steps, user)
    return approval


def _switch(steps: Steps, user: str) -> None:
    steps.page.get_by_test_id("user-switcher").select_option(user)
    expect(steps.page.get_by_test_id("user-switcher")).to_have_value(user)


def test_request_approve_and_the_agent_replies_in_the_thread(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    _open(steps, sandbox, REQUESTER)
    steps.shot("empty-channel")
    _ask(steps, "@signoff restart checkout")
    approval = _pinned(steps, APPROVE)
    expect(approval).to_contain_text("restart_service")
    expect(approval).to_contain_text('"service": "checkout"')
    steps.shot("approval-requested")

    _switch(steps, APPROVER)
    steps.shot("switched-to-approver")
    approval.locator(APPROVE).click()
    expect(approval.locator(APPROVE)).to_have_count(0)  # updated in place: buttons gone
    expect(approval).to_contain_text("Approved by")
    expect(approval).to_contain_text("(edited)")
    steps.shot("approved-in-place")

    expect(page.get_by_test_id("thread-messages")).to_contain_text("checkout: 3 replicas restarted")
    expect(page.get_by_test_id("replies-link")).to_have_text("2 replies")
    steps.shot("agent-reply-in-thread")


def test_deny_needs_a_reason_shown_in_the_modal(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    approval = _requested(steps, sandbox, "@signoff roll back payments", DENY)
    steps.shot("rollback-requested")

    _switch(steps, APPROVER)
    approval.locator(DENY).click()
    modal = page.get_by_test_id("modal")
    expect(modal).to_be_visible()
    steps.shot("deny-modal")
    page.get_by_test_id("modal-submit").click()
    expect(modal.get_by_test_id("input-error")).to_contain_text("Please give a reason")
    steps.shot("blank-reason-refused")

    modal.get_by_test_id(f"input-{ids.DENY_REASON_BLOCK}").fill("release freeze until 18:00")
    page.get_by_test_id("modal-submit").click()
    expect(modal).to_be_hidden()
    expect(approval).to_contain_text("Denied by")
    expect(approval).to_contain_text("release freeze until 18:00")
    steps.shot("denied-with-reason")


def test_a_non_approver_sees_a_refusal_only_they_can_see(sandbox: SandboxSlack, steps: Steps) -> None:
    approval = _approval_shown_to(OUTSIDER, steps, sandbox, "@signoff scale search to 5")
    approval.locator(APPROVE).click()
    refusal = steps.page.get_by_test_id("thread-messages").get_by_test_id("ephemeral")
    expect(refusal).to_contain_text("You can't decide this request")
    expect(refusal).to_contain_text("Only visible to you")
    steps.shot("refused-ephemeral")
    expect(approval.locator(APPROVE)).to_be_visible()  # still undecided

    _switch(steps, APPROVER)
    expect(steps.page.get_by_test_id("thread-messages")).to_be_visible()
    expect(steps.page.get_by_test_id("ephemeral")).to_have_count(0)
    steps.shot("approver-does-not-see-it")


def test_the_clock_control_moves_sandbox_time(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    _open(steps, sandbox, REQUESTER)
    page.get_by_role("button", name="+1 h").click()
    expect(page.get_by_test_id("clock-offset")).to_have_text(re.compile(r"\+1 h 0 min ahead"))
    page.get_by_role("button", name="+5 min").click()
    expect(page.get_by_test_id("clock-offset")).to_have_text(re.compile(r"\+1 h 5 min ahead"))
    steps.shot("clock-moved")


def test_the_home_tab_shows_what_the_bot_published_for_the_current_user(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    _open(steps, sandbox, REQUESTER)
    _ask(steps, "@signoff restart checkout")
    _switch(steps, APPROVER)
    page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    expect(home).to_contain_text("restart_service")
    steps.shot("approver-home")
    home.locator(APPROVE).first.click()
    expect(home).to_contain_text("Nothing is waiting for you", timeout=20_000)
    expect(home).to_contain_text("Approved by")
    steps.shot("approved-from-home")


GRANT = f"[data-testid=button-{ids.APPROVE_AND_ALLOW_ACTION}]"
REVOKE = f"[data-testid=button-{ids.REVOKE_GRANT_ACTION}]"


def test_a_standing_approval_shows_its_scope_covers_the_same_call_and_is_revoked_on_home(
    sandbox: SandboxSlack, steps: Steps
) -> None:
    page = steps.page
    approval = _approval_shown_to(APPROVER, steps, sandbox, "@signoff restart checkout")
    approval.locator(GRANT, has_text="1 h").click()
    confirm = page.locator("#confirm")
    expect(confirm).to_contain_text("with exactly these arguments")
    expect(confirm).to_contain_text("for 1 h")
    steps.shot("grant-scope-confirmed-before-it-is-made")
    page.get_by_test_id("confirm-ok").click()
    expect(approval).to_contain_text("Approved by")
    expect(page.get_by_test_id("thread-messages")).to_contain_text("checkout: 3 replicas restarted")

    _switch(steps, REQUESTER)
    composer = page.get_by_test_id("composer-input")
    composer.fill("@signoff restart checkout")
    composer.press("Enter")
    covered = page.get_by_test_id("thread-messages").locator("[data-testid=message]", has_text="standing approval")
    expect(covered).to_be_visible(timeout=20_000)
    expect(covered.locator(APPROVE)).to_have_count(0)
    steps.shot("same-call-runs-without-asking")

    _switch(steps, APPROVER)
    page.get_by_test_id("home-link").click()
    home = page.get_by_test_id("home")
    expect(home).to_contain_text("Standing approvals")
    expect(home).to_contain_text("used 1 time")
    steps.shot("grant-on-home")
    home.locator(REVOKE).click()
    expect(home).to_contain_text("None: approve with", timeout=20_000)
    steps.shot("grant-revoked")


def test_several_requests_at_once_are_one_round_of_approvals(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    _open(steps, sandbox, REQUESTER)
    composer = page.get_by_test_id("composer-input")
    composer.fill("@signoff check the logs of checkout, then restart checkout and roll back payments")
    composer.press("Enter")
    thread = page.get_by_test_id("thread-messages")
    expect(thread.locator(APPROVE)).to_have_count(2, timeout=20_000)
    expect(thread).to_contain_text("restart_service")
    expect(thread).to_contain_text("rollback_deploy")
    steps.shot("one-round-two-approvals")


def test_an_approver_edits_the_call_before_approving_it(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    approval = _approval_shown_to(APPROVER, steps, sandbox, "@signoff scale search to 5")
    approval.locator(f"[data-testid=button-{ids.EDIT_ACTION}]").click()
    modal = page.get_by_test_id("modal")
    expect(modal).to_be_visible()
    service, replicas = (modal.get_by_test_id(f"input-{ids.EDIT_FIELD_BLOCK_PREFIX}{index}") for index in (0, 1))
    expect(service).to_have_value("search")
    expect(replicas).to_have_value("5")
    expect(modal).to_contain_text("The agent runs exactly what you save.")
    replicas.fill("3")
    steps.shot("edit-modal")
    page.get_by_test_id("modal-submit").click()
    expect(modal).to_be_hidden()

    expect(approval).to_contain_text("Approved by")
    expect(approval).to_contain_text("Edited by")
    expect(approval).to_contain_text("- replicas: 5")
    expect(approval).to_contain_text("+ replicas: 3")
    expect(page.get_by_test_id("thread-messages")).to_contain_text("search: scaled from 2 to 3 replicas")
    steps.shot("edited-and-approved")
