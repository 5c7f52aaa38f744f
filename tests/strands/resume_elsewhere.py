"""Run in a fresh interpreter by the repository tests: rebuild a Strands agent from Redis and resume it.

Usage: ``python -m tests.strands.resume_elsewhere <redis url> <session id> <interrupt id>``. Prints
one JSON line: whether the rebuilt agent was interrupted, how many messages it restored, the
result of resuming with an approving decision, and how many model calls that took.
"""

import json
import sys
from datetime import UTC, datetime

from agent.approval import Decision
from agent.strands_bridge import StrandsRunnable
from state.store import SessionStore
from tests.redis_targets import client_for
from tests.strands.agents import strands_batch_agent


def main(redis_url: str, session_id: str, interrupt_id: str) -> None:
    """Rebuild, report, resume."""
    client = client_for(redis_url)
    strands_agent = strands_batch_agent(session_id=session_id, store=SessionStore(client))
    runnable = StrandsRunnable(strands_agent)
    restored = {"interrupted": runnable.interrupted, "messages": len(runnable.messages)}
    decision = Decision(decision="approve", decided_by="U0APPROVER", decided_at=datetime.now(UTC))
    result = runnable(
        [{"interruptResponse": {"interruptId": interrupt_id, "response": decision.model_dump(mode="json")}}]
    )
    report = {
        **restored,
        "stop_reason": result.stop_reason,
        "reply": str(result),
        "model_calls": strands_agent.model.calls,
        "interrupted_after": runnable.interrupted,
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main(*sys.argv[1:4])
