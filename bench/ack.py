"""Click latency: signed Approve clicks against the bot and against a bare Bolt app that only acks.

Run: ``python -m bench.ack [--clicks N] [--clients C] [--workers W]``

Both apps are Bolt in ``process_before_response=True`` mode (the fastest either can use),
served by the same gunicorn (W sync workers) on loopback, hit by C concurrent clients with the
same number of correctly signed ``block_actions`` requests. Every click of ours approves a
different pending approval on a real Redis (authorization, the atomic decision write with its
outbox entry, the audit record). The runs alternate (bare, ours, bare, ours) so drift on a
noisy machine hits both; the figure to read is the ratio ours/bare at p50 and p99.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import redis

from bench.fixtures import synthetic_request
from bot.domain.records import PolicySummary
from bot.render import action_ids as ids
from bot.store.approvals import ApprovalStore
from state import RedisServer

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-signing-secret"
APPROVER = "U0APPROVER"
MESSAGE_TS = "1700000000.000200"  # where every approval's message is, as far as the clicks say


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _AuthTestHandler(BaseHTTPRequestHandler):
    """The Web API methods the apps call while serving clicks: ``auth.test`` (once per process) and
    ``conversations.members`` (once a minute: the bot caches who is in the channel)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.endswith("/conversations.members"):
            answer = {"ok": True, "members": [APPROVER, "U0BOT"], "response_metadata": {"next_cursor": ""}}
        else:
            answer = {"ok": True, "team_id": "T0BENCH", "user_id": "U0BOT", "bot_id": "B0BOT"}
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@contextmanager
def slack_api() -> Iterator[str]:
    """A loopback Web API answering ``auth.test``; yield its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AuthTestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/api/"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def gunicorn(factory: str, *, workers: int, redis_url: str, api_url: str) -> Iterator[int]:
    """Serve ``bench.ack_apps:<factory>()`` with gunicorn; yield its port."""
    port = _free_port()
    environment = {
        **os.environ,
        "BENCH_SIGNING_SECRET": SECRET,
        "BENCH_SLACK_API_URL": api_url,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "WARNING",
    }
    command = [
        sys.executable, "-m", "gunicorn", f"bench.ack_apps:{factory}()",
        "--workers", str(workers), "--worker-class", "sync", "--bind", f"127.0.0.1:{port}",
        "--backlog", "2048", "--log-level", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=ROOT, env=environment)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                connection.request("GET", "/healthz")
                if connection.getresponse().status == 200:
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"gunicorn ({factory}) did not start") from None
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def _pending_approvals(client: redis.Redis, count: int) -> list[str]:
    store = ApprovalStore(client)
    now = datetime.now(UTC)
    requests = [
        synthetic_request(index, policy=PolicySummary(name="default"), created_at=now) for index in range(count)
    ]
    for request in requests:
        store.open_round(session_id=request.session_id, version=1, requests=[request])
        key, fields = ApprovalStore.message_record(request, ts=MESSAGE_TS, entry_id="bench")
        client.hset(key, mapping=dict(fields))  # posted: a click binds to the approval's message
    return [request.approval_id for request in requests]


def _click_body(approval_id: str) -> bytes:
    payload = {
        "type": "block_actions",
        "team": {"id": "T0BENCH", "domain": "bench"},
        "user": {"id": APPROVER, "username": "approver", "team_id": "T0BENCH"},
        "api_app_id": "A0BENCH",
        "token": "legacy",
        "container": {"type": "message", "message_ts": MESSAGE_TS, "channel_id": "C0BENCH"},
        "trigger_id": "1.2.3",
        "channel": {"id": "C0BENCH", "name": "ops"},
        "message": {"ts": MESSAGE_TS, "thread_ts": "1700000000.000100", "text": "", "blocks": []},
        "response_url": "http://127.0.0.1:9/response",
        "actions": [
            {
                "action_id": ids.APPROVE_ACTION,
                "block_id": f"signoff_actions:{approval_id}",
                "value": approval_id,
                "type": "button",
                "action_ts": "1700000000.000300",
            }
        ],
    }
    return f"payload={quote(json.dumps(payload))}".encode()


def _post(port: int, body: bytes) -> tuple[float, int]:
    timestamp = str(int(time.time()))
    signature = "v0=" + hmac.new(SECRET.encode(), f"v0:{timestamp}:".encode() + body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
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


def _recorded_decisions(client: redis.Redis, approval_ids: list[str]) -> int:
    store = ApprovalStore(client)
    recorded = 0
    for approval_id in approval_ids:
        session_id = store.session_of(approval_id)
        approval = store.get(session_id, approval_id) if session_id else None
        recorded += approval is not None and approval.decision is not None
    return recorded


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    """Run both, alternating, and print p50 / p99 and the ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    half = args.clicks // 2
    warmup = 100

    with RedisServer() as server:
        client = redis.Redis.from_url(server.url)
        approval_ids = _pending_approvals(client, 2 * half + warmup)
        ours_bodies = [_click_body(approval_id) for approval_id in approval_ids]
        bare_bodies = [_click_body(approval_id) for approval_id in approval_ids]
        results: dict[str, list[float]] = {"bare": [], "ours": []}
        with (
            slack_api() as api_url,
            gunicorn("bare", workers=args.workers, redis_url=server.url, api_url=api_url) as bare_port,
            gunicorn("ours", workers=args.workers, redis_url=server.url, api_url=api_url) as ours_port,
        ):
            _load(bare_port, bare_bodies[:warmup], args.clients)
            _load(ours_port, ours_bodies[:warmup], args.clients)
            for round_index in range(2):
                window = slice(warmup + round_index * half, warmup + (round_index + 1) * half)
                results["bare"] += _load(bare_port, bare_bodies[window], args.clients)
                results["ours"] += _load(ours_port, ours_bodies[window], args.clients)
        recorded = _recorded_decisions(client, approval_ids)

    print(
        f"ack bench: {2 * half} signed approve clicks per app, {args.clients} clients, "
        f"gunicorn {args.workers} sync workers, Bolt process_before_response=True on both"
    )
    for name in ("bare", "ours"):
        values = results[name]
        print(
            f"  {name:5} p50 {_percentile(values, 0.5) * 1000:7.2f} ms   p99 {_percentile(values, 0.99) * 1000:7.2f} ms"
            f"   mean {statistics.fmean(values) * 1000:7.2f} ms"
        )
    p50 = _percentile(results["ours"], 0.5) / _percentile(results["bare"], 0.5)
    p99 = _percentile(results["ours"], 0.99) / _percentile(results["bare"], 0.99)
    print(f"  ratio ours/bare: p50 {p50:.2f}x, p99 {p99:.2f}x")
    print(f"  decisions recorded by ours: {recorded} of {len(approval_ids)} (warm-up included)")


if __name__ == "__main__":
    main()
