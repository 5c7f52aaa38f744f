"""A Strands hook provider that gates tool calls by Signoff's approval decisions.

Before a gated call runs, ``SignoffGate`` raises the ``"approval"`` interrupt with the reason the
bot renders (``{"tool", "input", "toolUseId"}``, ``"response": "record"`` so that a rule's
``response`` never changes what the gate reads, plus ``"policy"`` when the gate knows the policy
name). On resume the human's ``agent.approval.Decision`` record comes back as the interrupt's
response: approve lets the call run; deny, expired or anything unreadable cancels it, and the
model is told why in the same words as with Signoff's own runtime (``refusal_text``).

Calls run at most once (see ``agent.attempts``): before a tool that is not declared idempotent
runs, the gate marks the call started in the agent's state and saves the session; its result is
saved as soon as it exists (retried in place while Redis is briefly unreachable). A redelivered
run that finds a call started but not recorded asks a human (the ``rerun`` interrupt) instead
of running it again.
"""

import json
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping
from typing import Any, Final, cast

from strands.hooks import AfterInvocationEvent, AfterToolCallEvent, BeforeToolCallEvent, HookOrder, MessageAddedEvent
from strands.types._events import ToolResultEvent
from strands.types.session import decode_bytes_values, encode_bytes_values
from strands.types.tools import AgentTool

from agent import attempts
from agent.approval import APPROVAL_INTERRUPT, approved_input, describe_call, edit_note, parse_decision, refusal_text
from agent.guarded import guarded_calls, waiting_calls
from agent.session import retrying
from state.shapes import ToolUse

PolicyFor = Callable[[str], str | None]
"""``policy_for(tool_name)``: the name of the policy gating that tool, or ``None`` if it runs freely."""

UNREADABLE_RESPONSE = "Not executed: the approval response was not understood. Do not retry automatically."

COMPLETED_CALLS: Final = "signoff_completed_calls"
"""Agent-state key: results of calls that finished in a batch not yet answered (toolUseId -> result as JSON text, its
bytes in Strands' form for them: an agent's state holds JSON only, and Strands turns that form back into bytes when
it reads the state, which the state then refuses)."""
_COMPLETED_KEPT: Final = 50
SAVE_RETRY_S: Final = 10.0
"""How long saving a call's start or result is retried while Redis is unreachable."""


def _replayed(recorded: Any) -> dict[str, Any]:
    """A result recorded in ``COMPLETED_CALLS`` as it was (a dict: recorded before results were kept as text)."""
    result: dict[str, Any] = decode_bytes_values(json.loads(recorded)) if isinstance(recorded, str) else recorded
    return result


class _RecordedResult(AgentTool):  # type: ignore[misc]
    """Stands in for a call that already finished before its worker died: returns the recorded result."""

    def __init__(self, original: Any, result: dict[str, Any]) -> None:
        super().__init__()
        self._original = original
        self._result = result

    @property
    def tool_name(self) -> str:
        return str(self._original.tool_name) if self._original is not None else "recorded"

    @property
    def tool_spec(self) -> Any:
        return self._original.tool_spec if self._original is not None else {}

    @property
    def tool_type(self) -> str:
        return "signoff_recorded_result"

    async def stream(self, tool_use: Any, invocation_state: dict[str, Any], **kwargs: Any) -> AsyncGenerator[Any, None]:
        yield ToolResultEvent({**self._result, "toolUseId": tool_use["toolUseId"]})


