"""``python -m bot demo``: a walk through one approval in the terminal, end to end, without Slack.

It runs on ``REDIS_URL`` when set, else on an embedded real Redis server. The demonstration
operations agent asks to restart a service and stops on the approval interrupt; the session is
in Redis; a second agent, built from Redis alone (as the bot's worker does), resumes it with an
approving decision record, and the restart runs. A denied request shows the refusal path.
"""

import json
import os
import sys
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Literal

from agent.approval import Decision
from agent.demo import build_operations_agent
from bot import preflight
from bot.cli.exits import fail
from bot.render.blocks import refusal_accounts
from bot.services import DEFAULT_RETRY_S, connect_redis
from bot.settings import ConfigError
from state import RedisServer, SessionStore

DecisionKind = Literal["approve", "deny", "expired"]


def _said(text: object, decision: Decision | None = None) -> str:
    """The agent's answer as the thread shows it: a refusal it repeats reads as the bot's account, for people."""
    accounts = refusal_accounts([decision]) if decision is not None else {}
    shown = str(text)
    for said, account in accounts.items():
        shown = shown.replace(said, account)
    return "  agent: " + shown.replace("\n", "\n         ")


def _walk(store: SessionStore, request: str, decision: DecisionKind, reason: str | None = None) -> None:
    session_id = f"demo:{uuid.uuid4().hex[:8]}"
    print(f"\n> {request}")
    stopped = build_operations_agent(session_id=session_id, store=store)(request)
    for interrupt in stopped.interrupts:
        print(f"  waiting for approval: {json.dumps(interrupt.reason)}")
    print(f"  interrupted sessions in Redis: {store.interrupted_sessions()}")

    resumed_elsewhere = build_operations_agent(session_id=session_id, store=store)
    record = Decision(decision=decision, decided_by="U_DEMO", reason=reason, decided_at=datetime.now(UTC))
    responses = [
        {"interruptResponse": {"interruptId": interrupt.id, "response": record.model_dump(mode="json")}}
        for interrupt in stopped.interrupts
    ]
    print(f"  {decision} (resumed by a fresh agent loaded from Redis)")
    print(_said(resumed_elsewhere(responses), record))


def main() -> int:
    """Run the walk-through; return the exit status."""
    with ExitStack() as stack:
        given = os.environ.get("REDIS_URL")
        try:
            client = preflight.reachable_redis(given) if given else None
        except ConfigError as error:
            return fail(error)
        url = given or stack.enter_context(RedisServer()).url
        print(f"Redis: {url}")
        store = SessionStore(client or connect_redis(url, retry_s=DEFAULT_RETRY_S, cluster="no"))
        print("\n> logs for checkout")
        print(_said(build_operations_agent()("logs for checkout")))
        _walk(store, "restart checkout", "approve")
        _walk(store, "roll back payments", "deny", "release freeze until 18:00")
    return 0


if __name__ == "__main__":
    sys.exit(main())
