"""The agent loop: call the model, run the tools it asks for, stop on interrupts, resume.

Semantics follow Strands Agents 1.62. When tools interrupt, the assistant toolUse message stays
last in the conversation and the interrupt state keeps a ``PendingToolExecution``; a resume
replays that message without calling the model, keeps the results that completed and re-runs
only the calls without a result.

Crash safety: before a batch runs, and after every result, the pending execution is saved, so a
process that dies mid-batch is rebuilt from Redis and finishes the batch without re-running a
call that completed. Saving a result is retried in place while Redis is briefly unreachable
(``RESULT_SAVE_RETRY_S``). Before a tool that is not idempotent runs, the call is marked started
(``agent.attempts``): a call found started but unrecorded is never re-run silently; the agent
stops on a ``rerun`` interrupt and a human decides.
"""

import asyncio
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Final

from agent import attempts, hooks
from agent.guarded import waiting_calls
from agent.hooks import HookProvider, HookRegistry
from agent.interrupting import REGISTRY_LOCK
from agent.models.base import Model
from agent.session import AgentState, SessionBinding
from agent.tools import AgentTool, ToolContext, error_result, idempotency_key
from state.interrupt import Interrupt, InterruptException, PendingToolExecution, _InterruptState
from state.shapes import ContentBlock, Message, ToolResult, ToolUse
from state.store import SessionStore
from state.validation import check_messages

Prompt = str | Sequence[ContentBlock] | Sequence[dict[str, Any]] | None

RESULT_SAVE_RETRY_S: Final = 10.0
"""How long recording a tool's result is retried while Redis is unreachable, before the run fails."""

# Strands 1.62's words, character for character (tests compare them).
_NOT_INTERRUPTED = (
    "Received interrupt responses but agent is not in interrupt state. "
    "Ensure the agent instance is preserved between calls, or use session "
    "management to persist interrupt state across requests."
)
_CANCELLED_BY_HOOK = "Not executed: the call was cancelled before it ran."
_NOT_RUN_BEFORE_NEW_PROMPT = "Not executed: the run stopped before this call ran, and a new request came in."


@dataclass(frozen=True)
class AgentResult:
    """What one invocation ended with.

    Attributes:
        stop_reason: ``"end_turn"``, ``"interrupt"``, ``"max_cycles"`` or what the model reported.
        message: The last assistant message (``None`` if the run stopped before the model spoke).
        interrupts: The interrupts that stopped this run and still await an answer.
    """

    stop_reason: str
    message: Message | None
    interrupts: list[Interrupt] = field(default_factory=list)

    def __str__(self) -> str:
        """The text of the last message."""
        if self.message is None:
            return ""
        return "\n".join(block["text"] for block in self.message["content"] if "text" in block)


