"""Chaos: the real processes under randomized races, worker SIGKILLs and Redis restarts; what people saw.

Run: ``python -m bench.chaos [--seconds 60] [--workers 3] [--in-flight 6] [--seed 1]``

Runs what the Procfile runs: the web process (gunicorn over ``bot.cli.web:create_wsgi()``) and
``--workers`` ``python -m bot worker`` processes, against a real Redis (AOF, fsync always) and the
sandbox's loopback Slack, with the agent of ``bench/chaos_agent.py`` (gated tools that log every
real execution). For ``--seconds``, sessions start (``--in-flight`` at once) and people race on
their approval messages (``bench/chaos_people.py``) while a worker is SIGKILLed every few seconds
and Redis is killed (SIGKILL or SIGTERM) and restarted now and then. Then the faults stop and the
bench waits for every session to finish.

It prints, from Redis, the execution log and what Slack shows: decisions per approval (1),
executions per approved call (1, or as many as approvals granted) and per denied call (0),
duplicate posts, stale live buttons and out-of-order updates (0), stuck sessions (0), and the
time to recover after the last fault. The ratio line is sessions finished / started (1.00x). It
exits with status 1 if any of these is off.
"""

import argparse
import collections
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import redis

from bench.chaos_people import SHAPES, People, Session, is_final_answer
from bench.serving import free_port, stop, wait_healthy
from bot.render import blocks
from bot.sandbox.people import CHANNEL
from bot.sandbox.workspace import SandboxSlack
from bot.store.approvals.approvals import ApprovalStore
from bot.store.audit import Audit
from bot.store.queues.outbox import Outbox
from loopback_slack.slack_requests import SignedPoster
from state.redis_server import find_server_binary

ROOT: Final = Path(__file__).resolve().parent.parent
TOKEN: Final = "xoxb-chaos"
SECRET: Final = "chaos-signing-secret"
POLICY: Final = """\
rules:
  - name: chaos-change
    match: {tools: [chaos_change]}
    approvers: {users: [USBXAPPR, USBXSECOND, UCHAOS3, UCHAOS4]}
  - name: chaos-quorum
    match: {tools: [chaos_quorum_change]}
    approvers: {users: [USBXAPPR, USBXSECOND, UCHAOS3, UCHAOS4]}
    quorum: 3
"""
_RECOVERY_LIMIT_S: Final = 120.0


