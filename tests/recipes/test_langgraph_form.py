"""The LangGraph form recipe with the real library: a node's ``interrupt(question, response_schema=...)`` asked
through the HTTP API as a form question, filled in in the loopback Slack, and the graph resumed with the object."""

import pytest
from langgraph.types import Interrupt

from recipes.langgraph_form import Unanswered, build_graph, question_for, run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


def test_the_form_a_person_fills_in_resumes_the_node_validated(bot: Bot, api_key: str) -> None:
    def fill_in(question_id: str) -> None:
        view = bot.open_answer(question_id, user=APPROVER)
        changes = {"region": "us-east-1", "replicas": "3", "canary": True}
        assert bot.submit_answer_form(view, user=APPROVER, changes=changes).status == 200

    with person_in_slack(bot, fill_in):
        state = run_with_signoff(
            build_graph(),
            {"service": "checkout"},
            thread_id="f1",
            api_url=bot.url,
            api_key=api_key,
            channel=CHANNEL,
            timeout_s=10,  # a form that is never answered fails the test instead of waiting an hour
        )
    assert state["outcome"] == "deployed checkout to us-east-1 on 3 replicas as a canary"
    [message] = bot.approval_messages()
    assert "How should checkout be deployed?" in message["text"]


def test_a_question_nobody_answers_leaves_the_graph_paused(bot: Bot, api_key: str) -> None:
    graph = build_graph()
    with pytest.raises(Unanswered, match="status=cancelled"):
        run_with_signoff(
            graph,
            {"service": "checkout"},
            thread_id="f2",
            api_url=bot.url,
            api_key=api_key,
            channel=CHANNEL,
            timeout_s=0,
        )
    assert graph.get_state({"configurable": {"thread_id": "f2"}}).interrupts  # still waiting for its answer


def test_an_interrupt_without_a_schema_is_asked_as_it_says() -> None:
    assert question_for(Interrupt("Which region?")) == {"question": "Which region?"}
    options = {"question": "Notify whom?", "options": ["ops", "sre"], "multiple": True}
    assert question_for(Interrupt(options)) == options
    schema = {"type": "object", "properties": {"region": {"type": "string"}}}
    assert question_for(Interrupt("Where?", response_schema=schema)) == {"question": "Where?", "schema": schema}
