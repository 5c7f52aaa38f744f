"""Questions through the MCP server, driven by the ``mcp`` package's own client over stdio: ``ask_person``, and
Claude Code's ``AskUserQuestion`` through ``permission_prompt``, each answered (or not) in the loopback Slack."""

import json
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest
import redis
from mcp import Client

from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from bot.render import blocks
from tests.bot.support.api_conformance import assert_documented_requests_only
from tests.bot.support.choices import actions_of, click_option, send_chosen
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, running_bot
from tests.bot.support.mcp_servers import mcp_environment, stdio_server
from tests.bot.support.people import REQUESTER

pytestmark = (
    pytest.mark.single_redis
)  # the server is a client of the HTTP API: Redis's shape is the API's tests' concern

REGIONS = ["eu-west-1", "us-east-1", "ap-south-1"]
FORM = {
    "type": "object",
    "properties": {"replicas": {"type": "integer", "minimum": 1, "maximum": 9}, "note": {"type": "string"}},
    "required": ["replicas"],
}
ASK_USER_QUESTION = {
    "questions": [
        {
            "question": "Which region?",
            "header": "Region",
            "options": [
                {"label": "eu-west-1", "description": "Ireland, " + "close to most customers " * 4},
                {"label": "us-east-1", "description": "Virginia"},
            ],
            "multiSelect": False,
        },
        {
            "question": "Which checks?",
            "header": "Checks",
            "options": [
                {"label": "lint", "description": "ruff"},
                {"label": 'Say "hi", then go', "description": "a greeting"},
                {"label": "types", "description": "mypy"},
            ],
            "multiSelect": True,
        },
    ]
}


def message_of(bot: Bot, approval_id: str) -> dict[str, Any]:
    return next(m for m in bot.approval_messages() if blocks.approval_id_shown(m) == approval_id)


def answering(
    bot: Bot, *, pick: dict[str, list[int]], form: dict[str, Any] | None = None, seen: list[str] | None = None
) -> Any:
    """The requester answers each question: by label position (``pick``, by question text), or filling in ``form``.

    ``seen`` keeps each question's message (its blocks as JSON) as it was asked.
    """

    def answer(approval_id: str) -> None:
        message = message_of(bot, approval_id)
        text = json.dumps(message["blocks"])
        if seen is not None:
            seen.append(text)
        if any(element["action_id"] == ids.ANSWER_ACTION for element in actions_of(message)):
            view = bot.open_answer(approval_id, user=REQUESTER)
            assert bot.submit_answer_form(view, user=REQUESTER, changes=form or {}).status == 200
            return
        [chosen] = [indexes for question, indexes in pick.items() if json.dumps(question)[1:-1] in text]
        if any(element["action_id"] == ids.CHOICE_SELECT for element in actions_of(message)):
            assert send_chosen(bot, message, [str(index) for index in chosen], user=REQUESTER).status == 200
        else:
            [index] = chosen
            assert click_option(bot, message, index, user=REQUESTER).status == 200

    return answer


def test_ask_person_reports_progress_and_returns_the_labels_picked_or_the_form_filled_in(bot: Bot) -> None:
    reported: list[str | None] = []

    async def session() -> tuple[Any, Any, Any]:
        async with Client(stdio_server(mcp_environment(bot))) as client:
            listed = await client.list_tools()

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                assert total is not None
                assert progress <= total
                reported.append(message)

            picked = await client.call_tool(
                "ask_person",
                {"question": "Where to deploy?", "options": REGIONS, "multiple": True},
                progress_callback=on_progress,
            )
            filled = await client.call_tool("ask_person", {"question": "How many replicas?", "schema": FORM})
            return listed, picked, filled

    person = answering(bot, pick={"Where to deploy?": [0, 2]}, form={"replicas": "3", "note": "canary first"})
    with person_in_slack(bot, person):
        listed, picked, filled = anyio.run(session)

    assert "ask_person" in {tool.name for tool in listed.tools}
    assert not picked.is_error, picked
    assert picked.structured_content["answer"] == ["eu-west-1", "ap-south-1"]
    assert picked.structured_content["answered_by"] == REQUESTER
    assert picked.structured_content["message"] == f"Answered in Slack by {REQUESTER}."
    assert reported
    assert reported[0] is not None
    assert reported[0].startswith("waiting for an answer in Slack")
    assert not filled.is_error, filled
    assert filled.structured_content["answer"] == {"replicas": 3, "note": "canary first"}


