"""Claude Code's ``AskUserQuestion`` through ``permission_prompt``: each question asked in Slack, the answers sent back.

The CLI asks the permission prompt tool before its ``AskUserQuestion`` runs, with the tool's input:
``{"questions": [{"question", "header", "options": [{"label", "description"}], "multiSelect"}, ...]}``. Each
question is posted as a Signoff question (its options; several may be picked when ``multiSelect``), all at once;
once every one is answered the tool allows the call with the input plus ``answers``, keyed by question text, which
is what the CLI's own dialog would have added: it then tells the model the person's choices. A multi-select answer
is one string, the labels joined with ", " and each label holding ", " or a quote written as a JSON string: the
CLI's own spelling, which it reads back as those labels. A question left unanswered (expired, withdrawn, or the wait
ran out) denies the call, saying so, and withdraws the others. Each question of options offers "Other…" too, as the
CLI's dialog does: the person's words are the answer, and the CLI tells the model "The user answered: ..." (not
"Your questions have been answered"), asking it to read them carefully.
"""

import contextlib
import json
from typing import Any, Final

import anyio

from bot.domain.question_kinds import MAX_DESCRIPTION
from bot.mcp.api_client import ApiError
from bot.mcp.ask_person import question_body
from bot.mcp.config import McpSettings
from bot.mcp.long_poll import LongPoll
from bot.render.texts import asked_person

ASK_USER_QUESTION: Final = "AskUserQuestion"
"""Claude Code's tool; its questions are asked under this name (a policy rule may match it: ``interrupts``)."""


async def answer_questions(
    poll: LongPoll, settings: McpSettings, tool_input: dict[str, Any], *, tool_use_id: str | None
) -> dict[str, Any]:
    """The permission prompt's answer to ``AskUserQuestion``: allow with the person's answers, or deny with why."""
    asked: list[dict[str, Any]] = []
    try:
        bodies = _bodies(settings, tool_input, tool_use_id=tool_use_id)
        for body in bodies:  # all posted before any wait: the person sees every question at once
            asked.append(await anyio.to_thread.run_sync(poll.api.ask_question, body))
        answers: dict[str, str] = {}
        for position, (body, question) in enumerate(zip(bodies, asked, strict=True)):
            settled = await poll.settled(question, kind="question")
            if settled["status"] != "answered":
                await _withdraw(poll, asked[position + 1 :])
                return {
                    "behavior": "deny",
                    "message": asked_person.not_answered({"question": body["question"], **settled}),
                }
            answers[body["question"]] = _spelled(settled.get("answer"))
    except ApiError as error:
        await _withdraw(poll, asked)
        return {"behavior": "deny", "message": asked_person.could_not_ask(error)}
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):  # the client gave up: nobody waits for the other answers either
            await _withdraw(poll, asked)
        raise
    return {"behavior": "allow", "updatedInput": {**tool_input, "answers": answers}}


def _bodies(settings: McpSettings, tool_input: dict[str, Any], *, tool_use_id: str | None) -> list[dict[str, Any]]:
    """One ``POST /v1/questions`` body per question; a retried prompt for the same tool use asks nothing new."""
    questions = tool_input.get("questions")
    if not isinstance(questions, list) or not questions:
        raise ApiError(400, "questions: AskUserQuestion asked none")
    bodies = []
    for index, question in enumerate(questions):
        if not isinstance(question, dict):
            raise ApiError(400, f"questions[{index}]: must be an object")
        options = [_option(option) for option in question.get("options") or []]
        bodies.append(
            question_body(
                settings,
                question=str(question.get("question", "")),
                options=options or None,
                multiple=question.get("multiSelect") is True and bool(options),
                other=bool(options),  # the CLI's own dialog lets the person type an answer instead (Other)
                name=ASK_USER_QUESTION,
                idempotency_key=f"{tool_use_id}:{index}" if tool_use_id else None,
            )
        )
    return bodies


def _option(option: Any) -> Any:
    """An option as the API takes it: the label as asked (it is the answer), the description cut to Slack's length."""
    if not isinstance(option, dict):
        return option  # the API names what is wrong with it
    kept: dict[str, Any] = {"label": option.get("label")}
    description = option.get("description")
    if isinstance(description, str) and description.strip():
        kept["description"] = (
            description if len(description) <= MAX_DESCRIPTION else description[: MAX_DESCRIPTION - 1] + "…"
        )
    return kept


def _spelled(answer: Any) -> str:
    """The answer as the CLI's dialog writes it: a label, or the labels picked joined (quoted where they must be)."""
    if isinstance(answer, list):
        return ", ".join(_quoted(label) if ", " in label or '"' in label else label for label in map(str, answer))
    return answer if isinstance(answer, str) else _quoted(answer)


def _quoted(value: Any) -> str:
    """JSON as JavaScript's ``JSON.stringify`` writes it (the CLI compares the spelling): letters left as they are."""
    return json.dumps(value, ensure_ascii=False)


async def _withdraw(poll: LongPoll, questions: list[dict[str, Any]]) -> None:
    """Withdraw questions still pending: nobody waits for their answers any more."""
    for question in questions:
        if question.get("status") == "pending":
            with contextlib.suppress(ApiError):  # then it expires in Slack on its own
                await poll.withdraw(question["id"], kind="question")
