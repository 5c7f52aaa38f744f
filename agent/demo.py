"""The demonstration agent: an operations assistant over a small local inventory.

Its scripted model maps plain requests ("restart checkout", "scale search to 5", "roll back
payments", "logs for api", "deploy checkout") to tool calls, so the whole approval flow can be shown
without an LLM; several in one sentence ("check the logs of checkout, then restart checkout and roll
back payments") are planned as one turn of calls. Reading logs is free; restarting, scaling, rolling
back and deploying wait for an approval. Before a deploy it asks the person where to (``ask_user``: a
question, answered in words).
"""

import re
from dataclasses import dataclass, field

from agent.agent import Agent
from agent.approval import EDIT_NOTE_PREFIX, NO_ANSWER, ApprovalGate
from agent.models.base import ModelTurn
from agent.models.scripted import ScriptedModel, text_turn, tool_turn
from agent.tools import AgentTool, ToolContext, tool
from state.shapes import Message
from state.store import SessionStore

RISKY_TOOLS = ("restart_service", "scale_service", "rollback_deploy", "deploy_service")

_HELP = (
    "I can read logs, restart, scale, roll back or deploy these services: {services}. "
    "Try 'restart checkout', 'scale search to 5', 'roll back payments', 'deploy api' or 'logs for api'."
)
_ASK_ID = "ask-region-"
"""How the model's ``ask_user`` calls begin their toolUseId (then the service they are about)."""
NO_REGION = "Nobody said which region, so nothing was deployed."


@dataclass
class Service:
    """One service of the demonstration inventory."""

    replicas: int
    version: str
    previous_version: str
    log: list[str] = field(default_factory=list)


def default_inventory() -> dict[str, Service]:
    """A fresh inventory (each agent gets its own, so runs never interfere)."""
    return {
        "checkout": Service(3, "v42", "v41", ["GET /cart 200", "POST /pay 502 upstream timeout"]),
        "search": Service(2, "v17", "v16", ["query took 1800 ms", "index lag 40 s"]),
        "payments": Service(4, "v8", "v7", ["card declined spike", "deploy v8 finished"]),
        "api": Service(6, "v120", "v119", ["p99 410 ms", "GET /health 200"]),
    }


def operations_tools(inventory: dict[str, Service]) -> list[AgentTool]:
    """The tools, bound to ``inventory``: four operations, a deploy, and a question to the person."""

    def find(service: str) -> Service:
        if service not in inventory:
            raise KeyError(f"unknown service {service!r}; known: {', '.join(sorted(inventory))}")
        return inventory[service]

    @tool(idempotent=True)  # a read: running it again after a lost result is harmless
    def read_logs(service: str, lines: int = 5) -> str:
        """Read the latest log lines of a service.

        Args:
            service: Service name.
            lines: How many lines, newest last.
        """
        return "\n".join(find(service).log[-lines:])

    @tool
    def restart_service(service: str, tool_context: ToolContext) -> str:
        """Restart every replica of a service.

        Args:
            service: Service name.
            tool_context: Injected by the agent (not in the tool's schema); its idempotency key marks the log line.
        """
        target = find(service)
        target.log.append(f"restart requested (key {tool_context.idempotency_key[:8]})")
        return f"{service}: {target.replicas} replicas restarted"

    @tool
    def scale_service(service: str, replicas: int) -> str:
        """Change the number of replicas of a service.

        Args:
            service: Service name.
            replicas: The new replica count (1 to 50).
        """
        if not 1 <= replicas <= 50:
            raise ValueError("replicas must be between 1 and 50")
        target = find(service)
        before, target.replicas = target.replicas, replicas
        return f"{service}: scaled from {before} to {replicas} replicas"

    @tool
    def rollback_deploy(service: str) -> str:
        """Roll a service back to its previous version.

        Args:
            service: Service name.
        """
        target = find(service)
        target.version, target.previous_version = target.previous_version, target.version
        return f"{service}: rolled back from {target.previous_version} to {target.version}"

    @tool
    def deploy_service(service: str, region: str) -> str:
        """Deploy the current version of a service to a region.

        Args:
            service: Service name.
            region: Where to deploy it, as the person said.
        """
        target = find(service)
        target.log.append(f"deployed {target.version} to {region}")
        return f"{service}: {target.version} deployed to {region}"

    @tool
    def ask_user(question: str, tool_context: ToolContext) -> str:
        """Ask the person a question and wait for their answer (in words).

        Args:
            question: What to ask.
            tool_context: Injected by the agent (not in the tool's schema): raises the question's interrupt.
        """
        return str(tool_context.interrupt("ask-user", reason={"question": question}))

    return [read_logs, restart_service, scale_service, rollback_deploy, deploy_service, ask_user]


