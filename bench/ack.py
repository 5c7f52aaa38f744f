"""Click latency: signed Approve clicks against the bot and against a bare Bolt app that only acks.

Run: ``python -m bench.ack [--clicks N] [--clients 1,20] [--workers W] [--rounds R] [--input-kb K] [--traces]``

Both apps are Bolt in ``process_before_response=True`` mode (the fastest either can use),
served by the same gunicorn (W sync workers) on loopback, hit by C concurrent clients with the
same number of correctly signed ``block_actions`` requests. Every click of ours approves a
different pending approval on a real Redis (authorization, the atomic decision write with its
outbox entry, the audit record). A third app, ``bare+rt``, is the bare one plus one Redis round trip of
a script that does nothing: the part of a recorded click no code of ours can remove, so that what is left
above it is ours to answer for. A fourth, ``ours-py``, is ours with its decide script's reply canned (each click
runs all of our Python, and Redis nothing): ``ratio ours-py/bare`` is our code's own cost, and what ours costs
above ours-py is the decision's work in Redis. The runs alternate in short rounds (bare, bare+rt, ours, ours-py,
bare, ...: ``--rounds``) so drift on a noisy machine hits them all; the figure to read is the ratio ours/bare+rt
at p50 and p99, at each client count. With ``--traces`` one more app runs in the rounds: ours again, with traces on
(``OTEL_EXPORTER_OTLP_ENDPOINT`` at a loopback collector that takes every export), and ``ratio traced/ours``
is what recording a click's spans costs (the decision's span, and the read of its approval's trace first).
Then it counts the Redis round trips of a click for real: every
command the bot's processes send during 100 more clicks (Redis MONITOR; the commands a script runs
inside Redis are not round trips).
"""

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import redis

from bench.fixtures import synthetic_request
from bench.round_trips import commands_sent
from bench.serving import free_port, send_json, stop, wait_healthy
from bot.domain.records import ApprovalRequest, PolicySummary
from bot.render import action_ids as ids
from bot.store.approvals.approvals import ApprovalStore
from loopback_slack import slack_requests
from state import RedisServer

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-signing-secret"
APPROVER = "U0APPROVER"
MESSAGE_TS = "1700000000.000200"  # where every approval's message is, as far as the clicks say
_WARMUP = 100
# bare+rt: bare plus one round trip of a script that does nothing; ours-py: ours, its script's reply canned
_APPS = ("bare", "bare+rt", "ours", "ours-py")
_TRACED = "traced"  # --traces: ours, sending spans


class _AuthTestHandler(BaseHTTPRequestHandler):
    """The Web API methods the apps call while serving clicks: ``auth.test`` (once per process) and
    ``conversations.members`` (once a minute: the bot caches who is in the channel)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/conversations.members"):
            answer = {"ok": True, "members": [APPROVER, "U0BOT"], "response_metadata": {"next_cursor": ""}}
        else:
            answer = {"ok": True, "team_id": "T0BENCH", "user_id": "U0BOT", "bot_id": "B0BOT"}
        send_json(self, answer)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


class _CollectorHandler(BaseHTTPRequestHandler):
    """An OTLP/HTTP collector that takes every export and keeps nothing (the exporter needs only a 200)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@contextmanager
