"""Claude Code's http hooks, decided in Slack: a tool call becomes an API request, held until decided or the wait ends.

The call is asked as ``POST /v1/approvals`` would ask it (same message, policy, escalation, audit), keyed by the
session and tool use, so Claude Code calling again about one tool use finds the same request. The hook call is
held until a person decides or ``wait_s`` passes; then the request is withdrawn (the message says Claude Code
stopped waiting, and no button is left live), so nobody approves what nothing waits for any more. A person who
decided first still wins: the withdrawal keeps a decision that stands.

The answer is the hook output Claude Code reads: for ``PreToolUse``, ``hookSpecificOutput.permissionDecision``
(``allow``, ``deny`` or ``ask``) with ``permissionDecisionReason`` (told to the model on a deny) and
``updatedInput`` (an approver's edit); for ``PermissionRequest``, ``hookSpecificOutput.decision``
(``behavior`` ``allow`` with ``updatedInput``, or ``deny`` with ``message``), or no decision at all.
"""

import time
from dataclasses import dataclass
from typing import Any, Final

from agent.approval import approved_input
from bot.domain.api_requests import ApprovalAsk
from bot.domain.claude_hooks import ClaudeHookInput, HookEvent, OnTimeout
from bot.flow.api_requests import MAX_WAIT_S, ApiRequests
from bot.flow.api_views import ApiRequestView
from bot.render.texts import claude_hooks as texts
from bot.render.texts import refusals
from bot.store.access.api_keys import ApiClient

_UNDECIDED: Final = ("pending", "cancelled")
"""Statuses nobody decided: the wait ended (or an earlier wait ended and withdrew the request)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaudeCodeHooks:
    """Answers Claude Code's hook calls with decisions made in Slack."""

    requests: ApiRequests

    def answer(
        self, client: ApiClient, hook: ClaudeHookInput, *, channel: str | None, wait_s: int, on_timeout: OnTimeout
    ) -> dict[str, Any]:
        """Ask in Slack, wait up to ``wait_s`` for the decision, and answer as the hook's event wants it.

        Raises:
            AskProblem: No channel is named or routed, or the tool use was asked before with another input.
        """
        ask = ApprovalAsk(
            tool=hook.tool_name,
            input=hook.tool_input,
            reason=texts.asked_from(hook.session_id, hook.cwd),
            channel=channel,
            idempotency_key=hook.idempotency_key(),
        )
        view, _created = self.requests.ask(client, ask)
        view = self._decided(client, view, wait_s)
        return hook_output(hook.hook_event_name, view, wait_s=wait_s, on_timeout=on_timeout)

    def _decided(self, client: ApiClient, view: ApiRequestView, wait_s: int) -> ApiRequestView:
        """The request once decided, or withdrawn after ``wait_s`` (unless a person decided first)."""
        request_id = view.stored.record.request_id
        deadline = time.monotonic() + wait_s
        while view.status == "pending" and (left := deadline - time.monotonic()) > 0:
            view = self.requests.wait(client, request_id, timeout_s=min(left, MAX_WAIT_S)) or view
        if view.status == "pending":
            view = self.requests.cancel(client, request_id, reason=texts.stopped_waiting(wait_s)) or view
        return view


def hook_output(event: HookEvent, view: ApiRequestView, *, wait_s: int, on_timeout: OnTimeout) -> dict[str, Any]:
    """The hook's answer for a request as it stands: only an approval allows; nobody deciding follows ``on_timeout``."""
    request = view.to_json()
    decision = view.approval.decision if view.approval is not None else None
    if view.status == "approved" and decision is not None:
        runs, refusal = approved_input(decision, request["input"])
        if refusal is not None:
            return _decided(event, allow=False, reason=refusal)
        edited = runs if decision.updated_input is not None else None
        return _decided(event, allow=True, reason=texts.approved_by(decision.decided_by), updated_input=edited)
    if view.status == "denied":
        return _decided(event, allow=False, reason=refusals.not_approved(request))
    why = texts.nobody_decided(wait_s, ask=on_timeout == "ask")
    return undecided_output(event, why if view.status in _UNDECIDED else refusals.not_approved(request), on_timeout)


def undecided_output(event: HookEvent, reason: str, on_timeout: OnTimeout) -> dict[str, Any]:
    """The answer when nobody decided: deny with ``reason``, or leave the call to Claude Code's own prompt."""
    if on_timeout == "deny":
        return _decided(event, allow=False, reason=reason)
    if event == "PreToolUse":
        return {
            "hookSpecificOutput": {
                "hookEventName": event,
                "permissionDecision": "ask",
                "permissionDecisionReason": reason,
            }
        }
    return {"systemMessage": reason}  # a PermissionRequest without a decision: Claude Code prompts as it would


def _decided(
    event: HookEvent, *, allow: bool, reason: str, updated_input: dict[str, Any] | None = None
) -> dict[str, Any]:
    if event == "PreToolUse":
        output: dict[str, Any] = {
            "hookEventName": event,
            "permissionDecision": "allow" if allow else "deny",
            "permissionDecisionReason": reason,
        }
        if updated_input is not None:
            output["updatedInput"] = updated_input
        return {"hookSpecificOutput": output}
    verdict: dict[str, Any] = {"behavior": "allow"} if allow else {"behavior": "deny", "message": reason}
    if updated_input is not None:
        verdict["updatedInput"] = updated_input
    return {"hookSpecificOutput": {"hookEventName": event, "decision": verdict}}
