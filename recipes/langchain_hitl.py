"""Recipe: LangChain's ``HumanInTheLoopMiddleware`` answered in Slack: approve, edit, reject and respond.

An agent made with ``create_agent(..., middleware=[HumanInTheLoopMiddleware(interrupt_on=...)])`` and a
checkpointer stops after each model turn that calls a gated tool, with one interrupt listing the calls
(``action_requests``) and what may be decided about each (``review_configs``). Each call is asked through
Signoff's HTTP API, all at once, and the agent resumed with one decision per call, in the calls' order:

- a tool that may be approved or edited is asked as a sign-off: **Approve** approves it, **Edit** (then save)
  runs it with the edited arguments, **Deny** rejects it with the person's reason, which the model reads; when it
  may also be answered (``respond``), it is asked with ``respond: true`` and **Answer instead** makes the person's
  words the tool's result (the tool does not run);
- a tool whose only decisions are ``respond`` (and ``reject``) is asked as a question: the person's words are
  the tool's result, and the tool itself never runs (an "ask the user" tool).

Both of the middleware's modes are answered: ``batched`` (its default: one interrupt per model turn, resumed with
``{"decisions": [...]}``) and ``per_call`` (one interrupt per call, each resumed with its decision by interrupt id).
"""

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware, InterruptOnConfig
from langchain.agents.middleware.human_in_the_loop import ActionRequest, Decision, DecisionType, InterruptMode
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, Interrupt

from recipes.signoff_client import ask_and_wait, ask_question_and_wait


class CannotRefuse(RuntimeError):
    """The person said no, but the tool's allowed decisions have no way to say it (neither reject nor respond)."""


def build_agent(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    interrupt_on: dict[str, bool | InterruptOnConfig],
    *,
    interrupt_mode: InterruptMode = "batched",
) -> Any:
    """An agent whose ``interrupt_on`` tools wait for people; the checkpointer keeps a paused run.

    A question tool reads best with its question as the description Slack shows::

        interrupt_on={
            "restart_service": {"allowed_decisions": ["approve", "edit", "reject"]},
            "ask_user": {"allowed_decisions": ["respond"], "description": question_argument},
        }
    """
    return create_agent(
        model,
        tools=list(tools),
        middleware=[HumanInTheLoopMiddleware(interrupt_on=interrupt_on, interrupt_mode=interrupt_mode)],
        checkpointer=InMemorySaver(),
    )


def question_argument(tool_call: Any, state: Any, runtime: Any) -> str:
    """A description factory for ``interrupt_on``: the call's ``question`` argument is what the person is asked."""
    return str(tool_call["args"].get("question") or tool_call["name"])


def run_with_signoff(
    agent: Any,
    agent_input: dict[str, Any],
    *,
    thread_id: str,
    api_url: str,
    api_key: str,
    channel: str,
    requester: str | None = None,
    timeout_s: float = 3600,
) -> dict[str, Any]:
    """Run ``agent`` until it finishes; every interrupt is decided in Slack and the run resumed. Returns its state.

    ``thread_id`` is the checkpointer's thread and makes each call's idempotency key
    (``<thread_id>:<interrupt id>:<index>``): a run retried after a crash asks nothing twice.

    Raises:
        urllib.error.HTTPError: the API refused a request (the error names the field); the run stays paused.
        CannotRefuse: a person said no to a tool whose decisions cannot say it; the run stays paused.
    """
    config: Any = {"configurable": {"thread_id": thread_id}}
    fields = {key: value for key, value in {"channel": channel, "requester": requester}.items() if value is not None}
    output = agent.invoke(agent_input, config, version="v2")
    while output.interrupts:
        calls = [
            (pending, action, allowed, {**fields, "idempotency_key": f"{thread_id}:{pending.id}:{index}"})
            for pending in output.interrupts
            for index, (action, allowed) in enumerate(reviewed(pending))
        ]

        def ask(call: tuple[Interrupt, ActionRequest, list[DecisionType], dict[str, Any]]) -> Decision:
            _, action, allowed, common = call
            return decide(action, allowed, api_url=api_url, api_key=api_key, timeout_s=timeout_s, common=common)

        # Asked together, so people see every call of the turn at once; answered in the calls' order.
        with ThreadPoolExecutor(max_workers=len(calls)) as pool:
            decisions = list(pool.map(ask, calls))
        resume: dict[str, Any] = {}
        for (pending, *_), decision in zip(calls, decisions, strict=True):
            if _per_call(pending):
                resume[pending.id] = decision
            else:
                resume.setdefault(pending.id, {"decisions": []})["decisions"].append(decision)
        output = agent.invoke(Command(resume=resume), config, version="v2")
    return dict(output.value)