def loopback(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port; yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def slack_api() -> Iterator[str]:
    """A loopback Web API answering ``auth.test``; yield its base URL."""
    with loopback(_AuthTestHandler) as url:
        yield f"{url}/api/"


@contextmanager
def gunicorn(
    factory: str, *, workers: int, redis_url: str, api_url: str, extra: Mapping[str, str] | None = None
) -> Iterator[int]:
    """Serve ``bench.ack_apps:<factory>()`` with gunicorn (``extra`` in its environment); yield its port."""
    port = free_port()
    environment = {
        **os.environ,
        "BENCH_SIGNING_SECRET": SECRET,
        "BENCH_SLACK_API_URL": api_url,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "WARNING",
        **(extra or {}),
    }
    command = [
        sys.executable, "-m", "gunicorn", f"bench.ack_apps:{factory}()",
        "--workers", str(workers), "--worker-class", "sync", "--bind", f"127.0.0.1:{port}",
        "--backlog", "2048", "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=environment)
    try:
        wait_healthy(port, [process], failure=f"gunicorn ({factory}) did not start")
        yield port
    finally:
        stop([process], grace_s=10)


def pending_approvals(client: redis.Redis, count: int, *, input_bytes: int = 0) -> list[ApprovalRequest]:
    store = ApprovalStore(client)
    now = datetime.now(UTC)
    policy = PolicySummary(name="default")
    requests = [
        synthetic_request(index, policy=policy, created_at=now, input_bytes=input_bytes) for index in range(count)
    ]
    for request in requests:
        store.open_round(session_id=request.session_id, version=1, requests=[request])
        key, fields = ApprovalStore.message_record(request, ts=MESSAGE_TS, entry_id="bench")
        client.hset(key, mapping=dict(fields))  # posted: a click binds to the approval's message
    return requests


_TEAM = slack_requests.Team(team_id="T0BENCH", team_domain="bench", app_id="A0BENCH")


def click_body(request: ApprovalRequest) -> bytes:
    """A signed-to-be Approve click on ``request``'s message, its button's value as the bot rendered it.

    Built (and encoded) before the load, so that the clients' measured time is the request's alone.
    """
    approval_id = request.approval_id
    payload = slack_requests.block_actions(
        action_id=ids.APPROVE_ACTION,
        block_id=f"signoff_actions:{approval_id}",
        value=ids.button_value(approval_id, request.session_id),
        user_id=APPROVER,
        username="approver",
        channel_id="C0BENCH",
        channel_name="ops",
        message_ts=MESSAGE_TS,
        thread_ts="1700000000.000100",
        team=_TEAM,
        response_url="http://127.0.0.1:9/response",
    )
    return slack_requests.encode_payload(payload)


def _post(port: int, body: bytes) -> tuple[float, int]:
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": str(timestamp),
        "X-Slack-Signature": slack_requests.sign(SECRET, timestamp, body),
    }
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("POST", "/slack/events", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    elapsed = time.perf_counter() - started
    connection.close()
    return elapsed, response.status


def _load(port: int, bodies: list[bytes], clients: int) -> list[float]:
    latencies: list[float] = []
    failures: list[int] = []
    lock = threading.Lock()
    chunks = [bodies[index::clients] for index in range(clients)]

    def run(chunk: list[bytes]) -> None:
        for body in chunk:
            elapsed, status = _post(port, body)
            with lock:
                latencies.append(elapsed)
                if status != 200:
                    failures.append(status)

    threads = [threading.Thread(target=run, args=(chunk,)) for chunk in chunks]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"{len(failures)} clicks failed: statuses {sorted(set(failures))}")
    return latencies


def _recorded_decisions(client: redis.Redis, requests: list[ApprovalRequest]) -> int:
    store = ApprovalStore(client)
    recorded = 0
    for request in requests:
        approval = store.get(request.session_id, request.approval_id)
        recorded += approval is not None and approval.decision is not None
    return recorded


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _round_trips_per_click(client: redis.Redis, port: int, bodies: list[bytes]) -> float:
    """Redis round trips the bot makes per click, counted for real: every command a client sends (MONITOR)."""
    with commands_sent(client) as commands:
        _load(port, bodies, 1)
    return len(commands) / len(bodies)


def _measure(
    clients: int, bodies: dict[str, list[list[bytes]]], ports: dict[str, int], *, rounds: int
) -> dict[str, list[float]]:
    """Alternate the apps (warm-up, then ``rounds`` short rounds each) with ``clients`` clients."""
    results: dict[str, list[float]] = {name: [] for name in ports}
    for name, port in ports.items():
        _load(port, bodies[name].pop(), clients)  # warm-up
    for _round in range(rounds):
        for name, port in ports.items():
            results[name] += _load(port, bodies[name].pop(), clients)
    return results


def main() -> None:
    """Run both, alternating, at each client count; print p50 / p99, the ratios and the round trips per click."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=2000)
    parser.add_argument("--clients", default="1,20", help="client counts, comma-separated")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=8, help="alternations of the apps per client count")
    parser.add_argument(
        "--input-kb", type=int, default=0, help="each request's tool input also carries this many KiB (a file)"
    )
    parser.add_argument("--traces", action="store_true", help="also ours with traces on (the otel extra)")
    args = parser.parse_args()
    apps = (*_APPS, _TRACED) if args.traces else _APPS
    client_counts = [int(count) for count in args.clients.split(",")]
    per_round = args.clicks // args.rounds
    chunks = [_WARMUP, *[per_round] * args.rounds]  # per client count and app: warm-up, the measured rounds
    per_app = sum(chunks) * len(client_counts)
    counted = 100

    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        requests = pending_approvals(client, len(apps) * per_app + counted, input_bytes=args.input_kb * 1024)
        bodies: dict[str, list[list[bytes]]] = {name: [] for name in apps}
        given: dict[str, list[ApprovalRequest]] = {name: [] for name in apps}
        position = 0
        for name in apps:
            for _count in client_counts:
                for size in chunks:
                    given[name] += requests[position : position + size]
                    bodies[name].append([click_body(request) for request in given[name][-size:]])
                    position += size
            bodies[name].reverse()  # popped in order
        count_bodies = [click_body(request) for request in requests[position:]]
        with (
            slack_api() as api_url,
            loopback(_CollectorHandler) as collector_url,
            gunicorn("bare", workers=args.workers, redis_url=server.url, api_url=api_url) as bare_port,
            gunicorn("bare_round_trip", workers=args.workers, redis_url=server.url, api_url=api_url) as rt_port,
            gunicorn("ours", workers=args.workers, redis_url=server.url, api_url=api_url) as ours_port,
            gunicorn("ours_python", workers=args.workers, redis_url=server.url, api_url=api_url) as python_port,
            (
                gunicorn(
                    "ours",
                    workers=args.workers,
                    redis_url=server.url,
                    api_url=api_url,
                    extra={"OTEL_EXPORTER_OTLP_ENDPOINT": collector_url},
                )
                if args.traces
                else nullcontext(0)
            ) as traced_port,
        ):
            ports = {"bare": bare_port, "bare+rt": rt_port, "ours": ours_port, "ours-py": python_port}
            if args.traces:
                ports[_TRACED] = traced_port
            runs = {clients: _measure(clients, bodies, ports, rounds=args.rounds) for clients in client_counts}
            round_trips = _round_trips_per_click(client, ours_port, count_bodies)
        recording = [*given["ours"], *given.get(_TRACED, []), *requests[position:]]
        recorded = _recorded_decisions(client, recording)

    print(
        f"ack bench: {per_round * args.rounds} signed approve clicks per app and client count in {args.rounds} rounds"
        f" alternating, tool input {len(requests[0].model_dump_json(include={'tool_input'}))} bytes,"
        f" gunicorn {args.workers} sync workers,"
        " Bolt process_before_response=True on all (bare, bare+rt: Bolt verifies; ours: the request guard verifies)"
    )
    for clients, results in runs.items():
        print(f" {clients} client(s):")
        for name in apps:
            values = results[name]
            print(
                f"  {name:7} p50 {_percentile(values, 0.5) * 1000:7.2f} ms"
                f"   p99 {_percentile(values, 0.99) * 1000:7.2f} ms   mean {statistics.fmean(values) * 1000:7.2f} ms"
            )
        compared = [("ours", "bare"), ("bare+rt", "bare"), ("ours", "bare+rt"), ("ours-py", "bare")]
        for over, under in [*compared, *([(_TRACED, "ours")] if args.traces else [])]:
            p50 = _percentile(results[over], 0.5) / _percentile(results[under], 0.5)
            p99 = _percentile(results[over], 0.99) / _percentile(results[under], 0.99)
            print(f"ratio {over}/{under} ({clients} clients): p50 {p50:.2f}x, p99 {p99:.2f}x")
    shown = f"{round_trips:.0f}" if round_trips == int(round_trips) else f"{round_trips:.2f}"
    print(f"round trips per click: {shown} (Redis MONITOR over {counted} clicks)")
    ours = (per_app * 2 if args.traces else per_app) + counted
    named = "ours and traced" if args.traces else "ours"
    print(f"decisions recorded by {named}: {recorded} of {ours} clicks (warm-ups included)")


if __name__ == "__main__":
    main()