def test_ask_person_names_the_field_of_a_question_the_api_refuses_and_says_when_nobody_answered(bot: Bot) -> None:
    async def session() -> tuple[Any, Any]:
        async with Client(stdio_server(mcp_environment(bot, SIGNOFF_TIMEOUT="1"))) as client:
            both = {"question": "Which?", "options": ["a", "b"], "schema": FORM}
            refused = await client.call_tool("ask_person", both)
            unanswered = await client.call_tool("ask_person", {"question": "Anyone there?"})
            return refused, unanswered

    with person_in_slack(bot, lambda _approval_id: None):
        refused, unanswered = anyio.run(session)
    assert refused.is_error
    assert "options" in refused.content[0].text
    assert "schema" in refused.content[0].text
    assert not unanswered.is_error, unanswered
    assert unanswered.structured_content["status"] == "cancelled"
    assert unanswered.structured_content["answer"] is None
    assert "withdrawn" in unanswered.structured_content["message"]
    assert bot.api is not None
    bot.api.invalid_requests.clear()  # the refused question: passed on as asked, refused by the API


def _permission(bot: Bot, environment: dict[str, str], tool_use_id: str) -> dict[str, Any]:
    async def session() -> Any:
        async with Client(stdio_server(environment)) as client:
            arguments = {"tool_name": "AskUserQuestion", "input": ASK_USER_QUESTION, "tool_use_id": tool_use_id}
            return await client.call_tool("permission_prompt", arguments)

    result = anyio.run(session)
    assert not result.is_error, result
    [content] = result.content
    return dict(json.loads(content.text))


def test_ask_user_question_is_asked_as_questions_and_allowed_with_the_answers_the_cli_reads(bot: Bot) -> None:
    asked: list[str] = []
    with person_in_slack(bot, answering(bot, pick={"Which region?": [1], "Which checks?": [0, 1]}, seen=asked)):
        answer = _permission(bot, mcp_environment(bot, SIGNOFF_TIMEOUT="30"), "toolu_questions")

    assert answer == {
        "behavior": "allow",
        "updatedInput": {
            **ASK_USER_QUESTION,
            "answers": {"Which region?": "us-east-1", "Which checks?": 'lint, "Say \\"hi\\", then go"'},
        },
    }
    region, checks = sorted(asked, key=lambda blocks_json: "Which checks?" in blocks_json)
    assert "Ireland, close to most customers" in region  # its description, cut to Slack's length
    assert ids.CHOICE_SELECT not in region  # one of two options: a button each
    assert ids.CHOICE_SELECT in checks  # several may be picked


def test_ask_user_question_left_unanswered_is_a_deny_the_model_reads(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        textwrap.dedent("""\
        rules:
          - name: claude-questions
            match: {interrupts: [AskUserQuestion]}
            expiry: {after: 10m, outcome: deny}
        """)
    )
    clock = ManualClock()
    with running_bot(redis_client, policy_path=policy, clock=clock) as bot:
        expired: list[str] = []

        def first_expires(approval_id: str) -> None:
            if not expired:
                expired.append(approval_id)
                clock.advance(601)  # both expire unanswered: the first one read denies

        with person_in_slack(bot, first_expires):
            answer = _permission(bot, mcp_environment(bot, SIGNOFF_TIMEOUT="30"), "toolu_unanswered")
        assert_documented_requests_only(bot.api)
    assert answer == {
        "behavior": "deny",
        "message": 'The question "Which region?" expired in Slack without an answer. Do not assume one.',
    }
