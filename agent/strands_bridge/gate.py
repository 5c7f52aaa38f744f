"""A Strands hook provider that gates tool calls by Signoff's approval decisions.

Before a gated call runs, ``SignoffGate`` raises the ``"approval"`` interrupt with the reason the
bot renders (``{"tool", "input", "toolUseId"}``, plus ``"policy"`` when the gate knows the policy
name). On resume the human's ``agent.approval.Decision`` record comes back as the interrupt's
response: approve lets the call run; deny, expired or anything unreadable cancels it, and the
model is told why in the same words as with Signoff's own runtime (``refusal_text``).
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from strands.hooks import AfterToolCallEvent, BeforeToolCallEvent

from agent.approval import APPROVAL_INTERRUPT, describe_call, parse_decision, refusal_text
from state.shapes import ToolUse

PolicyFor = Callable[[str], str | None]
"""``policy_for(tool_name)``: the name of the policy gating that tool, or ``None`` if it runs freely."""

UNREADABLE_RESPONSE = "Not executed: the approval response was not understood. Do not retry automatically."


class SignoffGate:
    """Strands ``HookProvider``: calls to gated tools wait for an approving ``Decision``.

    Args:
        tools: Which tools are gated: a mapping of tool name to policy name, a callable
            ``(tool_name) -> policy name | None`` (e.g. ``lambda tool: book.for_call(tool=tool,
            interrupt_name="approval").name if tool in risky else None``), or plain tool names
            (the reason then carries no policy name).
        interrupt_name: The interrupt's name (the bot's policies can match it).
        checkpoint_results: While resuming, save each finished call's result with the session
            (through the agent's session manager) as soon as it exists, so a worker that dies in
            the middle of the batch never runs a finished call again. Strands alone saves them
            only with the next message.
    """

    def __init__(
        self,
        tools: Mapping[str, str] | PolicyFor | Iterable[str],
        *,
        interrupt_name: str = APPROVAL_INTERRUPT,
        checkpoint_results: bool = True,
    ):
        """Keep which calls are gated."""
        self.interrupt_name = interrupt_name
        self.checkpoint_results = checkpoint_results
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
        if self.checkpoint_results:
            registry.add_callback(AfterToolCallEvent, self.after_tool_call)

    def reason_for(self, tool_use: ToolUse) -> dict[str, Any] | None:
        """The interrupt reason for a call, or ``None`` when the call is not gated."""
        policy = self._policy_for(tool_use["name"])
        if policy is None:
            return None
        reason = describe_call(tool_use)
        if not self._names_policy:
            reason["policy"] = policy
        return reason

    def before_tool_call(self, event: Any) -> None:
        """Ask for approval, or apply the decision received on resume."""
        tool_use = cast(ToolUse, event.tool_use)
        reason = self.reason_for(tool_use)
        if reason is None:
            return
        response = event.interrupt(self.interrupt_name, reason=reason)  # raises until answered
        decision = parse_decision(response)
        if decision is None:
            event.cancel_tool = UNREADABLE_RESPONSE
        elif decision.decision != "approve":
            event.cancel_tool = refusal_text(decision)

    def after_tool_call(self, event: Any) -> None:
        """While resuming, record the finished call in the pending execution and save the session."""
        if getattr(event, "retry", False):
            return  # another hook asked Strands to run the call again: nothing final yet
        agent = event.agent
        interrupt_state = agent._interrupt_state
        pending = interrupt_state.pending_tool_execution
        if not interrupt_state.activated or pending is None:
            return
        result = event.result
        kept = [done for done in pending.completed_tool_results if done["toolUseId"] != result["toolUseId"]]
        interrupt_state.set_pending_tool_results([*kept, result])
        session_manager = getattr(agent, "_session_manager", None)
        if session_manager is not None:
            session_manager.sync_agent(agent)
