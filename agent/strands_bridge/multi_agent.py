"""Drive a Strands ``Swarm`` or ``Graph`` with the interface the bot's runner uses for Signoff's own agent.

The orchestrator must be persisted with ``signoff_session_manager`` (a worker rebuilds it from Redis to resume
it). ``MultiAgentRunnable`` then offers:

- ``interrupted`` and ``pending_interrupts``: the orchestrator's interrupt state, which holds the interrupts
  its nodes raised (from their tools and hooks) and those of its own ``BeforeNodeCallEvent`` hooks;
- ``pending_tool_uses``: the calls waiting in each interrupted node, read from the node's interrupt state the
  orchestrator saved; an interrupt raised before a node runs guards no call;
- ``explain_refusals``, ``offers_trust`` and ``keep_trusted`` for the nodes' ``HumanInTheLoop``
  (``agent.strands_bridge.hitl``): a node's refused call tells its model who refused and why; a trust is
  offered where the node that asked lets it be trusted, and holds for the session: Strands gives a node its
  first state again for each turn (a Swarm's) or each build (another worker), so before each node's turn
  its state is given every tool Signoff holds a trust for that the node's HumanInTheLoop may trust;
- ``state``: Signoff's JSON state of the session, kept beside the orchestrator's state in its record
  (``agent.strands_bridge.multi_agent_records``) and written with it: after each node, and at the end of
  each invocation;
- ``messages``: the thread's transcript, written likewise: each prompt (a user message) and each final output
  (an assistant message). The nodes' own conversations stay in Strands' state;
- a call taking a prompt, ``interruptResponse`` blocks or nothing (continue: a run that died half way goes
  on from its last saved node), returning ``agent.AgentResult``: ``"interrupt"`` with the interrupts, else
  ``"end_turn"`` (``"failed"`` for a failed run) with the final output as the assistant message.
"""

import copy
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from strands import Agent as StrandsAgent
from strands.hooks import (
    AfterMultiAgentInvocationEvent,
    AfterToolCallEvent,
    BeforeInvocationEvent,
    BeforeNodeCallEvent,
    HookOrder,
)
from strands.interrupt import _InterruptState as StrandsInterruptState
from strands.multiagent.base import NodeResult, Status
from strands.multiagent.graph import Graph
from strands.multiagent.swarm import Swarm
from strands.session import RepositorySessionManager

from agent.agent import AgentResult, Prompt
from agent.guarded import waiting_calls, waiting_interrupts
from agent.strands_bridge.hitl import TRUSTED_TOOLS_KEY, RefusalAccounts, may_trust, remember_asked
from agent.strands_bridge.multi_agent_records import SignoffSide
from agent.strands_bridge.repository import RedisSessionRepository
from agent.vended import HUMAN_IN_THE_LOOP_INTERRUPT
from state.errors import UnstorableValueError
from state.interrupt import Interrupt
from state.shapes import ContentBlock, Message, ToolUse


def is_multi_agent(candidate: object) -> bool:
    """Whether ``candidate`` is a Strands ``Swarm`` or ``Graph`` (or a subclass)."""
    return isinstance(candidate, Swarm | Graph)


class JsonState:
    """A JSON state with ``get`` and ``set``, over a dict that is persisted elsewhere."""

    def __init__(self, values: dict[str, Any]) -> None:
        """Read and write ``values`` in place."""
        self._values = values

    def get(self, key: str) -> Any:
        """A copy of the value under ``key`` (``None`` if absent)."""
        return copy.deepcopy(self._values.get(key))

    def set(self, key: str, value: Any) -> None:
        """Store a copy of ``value``.

        Raises:
            UnstorableValueError: ``value`` has no JSON form (nothing is stored).
        """
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError, RecursionError) as error:
            raise UnstorableValueError(f"key=<{key}> | not JSON-serializable: {error}") from error
        self._values[key] = copy.deepcopy(value)