class SignoffGate:
    """Strands ``HookProvider``: calls to gated tools wait for an approving ``Decision``.

    Args:
        tools: Which tools are gated: a mapping of tool name to policy name, a callable
            ``(tool_name) -> policy name | None`` (e.g. ``lambda tool: book.for_call(tool=tool,
            interrupt_name="approval").name if tool in risky else None``), or plain tool names
            (the reason then carries no policy name).
        interrupt_name: The interrupt's name (the bot's policies can match it).
        checkpoint_results: Save each finished call's result with the session (through the
            agent's session manager) as soon as it exists, so a worker that dies in the middle
            of a batch never runs a finished call again: while resuming, in the pending
            execution; on a first pass, in the agent's state, from which a redelivered run
            replays the recorded result instead of calling the tool. Strands alone saves
            results only with the next message. Also marks each call started before it runs,
            so a call whose result was lost is asked about instead of run again.
        idempotent: Names of tools for which running a call twice is harmless: a call whose
            result was lost simply runs again (any other asks a human first).
    """

    def __init__(
        self,
        tools: Mapping[str, str] | PolicyFor | Iterable[str],
        *,
        interrupt_name: str = APPROVAL_INTERRUPT,
        checkpoint_results: bool = True,
        idempotent: Iterable[str] = (),
    ):
        """Keep which calls are gated."""
        self._edited: dict[str, str] = {}  # toolUseId -> the note its result carries (an edited call)
        self.interrupt_name = interrupt_name
        self.checkpoint_results = checkpoint_results
        self.idempotent = frozenset(idempotent)
        self._policy_for: PolicyFor
        self._names_policy = False
        if isinstance(tools, Mapping):
            policies = dict(tools)
            self._policy_for = policies.get
        elif callable(tools):
            self._policy_for = tools
        else:
            names = frozenset(tools)
            self._names_policy = True
            self._policy_for = lambda tool_name: "" if tool_name in names else None

    def register_hooks(self, registry: Any, **kwargs: Any) -> None:
        """Gate every tool call of the agent."""
        registry.add_callback(BeforeToolCallEvent, self.before_tool_call)
        registry.add_callback(AfterToolCallEvent, self.note_edit)  # first: the result recorded carries the note
        if self.checkpoint_results:
            # Last before a call: it is marked started only once every hook and intervention let it run.
            registry.add_callback(BeforeToolCallEvent, self.start_call, order=HookOrder.SDK_LAST)
            # First at the end: before the session manager saves the stop.
            registry.add_callback(AfterInvocationEvent, self.release_asking_tools, order=HookOrder.SDK_FIRST)
            registry.add_callback(AfterToolCallEvent, self.after_tool_call)
            registry.add_callback(MessageAddedEvent, self.message_added)

    def reason_for(self, tool_use: ToolUse, *, input_schema: Any = None) -> dict[str, Any] | None:
        """The interrupt reason for a call, or ``None`` when the call is not gated."""
        policy = self._policy_for(tool_use["name"])
        if policy is None:
            return None
        reason = describe_call(tool_use, input_schema=input_schema)
        if not self._names_policy:
            reason["policy"] = policy
        return reason

    def before_tool_call(self, event: Any) -> None:
        """Replay a call that already finished, ask for approval, or apply the decision received on resume."""
        tool_use = cast(ToolUse, event.tool_use)
        recorded = (event.agent.state.get(COMPLETED_CALLS) or {}).get(tool_use["toolUseId"])
        if self.checkpoint_results and recorded is not None:
            event.selected_tool = _RecordedResult(event.selected_tool, _replayed(recorded))
            return
        spec = getattr(event.selected_tool, "tool_spec", None)
        reason = self.reason_for(tool_use, input_schema=spec.get("inputSchema") if isinstance(spec, dict) else None)
        if reason is not None:
            response = event.interrupt(self.interrupt_name, reason=reason)  # raises until answered
            decision = parse_decision(response)
            if decision is None:
                event.cancel_tool = UNREADABLE_RESPONSE
                return
            if decision.decision != "approve":
                event.cancel_tool = refusal_text(decision)
                return
            runs, refusal = approved_input(decision, tool_use["input"])
            if refusal is not None:
                event.cancel_tool = refusal
                return
            note = edit_note(decision)
            if note is not None:  # an approver edited the call: it runs as they left it, and the model is told
                self._edited[tool_use["toolUseId"]] = note
                event.tool_use = cast(ToolUse, {**tool_use, "input": runs})

    def start_call(self, event: Any) -> None:
        """Mark a call about to run started (see ``checkpoint_results``), unless it is not about to run.

        Another hook or intervention may have cancelled it, or be asking a person about it (Strands runs every
        callback of the event even after one raised an interrupt): it has not started.
        """
        tool_use = cast(ToolUse, event.tool_use)
        runs = event.selected_tool is not None and not isinstance(event.selected_tool, _RecordedResult)
        if event.cancel_tool or not runs or tool_use["name"] in self.idempotent:
            return
        asking = event.agent._interrupt_state.interrupts.values()
        if any(interrupt.response is None and guarded_calls(interrupt.id, [tool_use]) for interrupt in asking):
            return
        self._start(event, tool_use)

    def release_asking_tools(self, event: Any) -> None:
        """The agent stopped on interrupts: a started call whose tool asks a person stopped there, not mid-run.

        Strands runs such a tool again on resume, and its ``interrupt`` then returns the answer; only an attempt
        that gets past its questions may have taken effect. A call asked whether to run again keeps its mark.
        """
        interrupt_state = event.agent._interrupt_state
        started = event.agent.state.get(attempts.STARTED_CALLS)
        if not interrupt_state.activated or not started:
            return
        asking = [
            interrupt
            for interrupt in interrupt_state.interrupts.values()
            if interrupt.response is None and not attempts.is_rerun_interrupt(interrupt.name)
        ]
        stopped = [call for call in waiting_calls(interrupt_state) if call["toolUseId"] in started]
        attempts.clear_started(
            event.agent.state,
            [call["toolUseId"] for call in stopped if any(guarded_calls(each.id, [call]) for each in asking)],
        )

    def _start(self, event: Any, tool_use: ToolUse) -> None:
        """Mark the call started and save it before it runs; a call that may have run asks a human first."""
        agent = event.agent
        started = attempts.attempts_started(agent.state, tool_use["toolUseId"])
        if started:
            refusal = attempts.refuse_rerun(lambda name, why: event.interrupt(name, reason=why), tool_use, started)
            if refusal is not None:
                event.cancel_tool = refusal
                return
        attempts.mark_started(agent.state, tool_use["toolUseId"])
        self._save(agent)

    @staticmethod
    def _save(agent: Any) -> None:
        session_manager = getattr(agent, "_session_manager", None)
        if session_manager is not None:
            retrying(lambda: session_manager.sync_agent(agent), within_s=SAVE_RETRY_S, what="strands sync_agent")

    def message_added(self, event: Any) -> None:
        """Once the conversation holds a call's result, its record is no longer needed."""
        if event.message["role"] == "assistant":
            # A new model turn: the previous batch is closed, whatever became of its calls.
            attempts.clear_started(event.agent.state, list(event.agent.state.get(attempts.STARTED_CALLS) or {}))
        completed = event.agent.state.get(COMPLETED_CALLS)
        if not completed:
            return
        answered = {block["toolResult"]["toolUseId"] for block in event.message["content"] if "toolResult" in block}
        if answered & completed.keys():
            remaining = {
                tool_use_id: result for tool_use_id, result in completed.items() if tool_use_id not in answered
            }
            if remaining:
                event.agent.state.set(COMPLETED_CALLS, remaining)
            else:
                event.agent.state.delete(COMPLETED_CALLS)

    def note_edit(self, event: Any) -> None:
        """Tell the model, with the result, that the call ran as an approver edited it."""
        note = self._edited.pop(event.tool_use["toolUseId"], None)
        if note is not None:
            event.result = {**event.result, "content": [{"text": note}, *event.result["content"]]}

    def after_tool_call(self, event: Any) -> None:
        """Record the finished call (see ``checkpoint_results``) and save the session."""
        if getattr(event, "retry", False):
            return  # another hook asked Strands to run the call again: nothing final yet
        agent = event.agent
        interrupt_state = agent._interrupt_state
        pending = interrupt_state.pending_tool_execution
        result = event.result
        if interrupt_state.activated and pending is not None:
            kept = [done for done in pending.completed_tool_results if done["toolUseId"] != result["toolUseId"]]
            interrupt_state.set_pending_tool_results([*kept, result])
        else:
            completed = dict(agent.state.get(COMPLETED_CALLS) or {})
            completed[result["toolUseId"]] = json.dumps(encode_bytes_values(dict(result)))
            agent.state.set(COMPLETED_CALLS, dict(list(completed.items())[-_COMPLETED_KEPT:]))
        attempts.clear_started(agent.state, [result["toolUseId"]])
        self._save(agent)
