"""Strands' ``HumanInTheLoop(classifier=...)`` behind the bot: a person's answer decides the call it was asked about.

The handler asks its classifier once per call and remembers that call in memory only. The bot resumes an agent (a
Swarm's or Graph's node too) in a freshly built one, so before, the rebuilt handler asked its classifier again; one
that now found the call harmless (an LLM classifier's answer varies) let it run although the person refused it.
"""

from collections.abc import Callable
from typing import Any

import pytest
import strands
from strands.multiagent import GraphBuilder, Swarm
from strands.vended_interventions.hitl import HumanInTheLoop
from strands.vended_interventions.hitl.classifier import ClassifierResult

from agent.models.scripted import tool_turn
from agent.strands_bridge import MultiAgentRunnable, StrandsRunnable, signoff_session_manager
from state import SessionStore
from tests.strands.agents import StrandsScriptedModel, once_then

SID = "T0TEST:C0OPS:1700000000.000800"


class _Drops:
    """``drop_table``, judged by a classifier that finds it risky the first time only; runs counted."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.runs = 0
        self.judged = 0

    def classifier(self, event: Any, **kwargs: Any) -> ClassifierResult:
        self.judged += 1
        return ClassifierResult(requires_human_in_the_loop=self.judged == 1, reason="drops data")

    def node(self, name: str = "dba", *, session: bool = False) -> strands.Agent:
        @strands.tool
        def drop_table(table: str) -> str:
            """Drop a table.

            Args:
                table: The table.
            """
            self.runs += 1
            return f"dropped {table}"

        options: dict[str, Any] = {"session_manager": signoff_session_manager(SID, self.store)} if session else {}
        return strands.Agent(
            name=name,
            model=StrandsScriptedModel(once_then(tool_turn(("t1", "drop_table", {"table": "users"})))),
            tools=[drop_table],
            interventions=[HumanInTheLoop(classifier=self.classifier)],
            callback_handler=None,
            **options,
        )

    def agent(self) -> Any:
        return StrandsRunnable(self.node(session=True))

    def swarm(self) -> Any:
        return MultiAgentRunnable(Swarm(nodes=[self.node()], session_manager=signoff_session_manager(SID, self.store)))

    def graph(self) -> Any:
        builder = GraphBuilder()
        builder.add_node(self.node(), "dba")
        builder.set_entry_point("dba")
        builder.set_execution_timeout(60)
        builder.set_session_manager(signoff_session_manager(SID, self.store))
        return MultiAgentRunnable(builder.build())


KINDS = pytest.mark.parametrize("kind", ["agent", "swarm", "graph"])


@KINDS
@pytest.mark.parametrize(("answer", "runs"), [("n", 0), ("y", 1)])
def test_the_answer_decides_a_call_the_classifier_sent_to_a_person(
    store: SessionStore, kind: str, answer: str, runs: int
) -> None:
    drops = _Drops(store)
    build: Callable[[], Any] = getattr(drops, kind)
    [asked] = build()("drop the users table").interrupts
    assert asked.name == "strands:human-in-the-loop"

    result = build()([{"interruptResponse": {"interruptId": asked.id, "response": answer}}])  # another worker

    assert result.stop_reason == "end_turn"
    assert (drops.runs, drops.judged) == (runs, 1)  # judged once: the person's answer stands