class MultiAgentRunnable:
    """A Strands ``Swarm`` or ``Graph`` behind the bot's runner interface (see the module docstring).

    Args:
        orchestrator: The Swarm or Graph, built with ``session_manager=signoff_session_manager(session_id, store)``.

    Raises:
        TypeError: ``orchestrator`` is not a Swarm or Graph, or is not persisted by ``signoff_session_manager``.
    """

    def __init__(self, orchestrator: Any) -> None:
        """Wrap ``orchestrator`` and hook the transcript's final output into its end of invocation."""
        if not is_multi_agent(orchestrator):
            raise TypeError(f"agent_type=<{type(orchestrator).__qualname__}> | not a strands Swarm or Graph")
        self.orchestrator = orchestrator
        self._side: SignoffSide = _side_of(orchestrator)
        self._outcome: Message | None = None
        self._cancelled: dict[str, str] = {}
        self._refusals = RefusalAccounts()
        self._trusted: list[str] | None = None  # None: the bot has not said which trusts it holds
        for agent in _node_agents(orchestrator).values():
            agent.hooks.add_callback(AfterToolCallEvent, self._refusals.rewrite)
            agent.hooks.add_callback(BeforeInvocationEvent, self._give_trusts)
            agent.hooks.add_callback(BeforeInvocationEvent, remember_asked)
        # First at the end of an invocation, so the session manager's sync right after writes the final output.
        orchestrator.add_hook(self._record_outcome, AfterMultiAgentInvocationEvent, order=HookOrder.SDK_FIRST)
        # Last before a node, to see what the user's hooks decided (a Swarm keeps no result of a cancelled node).
        orchestrator.add_hook(self._note_cancel, BeforeNodeCallEvent, order=HookOrder.SDK_LAST)

    @property
    def interrupted(self) -> bool:
        """Whether the orchestrator waits for interrupt responses."""
        return bool(self.orchestrator._interrupt_state.activated)

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts still waiting for an answer (empty unless interrupted)."""
        return waiting_interrupts(self.orchestrator._interrupt_state)

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls without a result yet in every interrupted node (what their interrupts guard)."""
        state = self.orchestrator._interrupt_state
        if not state.activated:
            return []
        calls: list[ToolUse] = []
        for node_id in self.orchestrator.nodes:
            saved = state.context.get(node_id)
            # A Graph marks an interrupt its BeforeNodeCallEvent hook raised; a Swarm saves the node's state
            # as it was, not activated, so it has no waiting calls either.
            if not isinstance(saved, dict) or saved.get("from_hook") or "interrupt_state" not in saved:
                continue
            calls.extend(waiting_calls(StrandsInterruptState.from_dict(saved["interrupt_state"])))
        return calls

    def explain_refusals(self, refusals: Mapping[str, str]) -> None:
        """Tell each node's model why each call its ``HumanInTheLoop`` is about to refuse was refused."""
        self._refusals.keep(refusals)

    def offers_trust(self, interrupt: Interrupt, tool: str) -> bool:
        """Whether ``interrupt`` is the ``HumanInTheLoop`` of a node that lets a person trust ``tool``."""
        if interrupt.name != HUMAN_IN_THE_LOOP_INTERRUPT:
            return False
        context = self.orchestrator._interrupt_state.context
        return any(
            may_trust(agent, tool)
            for node_id, agent in _node_agents(self.orchestrator).items()
            if interrupt.id in _raised_by(context.get(node_id))
        )

    def keep_trusted(self, tools: Collection[str]) -> None:
        """Before the orchestrator runs: the tools every node's turn starts trusted with (where its HITL allows)."""
        self._trusted = sorted(tools)

    def _give_trusts(self, event: Any) -> None:
        if self._trusted is None:
            return
        agent = event.agent
        trusted = [tool for tool in self._trusted if may_trust(agent, tool)]
        if (agent.state.get(TRUSTED_TOOLS_KEY) or []) != trusted:
            agent.state.set(TRUSTED_TOOLS_KEY, trusted)

    @property
    def state(self) -> JsonState:
        """Signoff's JSON state of the session, written with the orchestrator's next save."""
        return JsonState(self._side.state)

    @property
    def messages(self) -> list[Message]:
        """The thread's transcript: each prompt, and each final output."""
        return self._side.messages

    def __call__(self, prompt: Prompt = None) -> AgentResult:
        """Invoke the orchestrator and report its result as ``agent.AgentResult``.

        Raises:
            TypeError: Interrupted, and ``prompt`` is not a list of interruptResponse blocks.
            KeyError: A response names an interrupt the orchestrator did not raise.
            ValueError: Responses were sent to an orchestrator that is not interrupted.
        """
        if prompt is None:
            task = self._continuation()
            if task is None:
                return AgentResult("end_turn", None)
        else:
            task = self._task(prompt)
        self._outcome = None
        self._cancelled = {}
        try:
            result = self.orchestrator(task)
        except Exception as error:
            if not self._refused(error):
                raise
            # A Graph raises the error of a node its hook refused to stop the run; the run's end is saved.
            return AgentResult(Status.FAILED.value, self._outcome)
        if result.status == Status.INTERRUPTED:
            interrupts = [
                Interrupt(id=interrupt.id, name=interrupt.name, reason=interrupt.reason, response=interrupt.response)
                for interrupt in result.interrupts
            ]
            return AgentResult("interrupt", None, interrupts)
        stop_reason = "end_turn" if result.status == Status.COMPLETED else str(result.status.value)
        return AgentResult(stop_reason, self._outcome)

    def _task(self, prompt: str | Sequence[Mapping[str, Any]]) -> Any:
        """What to invoke the orchestrator with for ``prompt``; a prompt (not responses) joins the transcript."""
        if isinstance(prompt, str):
            content: list[ContentBlock] = [{"text": prompt}]
        else:
            content = cast(list[ContentBlock], [dict(block) for block in prompt])
        responses = bool(content) and all("interruptResponse" in block for block in content)
        if self.interrupted and not responses:
            raise TypeError("prompt | must resume from interrupt with list of interruptResponse's")
        if responses and not self.interrupted:
            raise ValueError("prompt | interruptResponse blocks given, but nothing is interrupted")
        if responses:
            return content
        if self.orchestrator._resume_from_session:
            # A new prompt is a new run: Strands would continue the frontier restored from a run that failed or
            # was given up, and ignore the prompt. A state without a frontier is Strands' own "start afresh".
            self.orchestrator.deserialize_state({"next_nodes_to_execute": []})
        self._side.messages.append({"role": "user", "content": content})
        return prompt if isinstance(prompt, str) else content

    def _continuation(self) -> Any:
        """What to invoke the orchestrator with to finish a run that died half way (``None``: nothing to do)."""
        if self.orchestrator._resume_from_session:
            return self.orchestrator.state.task  # restored with its frontier: the run goes on from there
        last = self._side.messages[-1] if self._side.messages else None
        if last is None or last["role"] != "user":
            return None
        # Died after its last node and before its end was saved: as Strands' own resume, it runs again
        # (gated calls are asked again; the others run at least once, as Strands documents for its nodes).
        content = last["content"]
        return content[0]["text"] if len(content) == 1 and "text" in content[0] else list(content)

    def _note_cancel(self, event: Any) -> None:
        if event.cancel_node:
            message = event.cancel_node if isinstance(event.cancel_node, str) else "node cancelled by user"
            self._cancelled[event.node_id] = message

    def _refused(self, error: Exception) -> bool:
        """Whether ``error`` is what a node a hook refused failed with (not a bug, nor a lost write)."""
        results: dict[str, NodeResult] = self.orchestrator.state.results
        return any(node_id in self._cancelled and results[node_id].result is error for node_id in results)

    def _record_outcome(self, event: Any) -> None:
        source = event.source
        status = _status_of(source)
        if status not in (Status.COMPLETED, Status.FAILED):
            return  # interrupted (nothing is final yet), or stopped mid-run by its caller
        if status == Status.FAILED and (isinstance(source, Swarm) or self._cancelled):
            # The run is over: a failed Swarm starts afresh when rebuilt, and a refused node will not run on
            # these answers. Strands leaves the answered interrupts activated; the bot must not see it waiting.
            source._interrupt_state.deactivate()
        text = _failure(source, self._cancelled) if status == Status.FAILED else final_output(source)
        message: Message = {"role": "assistant", "content": [{"text": text}]}
        self._side.messages.append(message)
        self._outcome = message


