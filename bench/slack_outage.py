"""Slack outage: how soon the outbox catches up once Slack is back, and how hard it knocks while Slack says wait.

Run: ``python -m bench.slack_outage [--threads 40] [--channels 10] [--errors-s 5] [--limited-s 10] [--refused-s 60]``

One real Redis and the loopback Slack Web API (``loopback_slack``, in this process), delivered by the worker's
own loop (``Deliverer.deliver_due`` with the bot's client and ``OUTBOX_CONCURRENCY`` 8). The backlog: one approval
post in each of ``--threads`` threads of one busy channel, one in a quiet channel, and one in each of ``--channels``
other channels. Slack then answers 503 for ``--errors-s``, 429 with ``Retry-After: 5`` for ``--limited-s``, and
refuses every connection for ``--refused-s``, then recovers. Printed:

- recovery: from Slack's recovery to the first post it takes, and catch-up: to the last one (the backlog delivered),
  against the floor: the same backlog delivered with Slack healthy, measured first;
- while Slack answers 429: the most calls about the busy channel (posts, and looks for copies first) in one second,
  against the most the quiet channel (one thread) got in one second through the whole outage: the busy channel's
  threads must wait as one, not each knock on their own.

Every run checks that each post was made exactly once.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import redis
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler

from bench.cli import parse_options
from bot.domain.workspaces import OneWorkspace
from bot.slack.outbound.delivery import Deliverer
from bot.slack.outbound.metered_client import MeteredWebClient
from bot.store.queues.outbox import BACKOFF_CAP_S, Outbox, OutboxEntry
from bot.store.stores import Stores
from loopback_slack import Answer, JsonDict, LoopbackSlack
from state import RedisServer

BUSY, QUIET = "C0BUSY", "C0QUIET"
RETRY_AFTER_S = 5
CONCURRENCY = 8


class _OutageSlack(LoopbackSlack):
    """The loopback Slack answering every call with ``failing`` (an HTTP status, a 429 with Retry-After) while set."""

    failing: int | None = None

    def around_method(self, method: str, args: JsonDict, answer: Callable[[], Answer]) -> Answer:
        if self.failing is None:
            return answer()
        headers = {"Retry-After": str(RETRY_AFTER_S)} if self.failing == 429 else {}
        error = "ratelimited" if self.failing == 429 else "service_unavailable"
        return Answer(self.failing, {"ok": False, "error": error}, headers)


def _queue_backlog(outbox: Outbox, *, threads: int, channels: int) -> list[str]:
    """Queue the posts; return their texts."""
    places: list[tuple[str, str | None]] = [(BUSY, f"{1700000000 + index}.000100") for index in range(threads)]
    places += [(QUIET, "1700000000.000100")]
    places += [(f"C0OTHER{index:03d}", None) for index in range(channels)]
    texts = []
    for index, (channel, thread_ts) in enumerate(places):
        text = f"post {index}"
        payload = {"channel": channel, "text": text, **({"thread_ts": thread_ts} if thread_ts else {})}
        outbox.send_later(OutboxEntry("post_message", payload, team_id="T0TEST"))
        texts.append(text)
    return texts


@contextmanager
def _dispatching(deliverer: Deliverer, outbox: Outbox) -> Iterator[None]:
    """The worker's outbox loop, in a thread, for the block."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            if not deliverer.deliver_due():
                stop.wait(min(deliverer.idle_wait_s(0.5), 0.5))

    thread = threading.Thread(target=loop, name="outbox", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(30)
        deliverer.close()


def _deliverer(client: redis.Redis, slack: LoopbackSlack) -> tuple[Deliverer, Outbox]:
    web = MeteredWebClient(token=slack.token, base_url=slack.url, retry_handlers=[ConnectionErrorRetryHandler()])
    stores = Stores.on(client)
    deliverer = Deliverer(
        clients=OneWorkspace(web),
        outbox=stores.outbox,
        approvals=stores.approvals,
        redis=client,
        concurrency=CONCURRENCY,
    )
    return deliverer, stores.outbox


def _wait_delivered(slack: LoopbackSlack, texts: list[str], *, limit_s: float) -> float:
    """Block until every text was posted (or ``limit_s``); return when the last one was, monotonic."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        posted = [call for call in slack.calls("chat.postMessage") if call.ok]
        if len(posted) >= len(texts):
            return max(call.at for call in posted)
        time.sleep(0.05)
    raise AssertionError(f"only {len(posted)} of {len(texts)} posts delivered in {limit_s:.0f} s")


def _check_once(slack: LoopbackSlack, texts: list[str]) -> None:
    posted = sorted(str(call.args["text"]) for call in slack.calls("chat.postMessage") if call.ok)
    assert posted == sorted(texts), "every post is made exactly once"


def _peak_per_second(slack: LoopbackSlack, channel: str, *, since: float, until: float) -> int:
    """The most calls about ``channel`` (a post, or a look for copies first) that arrived within one second."""
    times = sorted(
        call.at for call in slack.calls() if call.args.get("channel") == channel and since <= call.at < until
    )
    return max((sum(1 for other in times[index:] if other < at + 1.0) for index, at in enumerate(times)), default=0)


def main() -> None:
    """Deliver the backlog with Slack healthy (the floor), then through the outage; print the ratios."""
    for name in ("bot", "slack_sdk"):  # every refused attempt is logged: thousands of lines
        logging.getLogger(name).setLevel(logging.CRITICAL)
    args = parse_options(__doc__, threads=40, channels=10, errors_s=5.0, limited_s=10.0, refused_s=60.0)
    with RedisServer() as server, _OutageSlack() as slack:
        client = redis.Redis.from_url(server.url)

        deliverer, outbox = _deliverer(client, slack)
        texts = _queue_backlog(outbox, threads=args.threads, channels=args.channels)
        started = time.monotonic()
        with _dispatching(deliverer, outbox):
            floor_s = _wait_delivered(slack, texts, limit_s=60) - started
        _check_once(slack, texts)

        client.flushdb()
        slack.clear_calls()
        deliverer, outbox = _deliverer(client, slack)
        texts = _queue_backlog(outbox, threads=args.threads, channels=args.channels)
        with _dispatching(deliverer, outbox):
            slack.failing = 503
            time.sleep(args.errors_s)
            slack.failing = 429
            limited_from = time.monotonic()
            time.sleep(args.limited_s)
            limited_until = time.monotonic()
            slack.failing = None
            with slack.refusing():
                time.sleep(args.refused_s)
            recovered = time.monotonic()
            last = _wait_delivered(slack, texts, limit_s=BACKOFF_CAP_S * 4)
        _check_once(slack, texts)
        first = min(call.at for call in slack.calls("chat.postMessage") if call.ok)
        busy = _peak_per_second(slack, BUSY, since=limited_from, until=limited_until)
        quiet = _peak_per_second(slack, QUIET, since=0.0, until=last + 1)

    backlog = len(texts)
    catch_up_s = last - recovered
    print(
        f"slack outage: {backlog} posts queued ({args.threads} threads of one channel, one quiet thread, "
        f"{args.channels} other channels); Slack answers 503 for {args.errors_s:g} s, 429 (Retry-After "
        f"{RETRY_AFTER_S}) for {args.limited_s:g} s, refuses connections for {args.refused_s:g} s, then recovers"
    )
    print(f"  floor: the same backlog with Slack healthy:    {floor_s:7.2f} s")
    print(f"  recovery: Slack back -> first post taken:       {first - recovered:7.2f} s")
    print(f"  catch-up: Slack back -> last post taken:        {catch_up_s:7.2f} s (bound: {BACKOFF_CAP_S:g} s + floor)")
    print(f"  most calls in 1 s: busy channel while Slack answers 429 {busy}, quiet channel all along {quiet}")
    print(f"ratio catch-up/healthy delivery: {catch_up_s / floor_s:.2f}x")
    print(f"ratio busy channel under 429/quiet channel peak calls per second: {busy / max(quiet, 1):.2f}x")


if __name__ == "__main__":
    main()
