"""Recipe: a LangGraph node that ``interrupt()``s for a sign-off, resumed with ``Command(resume=decision)``.

The node raises the interrupt with the call it wants to make; the code driving the graph asks Signoff's
HTTP API, waits for the people in Slack, and resumes the graph with the decided request. The node reads
``status`` (and ``decision.reason``) and acts, or does not.
"""

from typing import Any, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from recipes.signoff_client import ask_and_wait


class DeployState(TypedDict, total=False):
    """The graph's state: what to deploy, and what happened."""

    service: str
    outcome: str


def deploy(state: DeployState) -> DeployState:
    """Deploy, once people in Slack approved it (the interrupt's value is the sign-off asked for)."""
    decided: dict[str, Any] = interrupt(
        {"tool": "deploy", "input": {"service": state["service"]}, "reason": "release after the incident"}
    )
    if decided["status"] != "approved":
        reason = (decided.get("decision") or {}).get("reason")
        return {"outcome": f"not deployed ({decided['status']}: {reason or 'no reason given'})"}
    return {"outcome": f"deployed {state['service']}"}


def build_graph() -> CompiledStateGraph[DeployState, Any, DeployState, DeployState]:
    """One node, a checkpointer so the run can stop and resume."""
    graph = StateGraph(DeployState)
    graph.add_node("deploy", deploy)
    graph.add_edge(START, "deploy")
    graph.add_edge("deploy", END)
    return graph.compile(checkpointer=InMemorySaver())


def run_with_signoff(
    graph: CompiledStateGraph[DeployState, Any, DeployState, DeployState],
    state: DeployState,
    *,
    thread_id: str,
    api_url: str,
    api_key: str,
    channel: str,
) -> dict[str, Any]:
    """Run the graph; each interrupt is asked in Slack and the graph resumed with the decided request."""
    config: Any = {"configurable": {"thread_id": thread_id}}
    result: dict[str, Any] = graph.invoke(state, config)
    while result.get("__interrupt__"):
        [pending] = result["__interrupt__"]
        ask = {**pending.value, "channel": channel, "idempotency_key": f"{thread_id}:{pending.id}"}
        decided = ask_and_wait(api_url, api_key, ask)
        result = graph.invoke(Command(resume=decided), config)
    return result