def _node_agents(orchestrator: Any) -> dict[str, Any]:
    """The orchestrator's nodes that are Strands agents (a Graph's nested orchestrators are not), by node id."""
    return {
        node_id: node.executor
        for node_id, node in orchestrator.nodes.items()
        if isinstance(node.executor, StrandsAgent)
    }


def _raised_by(saved: Any) -> set[str]:
    """The ids of the interrupts a node raised, from what its orchestrator saved of it (empty: none)."""
    if not isinstance(saved, dict) or not isinstance(saved.get("interrupt_state"), dict):
        return set()
    return set(saved["interrupt_state"].get("interrupts") or {})


def final_output(orchestrator: Any) -> str:
    """The text of the run's last node: a Swarm's last in its history, a Graph's last reached (``id: text`` each).

    A Graph's last nodes are those it ran that lead to no node it ran (a cycle: the one it ran last).
    """
    results: dict[str, NodeResult] = orchestrator.state.results
    if isinstance(orchestrator, Swarm):
        history = orchestrator.state.node_history
        last = [history[-1].node_id] if history else []
    else:
        ran = list(dict.fromkeys(node.node_id for node in orchestrator.state.execution_order))
        led = {edge.from_node.node_id for edge in orchestrator.edges if edge.to_node.node_id in ran}
        last = [node_id for node_id in ran if node_id not in led] or ran[-1:]
    outputs = [(node_id, _text(results[node_id])) for node_id in last if node_id in results]
    if len(outputs) == 1:
        return outputs[0][1]
    return "\n".join(f"{node_id}: {text}" for node_id, text in outputs)


