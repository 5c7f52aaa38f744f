"""Content blocks holding bytes (a tool's image or document result, as Strands and Bedrock shape them) behind the bot.

Strands keeps them in its records in its own JSON form (``encode_bytes_values``). Before, the bot's mirror of the
session wrote them as they were and failed (``Object of type bytes is not JSON serializable``): the agent's run
crashed as soon as a batch holding an image result stopped on an interrupt, and ``SignoffGate``'s record of a
finished call (in the agent's JSON state) replaced the tool's result by an error the model read instead.
"""

import contextlib
from typing import Any

import pytest
import strands
from strands.tools.executors import SequentialToolExecutor
from strands.vended_interventions.hitl import HumanInTheLoop

from agent.models.scripted import tool_turn
from agent.strands_bridge import SignoffGate, StrandsRunnable, signoff_session_manager
from state import SessionStore
from tests.agent.support import WorkerDied
from tests.strands.agents import StrandsScriptedModel, once_then

SID = "T0TEST:C0OPS:1700000000.000600"
PNG = b"\x89PNG\r\n\x1a\n\x00\xff"
IMAGE = {"image": {"format": "png", "source": {"bytes": PNG}}}


class _Screens:
    """``screenshot`` (an image result) and ``deploy`` in one turn; ``HumanInTheLoop`` asks for ``asked`` tools."""

    def __init__(self, store: SessionStore, *, asked: list[str], gate: bool = False) -> None:
        self.store = store
        self.asked = asked
        self.gate = gate
        self.runs = {"screenshot": 0, "deploy": 0}
        self.die_in_deploy = False
        self.gated = ["deploy"]

    def runnable(self) -> StrandsRunnable:
        asked = set(self.asked)

        @strands.tool
        def screenshot(url: str) -> dict[str, Any]:
            """Take a screenshot of a page.

            Args:
                url: The page.
            """
            self.runs["screenshot"] += 1
            return {"status": "success", "content": [IMAGE]}

        @strands.tool
        def deploy(service: str) -> str:
            """Deploy a service.

            Args:
                service: The service.
            """
            self.runs["deploy"] += 1
            if self.die_in_deploy:
                self.die_in_deploy = False
                raise WorkerDied
            return f"deployed {service}"

        turn = tool_turn(("s1", "screenshot", {"url": "https://status"}), ("t1", "deploy", {"service": "api"}))
        agent = strands.Agent(
            model=StrandsScriptedModel(once_then(turn)),
            tools=[screenshot, deploy],
            hooks=[SignoffGate(self.gated)] if self.gate else [],
            interventions=[] if self.gate else [HumanInTheLoop(allowed_tools=sorted({"screenshot", "deploy"} - asked))],
            session_manager=signoff_session_manager(SID, self.store),
            tool_executor=SequentialToolExecutor(),
            callback_handler=None,
        )
        return StrandsRunnable(agent)


def _image_result(messages: list[Any]) -> Any:
    [result] = [
        block["toolResult"]
        for message in messages
        for block in message["content"]
        if "toolResult" in block and block["toolResult"]["toolUseId"] == "s1"
    ]
    return result


@pytest.mark.parametrize("asked", [["deploy"], ["screenshot", "deploy"]], ids=["before-the-stop", "on-resume"])
def test_an_image_result_goes_through_a_stop_and_a_resume_elsewhere(store: SessionStore, asked: list[str]) -> None:
    screens = _Screens(store, asked=asked)
    stopped = screens.runnable()("look, then deploy")
    assert stopped.stop_reason == "interrupt"

    result = stopped
    for _ in range(2):  # one tool at a time: each asks in its own round, each round resumed by a fresh worker
        if result.stop_reason != "interrupt":
            break
        resumed = screens.runnable()
        answers = [{"interruptResponse": {"interruptId": each.id, "response": "y"}} for each in result.interrupts]
        result = resumed(answers)

    assert (result.stop_reason, screens.runs) == ("end_turn", {"screenshot": 1, "deploy": 1})
    assert _image_result(resumed.messages) == {"toolUseId": "s1", "status": "success", "content": [IMAGE]}
    assert _image_result(screens.runnable().messages)["content"] == [IMAGE]  # as Strands restores it
    stored = store.load(SID)
    assert stored is not None
    assert not stored.interrupted
    assert _image_result(stored.messages)["content"][0]["image"]["format"] == "png"


def test_a_recorded_image_result_is_replayed_as_it_was(store: SessionStore) -> None:
    screens = _Screens(store, asked=[], gate=True)
    screens.gated = []  # nothing asks: the worker dies in deploy after the screenshot's result was recorded
    screens.die_in_deploy = True
    with contextlib.suppress(WorkerDied):
        screens.runnable()("look, then deploy")

    again = screens.runnable()
    result = again()  # the job, redelivered: carry on

    assert result.stop_reason == "interrupt"  # deploy may have run: a person decides
    assert screens.runs == {"screenshot": 1, "deploy": 1}  # the screenshot replayed from its record, not re-run
    pending = again.agent._interrupt_state.pending_tool_execution
    assert pending is not None
    assert [done["content"] for done in pending.completed_tool_results] == [[IMAGE]]
