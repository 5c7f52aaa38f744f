"""The LangChain recipe with the real packages and a scripted chat model (no network): ``create_agent`` with
``HumanInTheLoopMiddleware`` interrupts before a gated tool runs, each call is asked through the HTTP API and
answered in the loopback Slack, and the agent resumes with the decisions the people made."""

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain.agents.middleware.human_in_the_loop import ActionRequest, InterruptMode
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolCall, ToolMessage
from langchain_core.tools import BaseTool, tool
from pydantic import Field

from bot.render import action_ids as ids
from bot.render import blocks, controls
from recipes.langchain_hitl import CannotRefuse, answered, build_agent, decided, question_argument, run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


class ScriptedChatModel(GenericFakeChatModel):
    """Says the scripted messages in turn, takes the tools ``create_agent`` binds, and keeps what it was sent."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":
        return self  # the script already says which tools it calls

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _calls(*calls: tuple[str, dict[str, Any]]) -> Iterator[AIMessage]:
    """One model turn calling ``calls`` (ids call_0, call_1...), then the final answer."""
    tool_calls = [ToolCall(name=name, args=args, id=f"call_{index}") for index, (name, args) in enumerate(calls)]
    return iter([AIMessage(content="", tool_calls=tool_calls), AIMessage(content="done")])


def _tools(ran: list[tuple[str, int]]) -> list[BaseTool]:
    @tool
    def restart_service(service: str, replicas: int = 1) -> str:
        """Restart a service's replicas."""
        ran.append((service, replicas))
        return f"{service}: restarted x{replicas}"

    @tool
    def ask_user(question: str) -> str:
        """Ask the user something only they know."""
        raise AssertionError("a person answers in this tool's place: it never runs")

    return [restart_service, ask_user]


def _run(
    bot: Bot,
    api_key: str,
    model: ScriptedChatModel,
    ran: list[tuple[str, int]],
    act: Callable[[str], Any],
    *,
    mode: InterruptMode = "batched",
) -> Any:
    agent = build_agent(
        model,
        _tools(ran),
        {
            "restart_service": True,  # all four decisions: asked as a sign-off
            "ask_user": {"allowed_decisions": ["respond"], "description": question_argument},
        },
        interrupt_mode=mode,
    )
    with person_in_slack(bot, act):
        return run_with_signoff(
            agent,
            {"messages": [{"role": "user", "content": "restart checkout"}]},
            thread_id="t1",
            api_url=bot.url,
            api_key=api_key,
            channel=CHANNEL,
            timeout_s=10,  # a test whose person never answers fails instead of waiting an hour
        )


def _told(model: ScriptedChatModel) -> list[ToolMessage]:
    """The tool results the model read on its last turn, in the calls' order."""
    results = [message for message in model.seen[-1] if isinstance(message, ToolMessage)]
    return sorted(results, key=lambda message: message.tool_call_id)


def _shows(bot: Bot, approval_id: str, text: str) -> bool:
    message = next(m for m in bot.approval_messages() if blocks.approval_id_shown(m) == approval_id)
    return text in json.dumps(message)


def test_an_approved_call_runs_as_the_model_asked(bot: Bot, api_key: str) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(messages=_calls(("restart_service", {"service": "checkout"})))
    state = _run(
        bot, api_key, model, ran, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    )
    assert ran == [("checkout", 1)]
    [result] = _told(model)
    assert (result.content, result.status) == ("checkout: restarted x1", "success")
    assert state["messages"][-1].content == "done"
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]


def test_an_edited_call_runs_with_the_arguments_the_person_saved(bot: Bot, api_key: str) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(messages=_calls(("restart_service", {"service": "checkout", "replicas": 5})))

    def edit(approval_id: str) -> None:
        view = bot.open_edit(approval_id, user=APPROVER)
        bot.submit_edit(view, user=APPROVER, changes={"service": "payments", "replicas": "2"})

    _run(bot, api_key, model, ran, edit)
    assert ran == [("payments", 2)]
    [result] = _told(model)
    assert isinstance(result.content, str)
    assert result.content.endswith("payments: restarted x2")
    assert 'Executed instead: restart_service with arguments {"service": "payments", "replicas": 2}' in result.content


def test_a_denied_call_never_runs_and_the_model_reads_the_reason(bot: Bot, api_key: str) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(messages=_calls(("restart_service", {"service": "checkout"})))
    _run(
        bot, api_key, model, ran, lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="peak traffic")
    )
    assert ran == []
    [result] = _told(model)
    assert result.status == "error"
    assert result.content == "User rejected the tool call for `restart_service` with reason: peak traffic"


def test_a_tool_taking_all_four_decisions_may_be_answered_in_words_from_slack_and_never_runs(
    bot: Bot, api_key: str
) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(messages=_calls(("restart_service", {"service": "checkout"})))
    words = "Not now: payments is mid-deploy, try again at 15:00"

    def answer_instead(approval_id: str) -> None:
        opened = len(bot.slack.calls("views.open"))
        assert bot.click(controls.ANSWER_INSTEAD.action_id, approval_id, user=APPROVER).status == 200
        view = bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"]
        bot.submit_answer(approval_id, user=APPROVER, answer=words, view=view)

    _run(bot, api_key, model, ran, answer_instead)
    assert ran == []
    [result] = _told(model)
    assert (result.content, result.status) == (words, "success")


