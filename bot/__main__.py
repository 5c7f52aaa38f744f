"""``python -m bot``: until the Slack app lands, a walk through the interrupt state machine.

It runs on ``REDIS_URL`` when set, else on an embedded real Redis server, and prints each step
of one approval: the interrupt raised, the session stored and reloaded, the human's answer, the
tool cycle closed.
"""

import json
import os
import sys
import uuid
from contextlib import ExitStack

import redis

from state import RedisServer, SessionStore
from state.interrupt import Interrupt, PendingToolExecution, _InterruptState


def _show(step: str, data: object) -> None:
    print(f"\n# {step}\n{json.dumps(data, indent=2, ensure_ascii=False)}")


def demo(redis_url: str) -> None:
    """Raise, persist, answer and close one interrupt against the Redis at ``redis_url``."""
    store = SessionStore(redis.Redis.from_url(redis_url))
    session_id = f"demo:{uuid.uuid4().hex[:8]}"
    tool_use = {"toolUseId": "tooluse_1", "name": "restart_service", "input": {"service": "checkout"}}
    interrupt_id = f"v1:before_tool_call:tooluse_1:{uuid.uuid5(uuid.NAMESPACE_OID, 'approval')}"

    state = _InterruptState()
    state.interrupts[interrupt_id] = Interrupt(interrupt_id, "approval", reason={"tool": tool_use["name"]})
    state.pending_tool_execution = PendingToolExecution(
        assistant_message={"role": "assistant", "content": [{"toolUse": tool_use}]},  # type: ignore[typeddict-item]
        completed_tool_results=[],
    )
    state.activate()
    version = store.save(session_id, expected_version=0, messages=[], agent_state={}, interrupt_state=state.to_dict())
    _show(f"interrupt raised, session {session_id} stored at version {version}", state.to_dict())
    print(f"interrupted sessions: {store.interrupted_sessions()}")

    session = store.load(session_id)
    assert session is not None
    restored = _InterruptState.from_dict(session.interrupt_state)
    restored.resume([{"interruptResponse": {"interruptId": interrupt_id, "response": {"decision": "approve"}}}])
    _show("reloaded from Redis and answered", restored.to_dict())

    restored.end_tool_cycle()
    version = store.save(
        session_id, expected_version=session.version, messages=[], agent_state={}, interrupt_state=restored.to_dict()
    )
    _show(f"tool cycle closed, stored at version {version}", restored.to_dict())
    print(f"interrupted sessions: {store.interrupted_sessions()}")


def main() -> int:
    """Run the demonstration; return the exit status."""
    with ExitStack() as stack:
        url = os.environ.get("REDIS_URL") or stack.enter_context(RedisServer()).url
        print(f"Redis: {url}")
        demo(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