class Agent:
    """An LLM with tools that can stop for humans and resume where it stopped.

    Args:
        model: The model (see ``agent.models``).
        tools: The tools it may call.
        hooks: Hook providers (e.g. ``ApprovalGate``).
        session_id: Persist under this id (requires ``store``); an agent built later, in any
            process, with the same id continues the same session.
        store: Where sessions live.
        system_prompt: Passed to the model on every call.
        concurrent_tools: Run a batch's calls in parallel; one interrupting does not stop the others.
        max_cycles: Model calls allowed per invocation before it stops with ``"max_cycles"``.
    """

    def __init__(
        self,
        model: Model,
        tools: Iterable[AgentTool] = (),
        *,
        hooks: Iterable[HookProvider] = (),
        session_id: str | None = None,
        store: SessionStore | None = None,
        system_prompt: str | None = None,
        concurrent_tools: bool = False,
        max_cycles: int = 20,
    ) -> None:
        """Load the session, if any; the model is not called until the agent is invoked."""
        if (session_id is None) != (store is None):
            raise ValueError("session_id and store go together")
        self.model = model
        self.tools = {agent_tool.name: agent_tool for agent_tool in tools}
        self.hooks = HookRegistry()
        for provider in hooks:
            self.hooks.add_hook(provider)
        self.session_id = session_id
        self.system_prompt = system_prompt
        self.concurrent_tools = concurrent_tools
        self.max_cycles = max_cycles
        self._session = SessionBinding(store, session_id) if store is not None and session_id else None
        if self._session is not None:
            self.messages, self.state, self._interrupt_state = self._session.load()
        else:
            self.messages, self.state, self._interrupt_state = [], AgentState({}), _InterruptState()
        self._running = threading.Lock()

    @property
    def interrupted(self) -> bool:
        """Whether the agent waits for interrupt responses."""
        return self._interrupt_state.activated

    @property
    def pending_interrupts(self) -> list[Interrupt]:
        """The interrupts still waiting for an answer (empty unless interrupted)."""
        if not self._interrupt_state.activated:
            return []
        return [interrupt for interrupt in self._interrupt_state.interrupts.values() if interrupt.response is None]

    @property
    def pending_tool_uses(self) -> list[ToolUse]:
        """The calls of the interrupted batch without a result yet (what its interrupts guard)."""
        return waiting_calls(self._interrupt_state)

    def __call__(self, prompt: Prompt = None) -> AgentResult:
        """Work on ``prompt``, or resume with a list of ``interruptResponse`` blocks.

        Raises:
            TypeError: Interrupted, and ``prompt`` is not a list of interruptResponse blocks.
            KeyError: A response names an interrupt this agent did not raise.
            ValueError: Responses were sent to an agent that is not interrupted.
            RuntimeError: The agent is already running in another thread.
            state.ConflictError: Another process changed the session since it was loaded.
        """
        if not self._running.acquire(blocking=False):
            raise RuntimeError("agent is already running; one invocation at a time")
        try:
            return self._invoke(prompt)
        finally:
            self._running.release()

    async def invoke_async(self, prompt: Prompt = None) -> AgentResult:
        """``agent(prompt)`` without blocking the event loop (tools and model run in a thread)."""
        return await asyncio.to_thread(self, prompt)

    def _invoke(self, prompt: Prompt) -> AgentResult:
        interrupt_state = self._interrupt_state
        if interrupt_state.activated:
            # Stored with the run's first write (a call's started mark, a result, the stop, the answer):
            # a run that fails before it is resumed again with the same responses.
            interrupt_state.resume(prompt)
        elif _is_interrupt_responses(prompt):
            raise ValueError(_NOT_INTERRUPTED)
        else:
            self._append_prompt(prompt)

        try:
            result = self._run()
        finally:
            # Whatever ended the run (an answer, an error), an invocation-scoped answer must not
            # outlive it unless the agent is stopped waiting for more answers.
            if not interrupt_state.activated:
                interrupt_state.end_interrupt_cycle()
        self._save()
        self.hooks.dispatch(hooks.AfterInvocationEvent(agent=self, stop_reason=result.stop_reason))
        return result

    def _run(self) -> AgentResult:
        interrupt_state = self._interrupt_state
        gate = hooks.BeforeInvocationEvent(agent=self, messages=self.messages, _interrupt_state=interrupt_state)
        interrupts = self.hooks.dispatch(gate)
        if interrupts:
            interrupt_state.activate()
            return AgentResult("interrupt", None, interrupts)
        if interrupt_state.activated and interrupt_state.pending_tool_execution is None:
            # Resumed from invocation gates alone: their answers hold for the rest of the cycle.
            interrupt_state.end_tool_cycle()

        last: Message | None = None
        for _ in range(self.max_cycles):
            batch = self._unfinished_batch()
            if batch is None:
                turn = self.model.converse(self.messages, self._tool_specs(), self.system_prompt)
                # Stored before any of its calls runs, when the run stops, or with the answer: one write, not two.
                self._append(turn.message, save=False)
                if turn.stop_reason != "tool_use" or not _tool_uses(turn.message):
                    return AgentResult(turn.stop_reason, turn.message)
                batch = turn.message
            last = batch
            interrupts = self._execute_batch(batch)
            if interrupts:
                return AgentResult("interrupt", batch, interrupts)
        return AgentResult("max_cycles", last)

    def _unfinished_batch(self) -> Message | None:
        """The toolUse message to (re)run without a model call: after an interrupt or a crash."""
        pending = self._interrupt_state.pending_tool_execution
        if pending is not None:
            return pending.assistant_message
        if self.messages and self.messages[-1]["role"] == "assistant" and _tool_uses(self.messages[-1]):
            return self.messages[-1]
        return None

    def _execute_batch(self, message: Message) -> list[Interrupt]:
        interrupt_state = self._interrupt_state
        pending = interrupt_state.pending_tool_execution
        results = list(pending.completed_tool_results) if pending is not None else []
        done = {result["toolUseId"] for result in results}
        calls = _tool_uses(message)
        todo = [tool_use for tool_use in calls if tool_use["toolUseId"] not in done]

        before = hooks.BeforeToolsEvent(agent=self, message=message, tool_uses=todo, _interrupt_state=interrupt_state)
        interrupts = self.hooks.dispatch(before)
        if interrupts:
            return self._stop_for(message, results, interrupts)
        if pending is None:
            interrupt_state.pending_tool_execution = PendingToolExecution(message, list(results))

        def record(result: ToolResult) -> None:
            results.append(result)
            with REGISTRY_LOCK:
                interrupt_state.set_pending_tool_results(list(results))
                attempts.clear_started(self.state, [result["toolUseId"]])
            if len(results) < len(calls):  # the last one is stored with the results message closing the batch
                self._save(retry_for_s=RESULT_SAVE_RETRY_S)

        if before.cancel:
            text = before.cancel if isinstance(before.cancel, str) else _CANCELLED_BY_HOOK
            for tool_use in todo:
                record(error_result(tool_use["toolUseId"], text))
        elif self.concurrent_tools and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=len(todo), thread_name_prefix="tool") as pool:
                futures = [pool.submit(self._call_tool, tool_use) for tool_use in todo]
                asked: dict[int, list[Interrupt]] = {}
                for future in as_completed(futures):
                    outcome = future.result()
                    if isinstance(outcome, list):
                        asked[futures.index(future)] = outcome
                    else:
                        record(outcome)
                # In the order of the calls, whichever asked first: people read a round's requests as planned.
                interrupts.extend(interrupt for index in sorted(asked) for interrupt in asked[index])
        else:
            for tool_use in todo:
                outcome = self._call_tool(tool_use)
                if isinstance(outcome, list):
                    interrupts.extend(outcome)
                    break
                record(outcome)

        if interrupts:
            return self._stop_for(message, results, interrupts)
        interrupt_state.end_tool_cycle()
        self._append(
            {"role": "user", "content": [{"toolResult": result} for result in results]}, retry_for_s=RESULT_SAVE_RETRY_S
        )
        return []

    def _call_tool(self, tool_use: ToolUse) -> ToolResult | list[Interrupt]:
        """Run one call through its hooks; return its result, or the interrupts that stopped it."""
        tool_use_id = tool_use["toolUseId"]
        agent_tool = self.tools.get(tool_use["name"])
        before = hooks.BeforeToolCallEvent(
            agent=self, tool_use=tool_use, tool=agent_tool, _interrupt_state=self._interrupt_state
        )
        interrupts = self.hooks.dispatch(before)
        if interrupts:
            return interrupts
        if before.tool_use is not tool_use:  # a hook set the input that runs (an approver's edit): nothing else
            tool_use = {**tool_use, "input": before.tool_use["input"]}
        if before.cancel_tool:
            result = error_result(
                tool_use_id, before.cancel_tool if isinstance(before.cancel_tool, str) else _CANCELLED_BY_HOOK
            )
        elif agent_tool is None:
            result = error_result(tool_use_id, f"Not executed: there is no tool named {tool_use['name']!r}.")
        else:
            if agent_tool.idempotent:
                self._save(retry_for_s=RESULT_SAVE_RETRY_S)  # its batch is stored before it runs (a no-op if it is)
            try:
                refusal = None if agent_tool.idempotent else self._start(before, tool_use)
            except InterruptException as raised:
                return [raised.interrupt]
            if refusal is not None:
                return self._after(tool_use, error_result(tool_use_id, refusal))
            context = ToolContext(
                tool_use=tool_use,
                agent=self,
                idempotency_key=idempotency_key(self.session_id, tool_use_id),
                _interrupt_state=self._interrupt_state,
            )
            try:
                result = agent_tool.invoke(tool_use, context)
            except InterruptException as raised:
                # The tool stopped itself to ask a human: by design it runs again from its start.
                with REGISTRY_LOCK:
                    attempts.clear_started(self.state, [tool_use_id])
                return [raised.interrupt]
        return self._after(tool_use, result)

    def _after(self, tool_use: ToolUse, result: ToolResult) -> ToolResult:
        after = hooks.AfterToolCallEvent(agent=self, tool_use=tool_use, result=result)
        self.hooks.dispatch(after)
        return after.result

    def _start(self, before: hooks.BeforeToolCallEvent, tool_use: ToolUse) -> str | None:
        """Mark the call started, durably, before it runs; or refuse a re-run a human declined.

        Raises:
            InterruptException: An earlier attempt may have run: a human must say whether to run it again.
        """
        tool_use_id = tool_use["toolUseId"]
        with REGISTRY_LOCK:
            started = attempts.attempts_started(self.state, tool_use_id)
        if started:
            refusal = attempts.refuse_rerun(before.interrupt, tool_use, started)
            if refusal is not None:
                return refusal
        with REGISTRY_LOCK:
            attempts.mark_started(self.state, tool_use_id)
        self._save(retry_for_s=RESULT_SAVE_RETRY_S)
        return None

    def _stop_for(self, message: Message, results: list[ToolResult], interrupts: list[Interrupt]) -> list[Interrupt]:
        self._interrupt_state.pending_tool_execution = PendingToolExecution(message, results)
        self._interrupt_state.activate()
        self._save()
        return interrupts

    def _append_prompt(self, prompt: Prompt) -> None:
        if prompt is None or (not isinstance(prompt, str) and len(prompt) == 0):
            return
        if isinstance(prompt, str):
            messages: list[Message] = [{"role": "user", "content": [{"text": prompt}]}]
        elif all(isinstance(item, dict) and {"role", "content"} <= item.keys() for item in prompt):
            messages = check_messages(list(prompt), prefix="prompt")  # a list of messages, as Strands accepts
        else:
            messages = check_messages([{"role": "user", "content": list(prompt)}], prefix="prompt")
        self._close_unfinished_batch()
        for message in messages:
            self._append(message)

    def _close_unfinished_batch(self) -> None:
        """Before a new prompt: answer a batch a crash or an error left half done, as Strands does.

        The model then reads results for every call it made (completed ones kept, the others
        reported as not run), never a dangling toolUse.
        """
        batch = self._unfinished_batch()
        if batch is None:
            return
        pending = self._interrupt_state.pending_tool_execution
        results = list(pending.completed_tool_results) if pending is not None else []
        done = {result["toolUseId"] for result in results}
        unfinished = [tool_use["toolUseId"] for tool_use in _tool_uses(batch) if tool_use["toolUseId"] not in done]
        results += [
            error_result(
                tool_use_id,
                attempts.UNRECORDED_RESULT
                if attempts.attempts_started(self.state, tool_use_id)
                else _NOT_RUN_BEFORE_NEW_PROMPT,
            )
            for tool_use_id in unfinished
        ]
        attempts.clear_started(self.state, unfinished)
        self._interrupt_state.end_tool_cycle()
        self._append({"role": "user", "content": [{"toolResult": result} for result in results]})

    def _append(self, message: Message, *, save: bool = True, retry_for_s: float = 0.0) -> None:
        self.messages.append(message)
        if save:
            self._save(retry_for_s=retry_for_s)

    def _save(self, *, retry_for_s: float = 0.0) -> None:
        if self._session is None:
            return
        with REGISTRY_LOCK:
            try:
                if retry_for_s:
                    self._session.save_retrying(self.messages, self.state, self._interrupt_state, within_s=retry_for_s)
                else:
                    self._session.save(self.messages, self.state, self._interrupt_state)
            except Exception:  # boundary: whatever failed the save, memory is rolled back and the error raised
                del self.messages[self._session.stored_messages :]  # memory must not run ahead of what Redis holds
                raise

    def _tool_specs(self) -> list[Any]:
        return [agent_tool.spec for agent_tool in self.tools.values()]


def _tool_uses(message: Message) -> list[ToolUse]:
    return [block["toolUse"] for block in message["content"] if "toolUse" in block]


def _is_interrupt_responses(prompt: Prompt) -> bool:
    return (
        isinstance(prompt, list)
        and bool(prompt)
        and any(isinstance(block, dict) and "interruptResponse" in block for block in prompt)
    )