def test_a_question_tool_s_result_is_the_person_s_words_and_it_never_runs(bot: Bot, api_key: str) -> None:
    model = ScriptedChatModel(messages=_calls(("ask_user", {"question": "Which region, and why?"})))
    words = "eu-west-1:\n  closest to the customers"
    _run(bot, api_key, model, [], lambda question_id: bot.submit_answer(question_id, user=APPROVER, answer=words))
    [result] = _told(model)
    assert (result.content, result.status) == (words, "success")
    [message] = bot.approval_messages()
    assert "Which region, and why?" in message["text"]


def test_each_call_of_one_turn_gets_its_own_answer_in_order(bot: Bot, api_key: str) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(
        messages=_calls(
            ("restart_service", {"service": "checkout"}),
            ("ask_user", {"question": "Which region?"}),
            ("restart_service", {"service": "payments"}),
        )
    )

    def decide(approval_id: str) -> None:
        if _shows(bot, approval_id, "Which region?"):
            bot.submit_answer(approval_id, user=APPROVER, answer="us-east-1")
        elif _shows(bot, approval_id, "payments"):
            bot.submit_deny(approval_id, user=APPROVER, reason="payments are frozen")
        else:
            bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)

    _run(bot, api_key, model, ran, decide)
    assert ran == [("checkout", 1)]
    assert len(bot.approval_messages()) == 3  # all asked in the one interrupt
    assert [(result.tool_call_id, result.content) for result in _told(model)] == [
        ("call_0", "checkout: restarted x1"),
        ("call_1", "us-east-1"),
        ("call_2", "User rejected the tool call for `restart_service` with reason: payments are frozen"),
    ]


def test_in_per_call_mode_each_call_is_its_own_interrupt_answered_by_its_id(bot: Bot, api_key: str) -> None:
    ran: list[tuple[str, int]] = []
    model = ScriptedChatModel(
        messages=_calls(
            ("restart_service", {"service": "checkout", "replicas": 5}),
            ("ask_user", {"question": "Which region?"}),
            ("restart_service", {"service": "payments"}),
        )
    )

    def decide(approval_id: str) -> None:
        if _shows(bot, approval_id, "Which region?"):
            bot.submit_answer(approval_id, user=APPROVER, answer="us-east-1")
        elif _shows(bot, approval_id, "payments"):
            bot.submit_deny(approval_id, user=APPROVER, reason="payments are frozen")
        else:
            view = bot.open_edit(approval_id, user=APPROVER)
            bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"})

    _run(bot, api_key, model, ran, decide, mode="per_call")
    assert ran == [("checkout", 2)]  # LangGraph checked the edit against the tool's arguments: replicas an int
    told = _told(model)
    assert [(result.tool_call_id, result.status) for result in told] == [
        ("call_0", "success"),
        ("call_1", "success"),
        ("call_2", "error"),
    ]
    assert [told[1].content, told[2].content] == [
        "us-east-1",
        "User rejected the tool call for `restart_service` with reason: payments are frozen",
    ]


_RESTART = ActionRequest(name="restart_service", args={"service": "checkout"})


def test_a_request_nobody_decided_is_rejected_as_not_run_never_as_a_person_s_no() -> None:
    expired = decided({"status": "expired", "decision": None}, _RESTART, ["approve", "reject"])
    assert expired == {
        "type": "reject",
        "message": "Nobody decided in Slack in time: not run. Do not retry automatically.",
    }
    withdrawn = decided({"status": "cancelled", "decision": None}, _RESTART, ["approve", "reject"])
    assert withdrawn["type"] == "reject"
    assert "withdrawn" in withdrawn.get("message", "")


def test_an_edit_of_a_tool_that_takes_none_does_not_run_the_original_call() -> None:
    request = {"status": "approved", "decision": {"updated_input": {"service": "payments"}, "edited_by": APPROVER}}
    assert decided(request, _RESTART, ["approve", "reject"]) == {
        "type": "reject",
        "message": f"Edited in Slack by {APPROVER}, but this tool takes no edits: not run.",
    }


def test_an_approval_of_a_tool_that_may_only_be_edited_is_an_edit_to_the_same_arguments() -> None:
    request = {"status": "approved", "decision": {"updated_input": None}}
    assert decided(request, _RESTART, ["edit", "reject"]) == {"type": "edit", "edited_action": _RESTART}


def test_a_no_is_the_tool_s_result_where_it_takes_no_reject_and_an_error_where_it_takes_neither() -> None:
    denied = {"status": "denied", "decision": {"reason": "not now"}}
    assert decided(denied, _RESTART, ["approve", "respond"]) == {"type": "respond", "message": "not now"}
    with pytest.raises(CannotRefuse, match="not now"):
        decided(denied, _RESTART, ["approve"])


def test_a_question_nobody_answered_is_no_answer_never_an_empty_one() -> None:
    no_answer = "No answer: nobody answered the question in time. Do not assume an answer; tell the user."
    expired = {"status": "expired", "answer": None}
    assert answered(expired, ["respond"]) == {"type": "respond", "message": no_answer}
    assert answered(expired, ["respond", "reject"]) == {"type": "reject", "message": no_answer}


def test_a_question_a_rule_refused_to_ask_is_said_so_not_as_nobody_answering() -> None:
    refused = {"status": "refused", "policy": "no-polls", "answer": None}
    not_asked = "Not asked: Signoff's rule `no-polls` refuses this question. Do not assume an answer; tell the user."
    assert answered(refused, ["respond", "reject"]) == {"type": "reject", "message": not_asked}