def _failure(orchestrator: Any, cancelled: dict[str, str]) -> str:
    """What failed, node by node: its error, or why a hook cancelled it (empty: nothing names a cause)."""
    results: dict[str, NodeResult] = orchestrator.state.results
    causes = {node_id: _text(result) for node_id, result in results.items() if result.status == Status.FAILED}
    causes.update({node_id: message for node_id, message in cancelled.items() if node_id not in causes})
    return "\n".join(f"{node_id}: {cause}" for node_id, cause in causes.items())


def _text(result: NodeResult) -> str:
    # Strands ends an agent's text with a newline of its own (see ``MultiAgentResult.__str__``).
    return str(result.result).removesuffix("\n")


def _status_of(orchestrator: Any) -> Status:
    state = orchestrator.state
    status: Status = state.completion_status if isinstance(orchestrator, Swarm) else state.status
    return status


def _side_of(orchestrator: Any) -> SignoffSide:
    """Signoff's side of the orchestrator, as its session manager read or created it.

    Raises:
        TypeError: The orchestrator is not persisted by ``signoff_session_manager``.
    """
    manager = orchestrator.session_manager
    repository = getattr(manager, "session_repository", None)
    if not isinstance(manager, RepositorySessionManager) or not isinstance(repository, RedisSessionRepository):
        raise TypeError(
            f"agent_type=<{type(orchestrator).__qualname__}> | build it with "
            "session_manager=signoff_session_manager(session_id, store): a worker rebuilds it from Redis to resume it"
        )
    return repository.signoff_side(manager.session_id, orchestrator.id)