class ChaosRedis:
    """A Redis server that can be killed and started again on its port with its data (AOF, fsync always)."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._data_dir = data_dir
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        command = [
            str(find_server_binary()), "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(self._data_dir),
            "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--logfile", "redis.log",
        ]  # fmt: skip
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        probe = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 30
        while True:
            try:
                probe.ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise RuntimeError("Redis did not come back") from None
                time.sleep(0.05)
        # A restarted server is ready once the AOF is loaded (PING answers LOADING errors before).
        probe.close()

    def stop(self, how: signal.Signals = signal.SIGTERM) -> None:
        if self._process is not None:
            self._process.send_signal(how)
            self._process.wait(30)
            self._process = None


@contextmanager
def _processes(environment: dict[str, str], *, workers: int, port: int, logs: Path) -> Iterator[list[Any]]:
    """The web process and the workers; yields the worker list (replace an entry to restart one)."""
    web_log = (logs / "web.log").open("ab")
    command = [
        sys.executable, "-m", "gunicorn", "bot.cli.web:create_wsgi()", "--bind", f"127.0.0.1:{port}",
        "--workers", "2", "--threads", "8", "--log-level", "warning",
    ]  # fmt: skip
    web = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=web_log, stderr=web_log)
    running: list[Any] = [_worker(environment, logs) for _ in range(workers)]
    try:
        wait_healthy(port, [web], failure=f"the web process did not start; see {logs / 'web.log'}")
        yield running
    finally:
        stop([web, *running])
        web_log.close()


def _worker(environment: dict[str, str], logs: Path) -> subprocess.Popen[bytes]:
    log = (logs / "workers.log").open("ab")
    return subprocess.Popen([sys.executable, "-m", "bot", "worker"], cwd=ROOT, env=environment, stdout=log, stderr=log)


class Faults:
    """Kills a worker every 2-5 s and restarts Redis every 8-15 s (down 0.5-2 s), until ``stop``."""

    def __init__(self, *, workers: list[Any], server: ChaosRedis, environment: dict[str, str], logs: Path, seed: int):
        self._workers = workers
        self._server = server
        self._environment = environment
        self._logs = logs
        self._random = random.Random(seed)
        self._stop = threading.Event()
        self.worker_kills = 0
        self.redis_restarts: collections.Counter[str] = collections.Counter()
        self.last_fault_at = time.monotonic()

    def run(self) -> None:
        next_redis = time.monotonic() + self._random.uniform(8.0, 15.0)
        while not self._stop.wait(self._random.uniform(2.0, 5.0)):
            if time.monotonic() >= next_redis:
                how = self._random.choice([signal.SIGKILL, signal.SIGTERM])
                self._server.stop(how)
                self._stop.wait(self._random.uniform(0.5, 2.0))
                self._server.start()
                self.redis_restarts[how.name] += 1
                next_redis = time.monotonic() + self._random.uniform(8.0, 15.0)
            else:
                index = self._random.randrange(len(self._workers))
                self._workers[index].send_signal(signal.SIGKILL)
                self._workers[index].wait(10)
                self._stop.wait(self._random.uniform(0.2, 1.5))
                self._workers[index] = _worker(self._environment, self._logs)
                self.worker_kills += 1
            self.last_fault_at = time.monotonic()

    def stop(self) -> None:
        self._stop.set()


def _report(
    *, sessions: list[Session], slack: SandboxSlack, client: redis.Redis, executions: Path
) -> tuple[list[str], bool]:
    """The figures, and whether every one of them holds."""
    store = ApprovalStore(client)
    requested: list[str] = []
    decisions: collections.Counter[str] = collections.Counter()
    for entry in Audit(client).entries():
        approval_id = str(entry.details.get("approval_id", ""))
        if entry.event == "request":
            requested.append(approval_id)
        elif entry.event == "decision":
            decisions[approval_id] += 1
    approvals = {approval_id: store.find(approval_id) for approval_id in requested}
    per_ticket: dict[str, list[str]] = collections.defaultdict(list)
    for approval in approvals.values():
        if approval is not None and isinstance(approval.request.tool_input, dict):
            outcome = approval.decision.decision if approval.decision is not None else "open"
            per_ticket[str(approval.request.tool_input.get("ticket"))].append(outcome)
    ran = collections.Counter(executions.read_text().split()) if executions.exists() else collections.Counter()
    approved = {ticket: outcomes.count("approve") for ticket, outcomes in per_ticket.items() if "approve" in outcomes}
    denied = [ticket for ticket, outcomes in per_ticket.items() if "approve" not in outcomes]
    over = sum(1 for ticket, granted in approved.items() if ran[ticket] > granted)
    never = sum(1 for ticket in approved if ran[ticket] == 0)
    ran_denied = sum(1 for ticket in denied if ran[ticket] > 0)

    visible = [m for m in slack.messages(CHANNEL) if m.get("user") == slack.identity.bot_user_id]
    shown = collections.Counter(shown for shown in map(blocks.approval_id_shown, visible) if shown is not None)
    answers = collections.Counter(
        str(m.get("thread_ts")) for m in visible if is_final_answer(m, slack.identity.bot_user_id)
    )
    duplicates = sum(count - 1 for count in shown.values()) + sum(count - 1 for count in answers.values())
    stale = 0
    for message in visible:
        live_id = blocks.approval_id_shown(message, live=True)
        approval = approvals.get(live_id) if live_id is not None else None
        if live_id is not None and (
            approval is None or approval.decision is not None or approval.request.message_ts != message["ts"]
        ):
            stale += 1
    out_of_order = 0
    latest: dict[tuple[str, str], int] = {}
    for call in slack.calls("chat.update"):
        payload = (call.args.get("metadata") or {}).get("event_payload") or {}
        if not call.ok or "version" not in payload:
            continue
        key = (str(call.args.get("channel")), str(call.args.get("ts")))
        version = int(payload["version"])
        out_of_order += version < latest.get(key, -1)
        latest[key] = max(version, latest.get(key, -1))
    deleted = sum(1 for call in slack.calls("chat.delete") if call.ok)
    lookups = sum(1 for call in slack.calls() if call.args.get("include_all_metadata") and call.ok)
    stuck = [s for s in sessions if s.finished_at is None and s.error is None]
    driver_errors = [s for s in sessions if s.error is not None]
    exactly_once = sum(1 for approval_id in requested if decisions[approval_id] == 1)
    undecided = sum(1 for approval_id in requested if decisions[approval_id] == 0)
    counts = [ran[ticket] for ticket in approved]
    lines = [
        f"  decisions per approval: exactly 1 for {exactly_once} of {len(requested)} approvals "
        f"(none: {undecided}, more: {len(requested) - exactly_once - undecided})",
        f"  executions per approved call: {min(counts, default=0)}..{max(counts, default=0)} over "
        f"{len(approved)} calls (more than approvals granted: {over}, approved but never run: {never})",
        f"  executions per denied call: {max((ran[t] for t in denied), default=0)} over {len(denied)} calls "
        f"(run anyway: {ran_denied})",
        f"  duplicate posts: {duplicates} (retried posts that first looked for an earlier copy: {lookups}; "
        f"extra copies deleted: {deleted})",
        f"  stale live buttons: {stale}",
        f"  out-of-order updates: {out_of_order} of {len(slack.calls('chat.update'))} updates",
        f"  stuck sessions: {len(stuck)}",
    ]
    lines.extend(_unfinished(stuck, driver_errors, slack))
    # A run whose denies all went astray (a modal never found, say) would prove nothing about them.
    lines.extend([] if denied else ["  no call was denied: the denial races were not exercised"])
    healthy = exactly_once == len(requested) and bool(denied) and not (over or never or ran_denied or duplicates)
    healthy = healthy and not stale
    return lines, healthy and not out_of_order and not stuck and not driver_errors


def _unfinished(stuck: list[Session], driver_errors: list[Session], slack: SandboxSlack) -> list[str]:
    """What the threads of unfinished sessions show, and what stopped the bench's own drivers."""
    lines = []
    for session in stuck[:5]:
        thread = slack.messages(CHANNEL, session.thread_ts) if session.thread_ts else []
        live = [found for m in thread if (found := blocks.approval_id_shown(m, live=True)) is not None]
        said = [str(m.get("text", ""))[:80] for m in thread if m.get("user") == slack.identity.bot_user_id][-2:]
        where = f"{session.ticket} ({session.shape}), thread {session.thread_ts}"
        lines.append(f"    stuck: {where}: live {live}, last {said}")
    if driver_errors:
        lines.append(f"  sessions the bench's driver lost (its own errors, not counted): {len(driver_errors)}")
        lines.extend(f"    {session.ticket}: {session.error}" for session in driver_errors[:5])
    return lines