def reviewed(pending: Interrupt) -> list[tuple[ActionRequest, list[DecisionType]]]:
    """The calls an interrupt of the middleware asks about, each with the decisions it allows, in order."""
    value = pending.value
    if _per_call(pending):  # one call; its decisions are the branches of the interrupt's response schema
        schema = pending.response_schema if isinstance(pending.response_schema, dict) else {}
        branches = (schema.get("discriminator") or {}).get("mapping") or [schema["properties"]["type"]["const"]]
        action = ActionRequest(name=value["name"], args=value["args"], description=value["description"])
        return [(action, list(branches))]
    reviews = zip(value["action_requests"], value["review_configs"], strict=True)
    return [(action, review["allowed_decisions"]) for action, review in reviews]


def _per_call(pending: Interrupt) -> bool:
    """Whether the interrupt is the middleware's ``per_call`` mode's (one call, answered with one decision)."""
    return isinstance(pending.value, dict) and pending.value.get("type") == "tool_approval"


def decide(
    action: ActionRequest,
    allowed: list[DecisionType],
    *,
    api_url: str,
    api_key: str,
    timeout_s: float,
    common: dict[str, Any],
) -> Decision:
    """Ask about one call, as a sign-off or (a tool only a person's words answer) a question; its decision."""
    if "approve" not in allowed and "edit" not in allowed:
        question = {"question": _text(action.get("description") or action["name"]), "name": action["name"], **common}
        return answered(ask_question_and_wait(api_url, api_key, question, timeout_s=timeout_s), allowed)
    ask = {"tool": action["name"], "input": action["args"], "reason": _text(action.get("description", "")), **common}
    if "respond" in allowed:  # the message offers "Answer instead": the words are the tool's result
        ask["respond"] = True
    return decided(ask_and_wait(api_url, api_key, ask, timeout_s=timeout_s), action, allowed)


def decided(request: dict[str, Any], action: ActionRequest, allowed: list[DecisionType]) -> Decision:
    """The middleware's decision for a decided sign-off request about ``action``."""
    decision = request.get("decision") or {}
    if request["status"] == "approved":
        edited = decision.get("updated_input")
        if edited is None and "approve" in allowed:
            return {"type": "approve"}
        if "edit" in allowed:  # as edited; or as asked, when the tool may be edited but not approved as is
            return {
                "type": "edit",
                "edited_action": {"name": action["name"], "args": action["args"] if edited is None else edited},
            }
        return _no(f"Edited in Slack by {decision.get('edited_by')}, but this tool takes no edits: not run.", allowed)
    if request["status"] == "answered":  # asked with ``respond``: the person's words, in the tool's place
        return {"type": "respond", "message": str(request["answer"])}
    if request["status"] == "denied":
        return _no(decision.get("reason") or "Denied in Slack, no reason given.", allowed)
    if request["status"] == "expired":
        return _no("Nobody decided in Slack in time: not run. Do not retry automatically.", allowed)
    return _no("The sign-off request was withdrawn before anyone decided: not run.", allowed)


def answered(question: dict[str, Any], allowed: list[DecisionType]) -> Decision:
    """The middleware's decision for a question asked in a tool's place: its answer is the tool's result."""
    if question["status"] == "answered":
        answer = question["answer"]
        return {"type": "respond", "message": answer if isinstance(answer, str) else json.dumps(answer)}
    if question["status"] == "refused":  # nobody was asked: a rule of tier deny matched the question's name
        rule = question.get("policy")
        return _no(
            f"Not asked: Signoff's rule `{rule}` refuses this question. Do not assume an answer; tell the user.",
            allowed,
        )
    return _no("No answer: nobody answered the question in time. Do not assume an answer; tell the user.", allowed)


def _text(text: str) -> str:
    """A description as the API takes it (a question or a reason holds at most 4,000 characters)."""
    return text if len(text) <= 4000 else text[:3999] + "…"


def _no(message: str, allowed: list[DecisionType]) -> Decision:
    """A call that does not run: rejected with ``message``, or (a tool that takes no reject) told it as its result."""
    if "reject" in allowed:
        return {"type": "reject", "message": message}
    if "respond" in allowed:
        return {"type": "respond", "message": message}
    raise CannotRefuse(f"allowed_decisions={allowed} | no decision says no: {message}")
