"""Load-path cost of a serialized interrupt state: ours (with and without validation) against Strands 1.62.

Run: ``python -m bench.state_codec [--states N] [--seed S] [--rounds R]``

Builds N varied serialized states in the Strands 1.62 dict format (deterministic from the seed:
interrupts of every id scope, JSON reasons and responses with falsy answers, typed, legacy and
mixed pending tool executions, resume responses in the context), then times on each state:

* ours: ``check_interrupt_state(d)`` + ``_InterruptState.from_dict(d).to_dict()``, which is what
  the Redis store pays on every load;
* ours without validation: ``_InterruptState.from_dict(d).to_dict()``;
* strands: ``strands.interrupt._InterruptState.from_dict(d).to_dict()``.

Fair on a noisy machine: every state is timed once per implementation per round, the
implementations interleaved state by state with a rotating order, over several rounds; each
state's cost is its median over the rounds, less the timer's own overhead (measured the same way
on a no-op). The garbage collector is off while timing.
"""

import argparse
import copy
import gc
import platform
import random
import statistics
import string
import time
import uuid
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

import strands.interrupt as strands_interrupt

from state.interrupt import _AGENT_STREAM_INTERRUPT_ID_PREFIX, _InterruptState
from state.validation import check_interrupt_state

Codec = Callable[[dict[str, Any]], Any]

_TEXTS = ["", "ok", "Approve ✅", "Löschen bestätigen?", "送信してよいですか", "🚀 deploy prod", "rm -rf /tmp/x", "yes"]
_NAMES = ["approval", "confirm", "strands-hitl", "Bestätigung", "承認", "deploy-gate", "budget", "pii-check"]
_TOOLS = ["shell", "delete_file", "send_email", "http_request", "transfer_funds"]
_FALSY_ANSWERS: list[Any] = [False, 0, 0.0, "", [], {}]
_PENDING_MODES = ["absent", "null", "typed", "legacy", "legacy_message_only", "legacy_and_typed", "orphan"]


# --- deterministic states ------------------------------------------------------------------------


