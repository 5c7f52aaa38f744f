"""The agent of ``bench.e2e``: the demonstration agent, its model taking ``BENCH_MODEL_DELAY_S`` per call.

A real model spends its time waiting for the provider; a sleep stands for that wait (no CPU), so the
benchmark shows whether the worker overlaps the waits of several sessions. Unset or 0: no delay.
"""

import os
import time

from agent import Agent
from agent.demo import build_operations_agent
from agent.models.base import Model, ModelTurn
from agent.tools import ToolSpec
from state.shapes import Message
from state.store import SessionStore


class _SlowModel:
    """Answers as the wrapped model does, after ``delay_s``."""

    def __init__(self, model: Model, delay_s: float) -> None:
        self._model = model
        self._delay_s = delay_s

    def converse(self, messages: list[Message], tool_specs: list[ToolSpec], system_prompt: str | None) -> ModelTurn:
        time.sleep(self._delay_s)
        return self._model.converse(messages, tool_specs, system_prompt)


def operations_agent(*, session_id: str, store: SessionStore) -> Agent:
    """The demonstration agent whose model takes ``BENCH_MODEL_DELAY_S`` seconds per call."""
    agent = build_operations_agent(session_id=session_id, store=store)
    delay_s = float(os.environ.get("BENCH_MODEL_DELAY_S") or 0)
    if delay_s > 0:
        agent.model = _SlowModel(agent.model, delay_s)
    return agent
