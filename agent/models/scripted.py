"""A deterministic model for tests and demonstrations."""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agent.models.base import ModelError, ModelTurn
from state.shapes import Message

if TYPE_CHECKING:
    from agent.tools import ToolSpec

Script = Sequence[ModelTurn] | Callable[[list[Message]], ModelTurn]


class ScriptedModel:
    """Plays a fixed list of turns, or asks a function of the conversation for each turn.

    Attributes:
        calls: How many times the model was called (tests use it to prove a resume made no call).
        seen: The conversation as it was at each call.
    """

    def __init__(self, script: Script) -> None:
        """Keep the script; nothing runs until the first call."""
        self._script = script
        self.calls = 0
        self.seen: list[list[Message]] = []

    def converse(self, messages: list[Message], tool_specs: "list[ToolSpec]", system_prompt: str | None) -> ModelTurn:
        """Return the next scripted turn.

        Raises:
            ModelError: A turn list ran out.
        """
        self.calls += 1
        self.seen.append(list(messages))
        if callable(self._script):
            return self._script(messages)
        if self.calls > len(self._script):
            raise ModelError(f"calls=<{self.calls}> | scripted model has only {len(self._script)} turns")
        return self._script[self.calls - 1]


def text_turn(text: str) -> ModelTurn:
    """A final answer."""
    return ModelTurn({"role": "assistant", "content": [{"text": text}]}, "end_turn")


def tool_turn(*calls: tuple[str, str, dict[str, object]], text: str | None = None) -> ModelTurn:
    """A turn asking for tools: each call is ``(toolUseId, tool name, input)``."""
    message: Message = {"role": "assistant", "content": []}
    if text:
        message["content"].append({"text": text})
    for tool_use_id, name, tool_input in calls:
        message["content"].append({"toolUse": {"toolUseId": tool_use_id, "name": name, "input": tool_input}})
    return ModelTurn(message, "tool_use")
