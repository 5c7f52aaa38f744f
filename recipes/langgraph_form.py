"""Recipe: a LangGraph node asks people to fill in a form, ``interrupt(question, response_schema=...)``, in Slack.

LangGraph's ``interrupt()`` takes a ``response_schema`` (a Pydantic model, a ``TypedDict``, a dataclass, or a JSON
Schema dict) and surfaces it on the interrupt as JSON Schema. The code driving the graph asks the interrupt through
Signoff's HTTP API as a question with that schema: Slack shows a form (the Edit form's fields and checks), and the
object submitted resumes the graph, which LangGraph validates into the node's type.

An interrupt without a schema is asked too: a text is answered in words, and a dict is the question as the API
takes it (``{"question": ..., "options": [...], "multiple": true}``).
"""

from typing import Any, Literal, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, interrupt
from pydantic import BaseModel, Field

from recipes.signoff_client import ask_question_and_wait


class Unanswered(RuntimeError):
    """Nobody answered in time (or the question was withdrawn): the graph stays paused at the question."""


class DeployPlan(BaseModel):
    """How to deploy: the form the person fills in."""

    region: Literal["eu-west-1", "us-east-1"] = Field(description="Where the new version runs")
    replicas: int = Field(ge=1, le=9)
    canary: bool = False


class DeployState(TypedDict, total=False):
    """The graph's state: what to deploy, and what happened."""

    service: str
    outcome: str


def plan_deploy(state: DeployState) -> DeployState:
    """Ask how to deploy (the interrupt's value is the question, its schema the form), then deploy that way."""
    plan = interrupt(f"How should {state['service']} be deployed?", response_schema=DeployPlan)
    canary = " as a canary" if plan.canary else ""
    return {"outcome": f"deployed {state['service']} to {plan.region} on {plan.replicas} replicas{canary}"}


def build_graph() -> CompiledStateGraph[DeployState, Any, DeployState, DeployState]:
    """One node, a checkpointer so the run can stop and resume."""
    graph = StateGraph(DeployState)
    graph.add_node("plan_deploy", plan_deploy)
    graph.add_edge(START, "plan_deploy")
    graph.add_edge("plan_deploy", END)
    return graph.compile(checkpointer=InMemorySaver())


def run_with_signoff(
    graph: CompiledStateGraph[Any, Any, Any, Any],
    state: Any,
    *,
    thread_id: str,
    api_url: str,
    api_key: str,
    channel: str,
    requester: str | None = None,
    timeout_s: float = 3600,
) -> dict[str, Any]:
    """Run the graph; each interrupt is asked in Slack as a question and the graph resumed with its answer.

    ``thread_id`` is the checkpointer's thread and makes each question's idempotency key
    (``<thread_id>:<interrupt id>``): a run retried after a crash asks nothing twice.

    Raises:
        Unanswered: a question expired or was withdrawn; resume the graph with ``Command(resume=...)`` yourself.
    """
    config: Any = {"configurable": {"thread_id": thread_id}}
    output = graph.invoke(state, config, version="v2")
    while output.interrupts:
        answers = {}
        for pending in output.interrupts:
            asked = {**question_for(pending), "channel": channel, "idempotency_key": f"{thread_id}:{pending.id}"}
            if requester is not None:
                asked["requester"] = requester
            question = ask_question_and_wait(api_url, api_key, asked, timeout_s=timeout_s)
            if question["status"] != "answered":
                raise Unanswered(f"question={question['id']} status={question['status']} | not answered")
            answers[pending.id] = question["answer"]
        output = graph.invoke(Command(resume=answers), config, version="v2")
    return dict(output.value)


def question_for(pending: Interrupt) -> dict[str, Any]:
    """The question an interrupt asks: its value (a text, or the API's question fields) with its schema as the form."""
    asked: dict[str, Any] = {"question": pending.value} if isinstance(pending.value, str) else dict(pending.value)
    if isinstance(pending.response_schema, dict):
        asked["schema"] = pending.response_schema
    return asked