_REQUESTS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(?:logs?|read)\b.*?\b(?P<service>[a-z][\w-]*)\s*$"), "read_logs"),
    (re.compile(r"\brestart\s+(?:the\s+)?(?P<service>[a-z][\w-]*)"), "restart_service"),
    (re.compile(r"\bscale\s+(?:the\s+)?(?P<service>[a-z][\w-]*)\s+to\s+(?P<replicas>\d+)"), "scale_service"),
    (re.compile(r"\broll\s*back\s+(?:the\s+)?(?P<service>[a-z][\w-]*)"), "rollback_deploy"),
]
_DEPLOY = re.compile(r"\bdeploy\s+(?:the\s+)?(?P<service>[a-z][\w-]*)")


_EDITED = "(An approver edited this call before it ran.)"
_CLAUSES = re.compile(r"\s*(?:,\s*(?:and\s+|then\s+)?|;\s*|\s+and\s+then\s+|\s+then\s+|\s+and\s+)")


def _call_for(request: str) -> tuple[str, dict[str, object]] | None:
    """The tool call one plain request asks for, if it is one the demonstration knows."""
    for pattern, tool_name in _REQUESTS:
        match = pattern.search(request)
        if match:
            tool_input: dict[str, object] = {"service": match["service"]}
            if tool_name == "scale_service":
                tool_input["replicas"] = int(match["replicas"])
            return tool_name, tool_input
    return None


def operations_model(services: list[str]) -> ScriptedModel:
    """A scripted model: one tool call for a recognised request, then a summary of its result."""

    def respond(messages: list[Message]) -> ModelTurn:
        last = messages[-1]
        results = [block["toolResult"] for block in last["content"] if "toolResult" in block]
        if results:
            asked = [result for result in results if result["toolUseId"].startswith(_ASK_ID)]
            if asked:  # the person said where to deploy: deploy there (an approval), or stop if nobody said
                service = asked[0]["toolUseId"].removeprefix(_ASK_ID).rsplit("-", 1)[0]
                region = " ".join(content.get("text", "") for content in asked[0]["content"]).strip()
                if not region or region == NO_ANSWER or asked[0].get("status") == "error":
                    return text_turn(NO_REGION)
                return tool_turn((f"tooluse_{len(messages)}", "deploy_service", {"service": service, "region": region}))
            texts = [content.get("text", "") for result in results for content in result["content"]]
            # What the gate tells the model of an edit is for the model: people read the message's own account.
            lines = [_EDITED if text.startswith(EDIT_NOTE_PREFIX) else text for text in texts]
            return text_turn("\n".join(lines))
        request = " ".join(block.get("text", "") for block in last["content"]).lower().strip()
        # Several requests in one sentence are planned together: one turn, every call in it (the risky ones are
        # asked in one round, and the agent resumes once all are decided).
        planned = [call for clause in _CLAUSES.split(request) if (call := _call_for(clause)) is not None]
        if len(planned) > 1:
            calls = [
                (f"tooluse_{len(messages)}_{index}", name, tool_input)
                for index, (name, tool_input) in enumerate(planned)
            ]
            return tool_turn(*calls)
        single = _call_for(request)
        deploy = _DEPLOY.search(request)
        if single is None and deploy is not None:  # a deploy asks the person where to first
            service = deploy["service"]
            question: dict[str, object] = {"question": f"Which region should I deploy {service} to?"}
            return tool_turn((f"{_ASK_ID}{service}-{len(messages)}", "ask_user", question))
        if single is not None:
            return tool_turn((f"tooluse_{len(messages)}", *single))
        return text_turn(_HELP.format(services=", ".join(services)))

    return ScriptedModel(respond)


def build_operations_agent(*, session_id: str | None = None, store: SessionStore | None = None) -> Agent:
    """The demonstration agent; risky tools wait for an approval."""
    inventory = default_inventory()
    return Agent(
        operations_model(sorted(inventory)),
        operations_tools(inventory),
        hooks=[ApprovalGate(RISKY_TOOLS)],
        session_id=session_id,
        store=store,
        system_prompt="You are an operations assistant. Risky actions need a human's approval.",
        # A turn's calls run side by side: each risky one asks at once, so all are asked in one round.
        concurrent_tools=True,
    )
