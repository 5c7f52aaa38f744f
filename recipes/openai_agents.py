"""Recipe: OpenAI Agents SDK tool approvals (``needs_approval``) decided by people in Slack.

The run stops with ``result.interruptions``; each pending tool call is asked through Signoff's HTTP
API; the run state is approved or rejected accordingly and the run resumed from it. A denial's
reason (or "expired") is what the model is told instead of the tool's output.
"""

import json
from typing import Any

from agents import Agent, Runner, RunResult

from recipes.signoff_client import ask_and_wait


async def run_with_signoff(
    agent: Agent[Any],
    prompt: str,
    *,
    api_url: str,
    api_key: str,
    channel: str,
    run_id: str,
    timeout_s: float = 3600,
) -> RunResult:
    """Run ``agent`` on ``prompt``; every tool call that needs approval is decided in Slack before the run goes on.

    ``run_id`` makes each call's idempotency key (``<run_id>:<call id>``): a retried run asks nothing twice.
    A call nobody decides within ``timeout_s`` is withdrawn in Slack and rejected.
    """
    result = await Runner.run(agent, prompt)
    while result.interruptions:
        state = result.to_state()
        for pending in result.interruptions:
            decided = ask_and_wait(
                api_url,
                api_key,
                {
                    "tool": pending.name or "tool",
                    "input": json.loads(pending.arguments or "{}"),
                    "reason": f"requested by the agent {agent.name}",
                    "channel": channel,
                    "idempotency_key": f"{run_id}:{pending.call_id}",
                },
                timeout_s=timeout_s,
            )
            if decided["status"] == "approved":
                state.approve(pending)
            else:
                state.reject(pending, rejection_message=refusal(decided))
        result = await Runner.run(agent, state)
    return result


def refusal(decided: dict[str, Any]) -> str:
    """What the model is told about a call that was not approved (an expiry or a withdrawal is not a human denial)."""
    decision = decided.get("decision") or {}
    if decided["status"] == "expired":
        return "Not run: the approval request expired without a decision. Do not retry automatically."
    if decided["status"] == "cancelled":
        why = decision.get("reason") or "no reason given"
        return f"Not run: the approval request was withdrawn before anyone decided ({why}). Do not retry automatically."
    who = decision.get("decided_by") or "an approver"
    return f"Not run: {decided['status']} by {who}: {decision.get('reason') or 'no reason given'}."
