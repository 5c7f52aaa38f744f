"""The OpenAI Agents SDK recipe with the real SDK and its scripted model (no network): a tool that needs
approval interrupts the run, the approval is asked through the HTTP API and decided in the loopback Slack,
and the run state is approved or rejected and resumed."""

import asyncio
from collections.abc import Iterator

import pytest
from agents import Agent, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from bot.render import action_ids as ids
from recipes.openai_agents import run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


@pytest.fixture(autouse=True)
def _no_tracing() -> Iterator[None]:
    """The SDK traces runs to OpenAI by default: off, so the tests stay offline (and quiet)."""
    set_tracing_disabled(True)
    yield
    set_tracing_disabled(False)


def _agent(ran: list[str]) -> tuple[Agent[None], ScriptedModel]:
    @function_tool(needs_approval=True)
    def restart_service(service: str) -> str:
        """Restart every replica of a service.

        Args:
            service: The service's name.
        """
        ran.append(service)
        return f"{service}: restarted"

    model = ScriptedModel(
        [
            {"output": [function_call("restart_service", {"service": "checkout"}, call_id="call_1")]},
            {"output": [assistant_message("done")]},
        ]
    )
    return Agent(name="ops", instructions="Operate services.", tools=[restart_service], model=model), model


def test_an_approved_call_runs_after_the_click(bot: Bot, api_key: str) -> None:
    ran: list[str] = []
    agent, model = _agent(ran)
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        result = asyncio.run(
            run_with_signoff(agent, "restart checkout", api_url=bot.url, api_key=api_key, channel=CHANNEL, run_id="r1")
        )
    assert ran == ["checkout"]
    assert result.final_output == "done"
    [message] = bot.approval_messages()
    assert "restart_service" in message["text"]
    tool_output = [
        item for item in model.calls[-1].input if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert tool_output[-1]["output"] == "checkout: restarted"


def test_a_denied_call_never_runs_and_the_model_is_told_why(bot: Bot, api_key: str) -> None:
    ran: list[str] = []
    agent, model = _agent(ran)
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="peak traffic")  # noqa: E731
    with person_in_slack(bot, deny):
        result = asyncio.run(
            run_with_signoff(agent, "restart checkout", api_url=bot.url, api_key=api_key, channel=CHANNEL, run_id="r2")
        )
    assert ran == []
    assert result.final_output == "done"
    told = [
        item for item in model.calls[-1].input if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert told[-1]["output"] == f"Not run: denied by {APPROVER}: peak traffic."


def test_a_call_nobody_decided_in_time_is_withdrawn_and_the_model_is_not_told_a_person_refused_it(
    bot: Bot, api_key: str
) -> None:
    ran: list[str] = []
    agent, model = _agent(ran)
    result = asyncio.run(
        run_with_signoff(
            agent, "restart checkout", api_url=bot.url, api_key=api_key, channel=CHANNEL, run_id="r3", timeout_s=1
        )
    )
    assert ran == []
    assert result.final_output == "done"
    told = [
        item for item in model.calls[-1].input if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    assert told[-1]["output"] == (
        "Not run: the approval request was withdrawn before anyone decided "
        "(withdrawn through the API by recipe-agent). Do not retry automatically."
    )
