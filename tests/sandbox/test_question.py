"""A question answered in the sandbox, in a real browser: the demo agent asks which region, the requester answers
in the form, an approver approves the deploy there. ``docs/sandbox-question.png`` is a copy of its answered step
(docs/questions.md shows it)."""

from pathlib import Path

from playwright.sync_api import expect

from bot.render import action_ids as ids
from bot.render.texts import questions
from bot.sandbox.workspace import SandboxSlack
from tests.sandbox.browser import Steps
from tests.sandbox.client import APPROVER, REQUESTER

ROOT = Path(__file__).resolve().parents[2]
ANSWER = f"[data-testid=button-{ids.ANSWER_ACTION}]"
APPROVE = f"[data-testid=button-{ids.APPROVE_ACTION}]"


def test_a_question_is_answered_in_the_form_and_the_agent_goes_on(sandbox: SandboxSlack, steps: Steps) -> None:
    page = steps.page
    page.set_viewport_size({"width": 1400, "height": 1250})  # the question, its answer and the next approval
    page.goto(f"http://127.0.0.1:{sandbox.port}/?as={REQUESTER}")
    composer = page.get_by_test_id("composer-input")
    thread = page.get_by_test_id("thread-messages")
    composer.fill("@signoff deploy checkout")
    composer.press("Enter")
    expect(thread.locator(ANSWER).last).to_be_visible()
    expect(thread).to_contain_text(questions.QUESTION_HEADER)
    expect(thread).to_contain_text("Which region should I deploy checkout to?")
    expect(thread).not_to_contain_text("Approval needed")
    steps.shot("question-asked")

    thread.locator(ANSWER).last.click()
    page.get_by_test_id(f"input-{ids.ANSWER_BLOCK}").fill("eu-west-1")
    page.get_by_test_id("modal-submit").click()
    expect(thread).to_contain_text("Answered by")
    expect(thread.locator(APPROVE).last).to_be_visible()  # then the deploy itself waits for an approval
    expect(thread).to_contain_text("eu-west-1")
    steps.shot("question-answered")

    page.get_by_test_id("user-switcher").select_option(APPROVER)
    thread.locator(APPROVE).last.click()
    expect(thread).to_contain_text("checkout: v42 deployed to eu-west-1")
    steps.shot("deployed")
    assert (ROOT / "docs/sandbox-question.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
