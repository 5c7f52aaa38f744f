"""Outbox delivery rate: kept-alive connections and conversations in parallel, against one call at a time.

Run: ``python -m bench.outbox [--entries 600] [--channels 30] [--latency-ms 5] [--concurrency 8] [--rounds 3]``

One real Redis and the loopback Slack Web API (``loopback_slack``, in a process of its own so
that it does not compete with the delivering threads for this one's interpreter lock), which answers
each ``chat.postMessage`` after ``--latency-ms`` (Slack's own answer time is tens of milliseconds).
Each run queues ``--entries`` posts spread over ``--channels`` channels, then delivers them
with the worker's own loop (``Deliverer.deliver_due``) until the outbox is empty:

- serial: a plain ``slack_sdk.WebClient`` (a new connection per call), one entry at a time: the
  floor, as the dispatcher delivered before;
- keep-alive: the kept-alive client, one entry at a time;
- ours: the kept-alive client, ``--concurrency`` conversations at once (``OUTBOX_CONCURRENCY``).

Runs alternate, ``--rounds`` times each; the medians are printed with the ratio. Every run checks
that each channel received its messages in the order they were queued.
"""

import multiprocessing
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from multiprocessing.connection import Connection

import redis
from slack_sdk import WebClient

from bench.cli import parse_options
from bot.domain.workspaces import OneWorkspace
from bot.slack.outbound.delivery import Deliverer
from bot.slack.outbound.web_client import KeepAliveWebClient
from bot.store.queues.outbox import Outbox, OutboxEntry
from bot.store.stores import Stores
from loopback_slack import Answer, JsonDict, LoopbackSlack
from state import RedisServer


class _SlowSlack(LoopbackSlack):
    """The loopback Slack answering every ``chat.postMessage`` ``latency_s`` late (its work done on arrival)."""

    latency_s = 0.0

    def around_method(self, method: str, args: JsonDict, answer: Callable[[], Answer]) -> Answer:
        answered = answer()
        return replace(answered, delay=self.latency_s) if method == "chat.postMessage" else answered


def _serve_slack(commands: Connection) -> None:
    """The loopback Slack in this (child) process, driven by ``commands``: its address, then reset / calls / stop."""
    with _SlowSlack() as slack:
        commands.send((slack.url, slack.token))
        while True:
            command, *args = commands.recv()
            if command == "reset":
                with slack.lock:
                    slack.clear_calls()
                    slack.latency_s = args[0]
                commands.send(None)
            elif command == "calls":
                calls = slack.calls("chat.postMessage")
                commands.send([(call.args["channel"], call.args["text"], call.ok) for call in calls])
            else:
                return


class _RemoteSlack:
    """The parent's handle on the loopback Slack process."""

    def __init__(self, commands: Connection) -> None:
        self._commands = commands
        self.url, self.token = commands.recv()

    def reset(self, *, latency_s: float) -> None:
        self._commands.send(("reset", latency_s))
        self._commands.recv()

    def posts(self) -> list[tuple[str, str, bool]]:
        self._commands.send(("calls",))
        posts: list[tuple[str, str, bool]] = self._commands.recv()
        return posts


@contextmanager
def _slack_process() -> Iterator[_RemoteSlack]:
    parent, child = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_serve_slack, args=(child,), daemon=True)
    process.start()
    try:
        yield _RemoteSlack(parent)
    finally:
        parent.send(("stop",))
        process.join(10)


def _run(
    client: redis.Redis, slack: _RemoteSlack, deliverer: Deliverer, *, entries: int, channels: int, latency_s: float
) -> float:
    """Queue the posts, deliver them all; return the seconds delivery took."""
    client.flushdb()
    slack.reset(latency_s=latency_s)
    outbox = Outbox(client)
    transaction = client.pipeline(transaction=True)
    for index in range(entries):
        channel = f"C{index % channels:04d}"
        outbox.add(transaction, OutboxEntry("post_message", {"channel": channel, "text": f"{channel} {index}"}))
    transaction.execute()
    started = time.perf_counter()
    while outbox.pending():
        deliverer.deliver_due()
    elapsed = time.perf_counter() - started
    _check_order(slack, entries=entries, channels=channels)
    return elapsed


def _check_order(slack: _RemoteSlack, *, entries: int, channels: int) -> None:
    posts = slack.posts()
    assert len(posts) == entries, "every post is made once"
    assert all(ok for _channel, _text, ok in posts), "every post is accepted"
    for channel_index in range(channels):
        channel = f"C{channel_index:04d}"
        texts = [text for posted_in, text, _ok in posts if posted_in == channel]
        expected = [f"{channel} {index}" for index in range(channel_index, entries, channels)]
        assert texts == expected, f"channel {channel} got its messages out of order"


def main() -> None:
    """Deliver the same posts three ways, alternating; print the medians and the ratio."""
    args = parse_options(__doc__, entries=600, channels=30, latency_ms=5.0, concurrency=8, rounds=3)

    with RedisServer() as server, _slack_process() as slack:
        client = redis.Redis.from_url(server.url)
        stores = Stores.on(client)

        def deliverer(web: WebClient, concurrency: int) -> tuple[Deliverer, WebClient]:
            deliverer = Deliverer(
                clients=OneWorkspace(web),
                outbox=stores.outbox,
                approvals=stores.approvals,
                redis=stores.redis,
                concurrency=concurrency,
            )
            return deliverer, web

        def kept_alive() -> KeepAliveWebClient:
            return KeepAliveWebClient(token=slack.token, base_url=slack.url, timeout=10)

        ways: dict[str, Callable[[], tuple[Deliverer, WebClient]]] = {
            "serial": lambda: deliverer(WebClient(token=slack.token, base_url=slack.url, timeout=10), 1),
            "keep-alive": lambda: deliverer(kept_alive(), 1),
            "ours": lambda: deliverer(kept_alive(), args.concurrency),
        }
        connections: dict[str, int] = {}
        timings: dict[str, list[float]] = {name: [] for name in ways}
        for round_index in range(args.rounds + 1):
            names = list(ways) if round_index % 2 == 0 else list(reversed(ways))
            for name in names:
                running, web = ways[name]()
                elapsed = _run(
                    client,
                    slack,
                    running,
                    entries=args.entries,
                    channels=args.channels,
                    latency_s=args.latency_ms / 1000,
                )
                running.close()
                if isinstance(web, KeepAliveWebClient):
                    connections[name] = web.connections_opened
                if round_index:  # the first round warms connections, scripts and threads up
                    timings[name].append(elapsed)

    rate = {name: args.entries / statistics.median(elapsed) for name, elapsed in timings.items()}
    print(
        f"outbox delivery: {args.entries} posts over {args.channels} channels, loopback Slack answering in "
        f"{args.latency_ms:g} ms, one real Redis, {args.rounds} rounds (medians); per-channel order checked every run"
    )
    print(f"  serial, a new connection per call: {rate['serial']:8.0f} entries/s")
    print(f"  keep-alive, one at a time:         {rate['keep-alive']:8.0f} entries/s")
    print(f"  ours, {args.concurrency} conversations at once:    {rate['ours']:8.0f} entries/s")
    print(
        f"  connections opened per run: keep-alive {connections['keep-alive']}, ours {connections['ours']} "
        f"(serial: one per call, {args.entries})"
    )
    print(f"ratio ours/serial entries/s: {rate['ours'] / rate['serial']:.2f}x")
    print(f"ratio keep-alive/serial entries/s: {rate['keep-alive'] / rate['serial']:.2f}x")


if __name__ == "__main__":
    main()
