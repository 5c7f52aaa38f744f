"""Helpers shared by the agent tests."""

from typing import Any

from agent import AgentTool, ToolContext, tool
from agent.attempts import RERUN_INTERRUPT
from state.shapes import Message


class WorkerDied(BaseException):
    """The worker process dies here: nothing after it runs (not an ``Exception``, so neither runtime catches it)."""


def decision(kind: str, by: str | None = "U_APPROVER", reason: str | None = None) -> dict[str, Any]:
    """A decision record in the JSON form the bot sends as an interrupt response."""
    return {"decision": kind, "decided_by": by, "reason": reason, "decided_at": "2026-11-30T05:00:00Z"}


def respond(interrupt_id: str, response: Any) -> dict[str, Any]:
    """One interruptResponse block."""
    return {"interruptResponse": {"interruptId": interrupt_id, "response": response}}


def restart_checkout_asked(tool_use_id: str) -> dict[str, Any]:
    """The reason an ``ApprovalGate`` gives for ``restart_service`` of ``checkout`` (its input schema popped)."""
    return {
        "tool": "restart_service",
        "input": {"service": "checkout"},
        "toolUseId": tool_use_id,
        "response": "record",
    }


def the_rerun_question(interrupts: list[Any]) -> Any:
    """The one question a run stopped with when ``deploy api`` (``t1``) started and was never recorded."""
    [question] = interrupts
    assert question.name == RERUN_INTERRUPT
    assert question.reason == {
        "tool": "deploy",
        "input": {"service": "api"},
        "toolUseId": "t1",
        "response": "record",
        "attempts": 1,
    }
    return question


class Recorder:
    """Tools that record every execution, to prove what ran and how often."""

    def __init__(self) -> None:
        """Start with no calls."""
        self.calls: list[tuple[str, Any]] = []

    def names(self) -> list[str]:
        """The tool names called, in order."""
        return [name for name, _ in self.calls]

    def tools(self) -> list[AgentTool]:
        """restart_service (plain), read_logs (plain), delete_volume (asks inside the tool)."""

        @tool
        def restart_service(service: str) -> str:
            """Restart a service.

            Args:
                service: Name of the service.
            """
            self.calls.append(("restart_service", service))
            return f"restarted {service}"

        @tool
        def read_logs(service: str, lines: int = 10) -> dict[str, Any]:
            """Read the last lines of a service's log."""
            self.calls.append(("read_logs", service))
            return {"service": service, "lines": lines}

        @tool
        def delete_volume(volume: str, tool_context: ToolContext) -> str:
            """Delete a volume after a human confirms it in the tool."""
            self.calls.append(("delete_volume:start", volume))
            answer = tool_context.interrupt("confirm_delete", reason={"volume": volume})
            self.calls.append(("delete_volume", answer))
            return f"deleted {volume}" if answer else f"kept {volume}"

        return [restart_service, read_logs, delete_volume]


def tool_results(message: Message) -> dict[str, dict[str, Any]]:
    """The toolResult blocks of a user message, by toolUseId."""
    return {
        block["toolResult"]["toolUseId"]: dict(block["toolResult"])
        for block in message["content"]
        if "toolResult" in block
    }