def main() -> None:
    """Start everything, run the chaos, wait for recovery, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long sessions start and faults happen")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--in-flight", type=int, default=6, help="sessions running at once")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="signoff-chaos-") as scratch:
        work = Path(scratch)
        (work / "redis").mkdir()
        policy, executions = work / "policy.yml", work / "executions.log"
        policy.write_text(POLICY)
        server = ChaosRedis(work / "redis")
        server.start()
        client = redis.Redis.from_url(server.url)
        slack = SandboxSlack(token=TOKEN, redis_client=client).start()
        port = free_port()
        slack.connect(SignedPoster(f"http://127.0.0.1:{port}", SECRET))
        environment = {
            **os.environ,
            "SLACK_BOT_TOKEN": TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": slack.url,
            "REDIS_URL": server.url,
            "AGENT_FACTORY": "bench.chaos_agent:build_agent",
            "APPROVAL_POLICY": str(policy),
            "CHAOS_EXECUTION_LOG": str(executions),
            "JOB_CLAIM_SECONDS": "3",
            "OUTBOX_LEASE_SECONDS": "5",
            "LOG_LEVEL": "ERROR",
            "PYTHONPATH": str(ROOT),
        }
        try:
            with _processes(environment, workers=args.workers, port=port, logs=work) as workers:
                people = People(slack, seed=args.seed)
                faults = Faults(workers=workers, server=server, environment=environment, logs=work, seed=args.seed)
                sessions, threads = _run(people, faults, seconds=args.seconds, in_flight=args.in_flight)
                faults_ended = faults.last_fault_at
                for thread in threads:
                    thread.join()
                outbox = Outbox(client)
                while outbox.pending() and time.monotonic() - faults_ended < _RECOVERY_LIMIT_S:
                    time.sleep(0.1)
                finished = [s.finished_at for s in sessions if s.finished_at is not None]
                recovered_s = max([*finished, time.monotonic() if outbox.pending() else 0.0]) - faults_ended
                lines, healthy = _report(sessions=sessions, slack=slack, client=client, executions=executions)
        finally:
            slack.close()
            client.close()
            server.stop()
    done = len(sessions) - sum(1 for s in sessions if s.finished_at is None)
    print(
        f"chaos bench: {args.seconds:.0f} s of load, {args.workers} workers + gunicorn 2x8 (Procfile), "
        f"Redis AOF fsync always, seed {args.seed}"
    )
    redis_kills = ", ".join(f"{count} {name}" for name, count in sorted(faults.redis_restarts.items())) or "none"
    print(f"  faults: {faults.worker_kills} worker SIGKILLs, Redis restarts: {redis_kills}")
    print(f"  sessions: {len(sessions)} started ({', '.join(sorted(set(SHAPES)))}), {done} finished")
    for line in lines:
        print(line)
    print(f"  time to recover after the last fault: {max(recovered_s, 0.0):.1f} s")
    print(f"ratio sessions finished/started: {done / max(len(sessions), 1):.3f}x")
    sys.exit(0 if healthy else 1)


def _run(
    people: People, faults: Faults, *, seconds: float, in_flight: int
) -> tuple[list[Session], list[threading.Thread]]:
    """Start sessions for ``seconds`` with faults running; return them and their threads (still running)."""
    fault_thread = threading.Thread(target=faults.run, name="faults", daemon=True)
    fault_thread.start()
    sessions: list[Session] = []
    threads: list[threading.Thread] = []
    slots = threading.Semaphore(in_flight)
    shapes = random.Random(0)
    load_ends = time.monotonic() + seconds
    give_up_at = load_ends + _RECOVERY_LIMIT_S

    def drive(session: Session) -> None:
        try:
            people.run(session, until=give_up_at)
        except Exception as error:  # the driver's own failure: reported, never counted as the bot's
            session.error = f"{type(error).__name__}: {error}"
        finally:
            slots.release()

    while time.monotonic() < load_ends:
        if not slots.acquire(timeout=0.2):
            continue
        session = Session(ticket=f"t{len(sessions)}", shape=shapes.choice(SHAPES))
        sessions.append(session)
        thread = threading.Thread(target=drive, args=(session,), name=f"session-{session.ticket}", daemon=True)
        thread.start()
        threads.append(thread)
    faults.stop()
    fault_thread.join()
    return sessions, threads


if __name__ == "__main__":
    main()
