"""Run by a test in a separate process: rebuild an agent from Redis and resume it.

Usage: python -m tests.agent.resume_elsewhere REDIS_URL SESSION_ID RESPONSES_JSON
Prints one JSON object: stop_reason, text, tool calls made here, model calls made here.
"""

import json
import sys

import redis

from agent import Agent, ApprovalGate, ScriptedModel
from agent.models.scripted import text_turn
from state import SessionStore
from tests.agent.support import Recorder


def main(redis_url: str, session_id: str, responses_json: str) -> None:
    """Resume and report."""
    recorder = Recorder()
    model = ScriptedModel([text_turn("finished elsewhere")])
    store = SessionStore(redis.Redis.from_url(redis_url))
    agent = Agent(
        model, recorder.tools(), hooks=[ApprovalGate(["restart_service"])], session_id=session_id, store=store
    )
    result = agent(json.loads(responses_json))
    print(
        json.dumps(
            {
                "stop_reason": result.stop_reason,
                "text": str(result),
                "tools": recorder.calls,
                "model_calls": model.calls,
            }
        )
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