class StateFactory:
    """Builds varied serialized interrupt states from one ``random.Random``."""

    def __init__(self, seed: int) -> None:
        """Seed the generator; the same seed always gives the same states."""
        self.rng = random.Random(seed)

    def text(self) -> str:
        rng = self.rng
        if rng.random() < 0.5:
            return rng.choice(_TEXTS)
        alphabet = string.ascii_letters + string.digits + " äöüßéñ漢字🙂"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))

    def scalar(self) -> Any:
        rng = self.rng
        kind = rng.randrange(5)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return rng.randint(-(2**31), 2**31)
        if kind == 3:
            return round(rng.uniform(-1e6, 1e6), rng.randint(0, 6))
        return self.text()

    def json_value(self, depth: int = 2) -> Any:
        rng = self.rng
        kind = rng.randrange(4) if depth > 0 else 0
        if kind == 1:
            return [self.json_value(depth - 1) for _ in range(rng.randint(0, 3))]
        if kind == 2:
            return {self.text(): self.json_value(depth - 1) for _ in range(rng.randint(0, 3))}
        return self.scalar()

    def response(self) -> Any:
        """``None`` (unanswered), a falsy answer, or any JSON value."""
        kind = self.rng.randrange(3)
        if kind == 0:
            return None
        if kind == 1:
            return copy.copy(self.rng.choice(_FALSY_ANSWERS))
        return self.json_value()

    def tool_use_id(self) -> str:
        return "tooluse_" + "".join(self.rng.choices(string.ascii_letters + string.digits, k=self.rng.randint(4, 10)))

    def assistant_message(self) -> dict[str, Any]:
        rng = self.rng
        content: list[dict[str, Any]] = [{"text": self.text()}] if rng.random() < 0.5 else []
        for _ in range(rng.randint(1, 3)):
            tool_input = {rng.choice(["path", "command", "to", "amount", "body"]): self.json_value(1)}
            content.append(
                {"toolUse": {"toolUseId": self.tool_use_id(), "name": rng.choice(_TOOLS), "input": tool_input}}
            )
        return {"role": "assistant", "content": content}

    def completed_results(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        rng = self.rng
        ids = [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]
        done = rng.sample(ids, rng.randint(0, len(ids)))
        return [
            {
                "toolUseId": tool_use_id,
                "status": rng.choice(["success", "error"]),
                "content": [
                    {"text": self.text()} if rng.random() < 0.5 else {"json": self.json_value()}
                    for _ in range(rng.randint(1, 2))
                ],
            }
            for tool_use_id in done
        ]

    def interrupt(self, tool_use_ids: list[str]) -> dict[str, Any]:
        rng = self.rng
        name = rng.choice(_NAMES) if rng.random() < 0.7 else self.text() or "x"
        name_uuid = uuid.uuid5(uuid.NAMESPACE_OID, name)
        scope = rng.choice(["tool_call", "before_tool_call", "before_tools", "agent_stream"])
        if scope == "agent_stream":
            interrupt_id = f"{_AGENT_STREAM_INTERRUPT_ID_PREFIX}{name_uuid}"
        elif scope == "before_tools":
            interrupt_id = f"v1:before_tools:{name_uuid}"
        else:
            interrupt_id = f"v1:{scope}:{rng.choice(tool_use_ids)}:{name_uuid}"
        record: dict[str, Any] = {"id": interrupt_id, "name": name}
        reason, response = self.json_value(), self.response()
        # Hand-written or older records may leave the defaults out.
        if reason is not None or rng.random() < 0.5:
            record["reason"] = reason
        if response is not None or rng.random() < 0.5:
            record["response"] = response
        return record

    def state(self) -> dict[str, Any]:
        """One serialized ``_InterruptState``."""
        rng = self.rng
        message = self.assistant_message()
        ids = [block["toolUse"]["toolUseId"] for block in message["content"] if "toolUse" in block]
        interrupts: dict[str, dict[str, Any]] = {}
        for _ in range(rng.randint(0, 4)):
            record = self.interrupt(ids)
            interrupts.setdefault(record["id"], record)
        context: dict[str, Any] = {}
        data: dict[str, Any] = {"interrupts": interrupts, "context": context, "activated": rng.random() < 0.5}

        records = list(interrupts.values())
        if records and rng.random() < 0.5:
            answered = rng.sample(records, rng.randint(1, len(records)))
            context["responses"] = [
                {"interruptResponse": {"interruptId": record["id"], "response": record.get("response")}}
                for record in answered
            ]
        if rng.random() < 0.125:
            context["trace"] = self.json_value()

        mode = rng.choice(_PENDING_MODES)
        if mode == "null":
            data["pending_tool_execution"] = None
        if mode in ("typed", "legacy_and_typed"):
            data["pending_tool_execution"] = {
                "assistant_message": message,
                "completed_tool_results": self.completed_results(message),
            }
        if mode in ("legacy", "legacy_and_typed"):
            legacy_message = self.assistant_message()
            context["tool_use_message"] = legacy_message
            context["tool_results"] = self.completed_results(legacy_message)
        if mode == "legacy_message_only":
            context["tool_use_message"] = message
        if mode == "orphan":
            context["tool_results"] = self.completed_results(message)
        return data


# --- the codecs under test -----------------------------------------------------------------------


def ours_validated(data: dict[str, Any]) -> Any:
    return _InterruptState.from_dict(check_interrupt_state(data)).to_dict()


def ours_plain(data: dict[str, Any]) -> Any:
    return _InterruptState.from_dict(data).to_dict()


def strands_codec(data: dict[str, Any]) -> Any:
    return strands_interrupt._InterruptState.from_dict(data).to_dict()


def no_op(data: dict[str, Any]) -> Any:
    return data


CODECS: dict[str, Codec] = {
    "ours": ours_validated,
    "ours_plain": ours_plain,
    "strands": strands_codec,
    "timer": no_op,
}


def measure(states: list[dict[str, Any]], rounds: int) -> dict[str, list[float]]:
    """Per codec, each state's median time in ns over ``rounds`` interleaved rounds."""
    names = list(CODECS)
    samples: dict[str, list[list[int]]] = {name: [[] for _ in states] for name in names}
    clock = time.perf_counter_ns
    for round_index in range(rounds):
        gc.collect()
        gc.disable()
        try:
            for index, data in enumerate(states):
                shift = (round_index + index) % len(names)
                for name in names[shift:] + names[:shift]:
                    codec = CODECS[name]
                    start = clock()
                    codec(data)
                    samples[name][index].append(clock() - start)
        finally:
            gc.enable()
    return {name: [statistics.median(per_state) for per_state in samples[name]] for name in names}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--states", type=int, default=10_000, help="number of serialized states (default 10000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the state generator (default 0)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved timing rounds (default 7)")
    args = parser.parse_args(argv)

    factory = StateFactory(args.seed)
    states = [factory.state() for _ in range(args.states)]

    # Same output, and no input refused by validation, before anything is timed (also a warm-up).
    identical = sum(ours_validated(data) == strands_codec(data) for data in states)
    for data in states:
        ours_plain(data)

    medians = measure(states, args.rounds)
    overhead = statistics.median(medians["timer"])

    def cost(name: str) -> tuple[float, float]:
        """(median, mean) µs per state, timer overhead removed."""
        per_state = [max(ns - overhead, 0.0) / 1000 for ns in medians[name]]
        return statistics.median(per_state), statistics.fmean(per_state)

    ours, plain, theirs = cost("ours"), cost("ours_plain"), cost("strands")
    print(
        f"state codec: {len(states)} states (seed {args.seed}), {args.rounds} interleaved rounds, "
        f"Python {platform.python_version()}, strands-agents {version('strands-agents')}"
    )
    print(f"outputs identical to strands: {identical}/{len(states)}; timer overhead {overhead / 1000:.2f} µs removed")
    print(f"{'':52}{'median µs/state':>16}{'mean µs/state':>15}")
    print(f"{'ours: check_interrupt_state + from_dict + to_dict':52}{ours[0]:>16.2f}{ours[1]:>15.2f}")
    print(f"{'ours: from_dict + to_dict (no validation)':52}{plain[0]:>16.2f}{plain[1]:>15.2f}")
    print(f"{'strands: from_dict + to_dict':52}{theirs[0]:>16.2f}{theirs[1]:>15.2f}")
    print(f"ours/strands with validation:    {ours[0] / theirs[0]:.2f}x median, {ours[1] / theirs[1]:.2f}x mean")
    print(f"ours/strands without validation: {plain[0] / theirs[0]:.2f}x median, {plain[1] / theirs[1]:.2f}x mean")


if __name__ == "__main__":
    main()
