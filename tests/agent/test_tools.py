"""``@tool``: the input model and spec of a tool are derived once per function, not once per agent."""

from typing import Any

from agent import tool
from agent.demo import default_inventory, operations_tools
from agent.tools import ToolContext
from state.shapes import ToolUse


def _use(name: str, tool_input: dict[str, Any]) -> ToolUse:
    return {"toolUseId": "t1", "name": name, "input": tool_input}


def test_tools_built_per_agent_share_their_input_model_and_spec_but_not_their_data() -> None:
    first, second = default_inventory(), default_inventory()
    first_tools = {agent_tool.name: agent_tool for agent_tool in operations_tools(first)}
    second_tools = {agent_tool.name: agent_tool for agent_tool in operations_tools(second)}

    for name, agent_tool in first_tools.items():
        assert agent_tool._input_model is second_tools[name]._input_model
        assert agent_tool.spec is second_tools[name].spec

    context = ToolContext(tool_use=_use("scale_service", {}), agent=None, idempotency_key="k")
    result = first_tools["scale_service"].invoke(_use("scale_service", {"service": "api", "replicas": 9}), context)
    assert result["status"] == "success"
    assert (first["api"].replicas, second["api"].replicas) == (9, 6)  # each closure keeps its own inventory


def test_tools_of_one_function_under_different_names_or_defaults_keep_their_own_spec() -> None:
    def make(name: str, default: int) -> Any:
        @tool(name=name)
        def act(n: int = default) -> str:
            """Act."""
            return str(n)

        return act

    one, other, again = make("one", 1), make("other", 2), make("one", 1)

    assert one.spec["name"] == "one"
    assert other.spec["name"] == "other"
    assert other.spec["inputSchema"]["json"]["properties"]["n"]["default"] == 2
    assert one.spec is again.spec
