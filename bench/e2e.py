"""End to end: sessions per second and click -> reply latency of the whole flow, against a serial floor.

Run: ``python -m bench.e2e [--sessions N] [--people U] [--web-workers W] [--workers P] [--concurrency C]``

Ours, in the Procfile layout on loopback: gunicorn serving ``bot.cli.web:create_wsgi()`` (W workers,
8 threads each), P ``python -m bot worker`` processes (``WORKER_CONCURRENCY=C``), one real Redis, and a
loopback Slack Web API. U people work at once, each running sessions one after another: mention the bot
("restart checkout", a signed event over HTTP) -> the approval message is posted in the thread -> click
Approve (a signed ``block_actions`` over HTTP) -> the worker resumes the demonstration agent, the restart
runs and the agent's reply is posted. Measured: sessions completed per second, click -> reply latency.

Floor, in the same run: the Redis commands and Slack calls one session caused (captured with MONITOR and by
the loopback Slack while one session ran alone), made again directly and serially from one thread: one
round trip per command, a MULTI..EXEC block or a burst of pipelined commands counted as one, the Slack
calls over HTTP with the client the bot delivers with (one kept-alive connection). It is the bare cost of
a session's I/O, without HTTP in, Bolt, the agent or any waiting; ``ratio ours/floor sessions/s`` >= 1.0
means the whole system beats doing that work in one thread.

People click ``--reaction-ms`` (20) after the approval appears. A click that comes before the bot
recorded where it posted the message is matched to it by its thread, as Slack names it in the click; a
click refused anyway is clicked again (counted and printed). The CPU each process spent per session is
printed too.

Then a model that takes ``--model-delay`` (0.2 s) per call, with ``--slow-people`` (50) people at once, each
clicking ``--slow-reaction-ms`` (500) after the approval appears: click -> reply p50 against the model's own
time on that path (one call), as a ratio.
"""

import itertools
import json
import os
import queue
import re
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import redis

from bench.cli import parse_options
from bench.serving import free_port, send_json, stop, wait_healthy
from bot.render import action_ids as ids
from bot.render.texts import answers
from bot.slack.outbound.web_client import KeepAliveWebClient
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from state import RedisServer

ROOT = Path(__file__).resolve().parent.parent
SECRET = "bench-e2e-signing-secret"
TOKEN = "xoxb-bench-e2e"
TEAM = "T0BENCH"
CHANNEL = "C0BENCH"
REQUESTER = "U0REQUESTER"
APPROVER = "U0APPROVER"
BOT_USER = "U0BOT"
REPLY_TIMEOUT_S = 20.0
# Two commands of one connection closer together than this were sent in one write (a pipeline).
_PIPELINED_WITHIN_S = 0.00004


# ---------------------------------------------------------------------------------------------- loopback Slack


@dataclass
class _Thread:
    """What the people of one session wait for: the bot's posts in their thread."""

    posts: "queue.SimpleQueue[tuple[float, dict[str, Any]]]" = field(default_factory=queue.SimpleQueue)


class BenchSlack:
    """The Web API methods the bot calls, answered from memory; posts are handed to whoever waits on the thread.

    Leaner than ``loopback_slack.LoopbackSlack`` (no workspace state, no copies of each call): the floor and
    the bot must not pay for a stand-in's bookkeeping.

    While ``recording``, every call (method and arguments) is kept, for the floor to make again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._threads: dict[str, _Thread] = {}
        self._ts = itertools.count(1)
        self.recording: list[tuple[float, str, dict[str, Any]]] | None = None
        self.calls = 0
        handler = type("Handler", (_SlackHandler,), {"slack": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._serving = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (``SLACK_API_URL``)."""
        return f"http://127.0.0.1:{self._server.server_port}/api/"

    def __enter__(self) -> "BenchSlack":
        self._serving.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def thread(self, thread_ts: str) -> _Thread:
        """The waiting room of one thread (created on first use)."""
        with self._lock:
            return self._threads.setdefault(thread_ts, _Thread())

    def forget(self, thread_ts: str) -> None:
        """The session is over: its posts are no longer awaited."""
        with self._lock:
            self._threads.pop(thread_ts, None)

    def answer(self, method: str, args: dict[str, Any]) -> tuple[dict[str, Any], Callable[[], None]]:
        """The Web API answer to one call, and what to do once it is sent (show a post to the people)."""
        with self._lock:
            self.calls += 1
            if self.recording is not None:
                self.recording.append((time.perf_counter(), method, args))
        answer = self._answer(method, args)
        if method not in ("chat.postMessage", "chat.postEphemeral"):
            return answer, lambda: None
        with self._lock:
            waiting = self._threads.get(str(args.get("thread_ts") or ""))
        if waiting is None:
            return answer, lambda: None
        message = {**args, "ts": answer["ts"]}
        # People see a post once Slack has answered the bot: the bot knows where it is by then.
        return answer, lambda: waiting.posts.put((time.perf_counter(), message))

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {"ok": True, "team_id": TEAM, "team": "bench", "user_id": BOT_USER, "bot_id": "B0BOT"}
        if method == "conversations.members":
            return {"ok": True, "members": [REQUESTER, APPROVER, BOT_USER], "response_metadata": {"next_cursor": ""}}
        if method == "users.info":
            return {"ok": True, "user": {"id": args.get("user"), "name": "someone", "tz": "UTC", "is_bot": False}}
        if method in ("chat.postMessage", "chat.postEphemeral"):
            ts = f"{1800000000 + next(self._ts)}.000100"
            message = {**args, "ts": ts, "user": BOT_USER, "bot_id": "B0BOT"}
            return {"ok": True, "channel": args.get("channel", CHANNEL), "ts": ts, "message": message}
        if method == "chat.update":
            return {"ok": True, "channel": args.get("channel"), "ts": args.get("ts"), "text": args.get("text", "")}
        if method == "chat.getPermalink":
            return {"ok": True, "permalink": f"https://bench.slack.com/archives/{args.get('channel')}/p1"}
        if method == "conversations.open":
            return {"ok": True, "channel": {"id": f"D{args.get('users', 'X')}"}}
        if method == "usergroups.users.list":
            return {"ok": True, "users": []}
        if method in ("views.publish", "views.open", "views.update"):
            return {"ok": True, "view": {"id": "V0BENCH", **(args.get("view") or {})}}
        return {"ok": True}


class _SlackHandler(BaseHTTPRequestHandler):
    slack: BenchSlack
    protocol_version = "HTTP/1.1"  # the bot keeps its connections to Slack alive
    disable_nagle_algorithm = True  # else a kept-alive answer's body waits for the client's delayed ACK (~40 ms)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "json" in (self.headers.get("Content-Type") or ""):
            args = json.loads(body or b"{}")
        else:
            args = {key: values[-1] for key, values in parse_qs(body.decode()).items()}
        for name in ("blocks", "view", "attachments"):
            if isinstance(args.get(name), str):
                args[name] = json.loads(args[name])
        answer, then = self.slack.answer(self.path.rsplit("/", 1)[-1], args)
        send_json(self, answer)
        then()

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


# ---------------------------------------------------------------------------------------------- the processes


def _environment(redis_url: str, slack_url: str, *, concurrency: int, model_delay_s: float) -> dict[str, str]:
    return {
        **os.environ,
        "SLACK_BOT_TOKEN": TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack_url,
        "REDIS_URL": redis_url,
        "AGENT_FACTORY": "bench.e2e_agent:operations_agent",
        "BENCH_MODEL_DELAY_S": str(model_delay_s),
        "WORKER_CONCURRENCY": str(concurrency),
        "LOG_LEVEL": "WARNING",
    }


@dataclass(frozen=True)
class Bot:
    """The bot's running processes."""

    port: int
    web: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]

    def cpu_s(self) -> tuple[float, float]:
        """CPU seconds used so far by the web processes (gunicorn and its workers) and by the worker processes."""
        return _cpu_s([self.web.pid, *_children(self.web.pid)]), _cpu_s([worker.pid for worker in self.workers])


def _cpu_s(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    children = []
    for stat_path in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_path.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            children.append(int(stat_path.parent.name))
    return children


def _redis_cpu_s(client: redis.Redis) -> float:
    info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


@contextmanager
def procfile(
    redis_url: str, slack_url: str, *, web_workers: int, workers: int, concurrency: int, model_delay_s: float
) -> Iterator[Bot]:
    """The Procfile's web (gunicorn, as the Procfile runs it) and worker processes, started and ready."""
    port = free_port()
    environment = _environment(redis_url, slack_url, concurrency=concurrency, model_delay_s=model_delay_s)
    web = [
        sys.executable, "-m", "gunicorn", "bot.cli.web:create_wsgi()", "--bind", f"127.0.0.1:{port}",
        "--workers", str(web_workers), "--threads", "8", "--backlog", "2048", "--log-level", "warning",
    ]  # fmt: skip
    worker = [sys.executable, "-m", "bot", "worker"]
    bot = Bot(
        port,
        subprocess.Popen(web, cwd=ROOT, env=environment),
        [subprocess.Popen(worker, cwd=ROOT, env=environment) for _ in range(workers)],
    )
    processes = [bot.web, *bot.workers]
    try:
        wait_healthy(port, processes, failure="the bot's processes did not start")
        yield bot
    finally:
        stop(processes)


# ---------------------------------------------------------------------------------------------- Slack's requests


_TEAM = slack_requests.Team(team_id=TEAM, team_domain="bench", app_id="A0BENCH", bot_user_id=BOT_USER)


def _mention(bot: SignedPoster, index: int, thread_ts: str) -> int:
    """The requester asks the bot in the channel, starting the thread ``thread_ts``; the bot's HTTP status."""
    text = f"<@{BOT_USER}> restart checkout"
    event = slack_requests.app_mention(
        user=REQUESTER, channel=CHANNEL, text=text, ts=thread_ts, team=_TEAM, event_id=f"Ev{index:010d}"
    )
    return bot.post_event(event).status


def _approve(bot: SignedPoster, message: dict[str, Any]) -> int:
    """The approver clicks Approve on the bot's ``message``; the bot's HTTP status."""
    action = _approve_button(message)
    payload = slack_requests.block_actions(
        action_id=action["action_id"],
        block_id=action["block_id"],
        value=action["value"],
        user_id=APPROVER,
        username="approver",
        channel_id=CHANNEL,
        channel_name="ops",
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts") or None,
        blocks=message.get("blocks", []),
        message_text=message.get("text", ""),
        team=_TEAM,
        response_url="http://127.0.0.1:9/response",
    )
    return bot.post_action(payload).status


def _approve_button(message: dict[str, Any]) -> dict[str, Any]:
    """The Approve button of an approval message, as Slack would send it back (empty if it has none)."""
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if element.get("action_id") == ids.APPROVE_ACTION:
                return {
                    "action_id": element["action_id"],
                    "block_id": block.get("block_id"),
                    "value": element.get("value"),
                }
    return {}


# ---------------------------------------------------------------------------------------------- one person


@dataclass
class _Outcome:
    """What the people saw (lists: appended to from many threads)."""

    click_to_reply_s: list[float] = field(default_factory=list)
    finished: list[tuple[str, float, float]] = field(default_factory=list)
    """(thread ts, when its reply came (perf_counter), click -> reply s) of each session that ended."""
    clicked_again: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def sessions(self) -> int:
        """Sessions that ended with the agent's reply."""
        return len(self.click_to_reply_s)


_session_numbers = itertools.count(1)


def _one_session(bot: SignedPoster, slack: BenchSlack, outcome: _Outcome, *, reaction_s: float) -> None:
    """Mention -> approval posted -> Approve -> the agent's reply posted.

    The person clicks ``reaction_s`` after the approval appeared. A click refused as out of place (none is
    expected: one before the bot recorded where it posted is matched by its thread) is clicked again, and the
    latency still counts from the first click.
    """
    index = next(_session_numbers)
    thread_ts = f"{1700000000 + index}.000100"
    posts = slack.thread(thread_ts).posts
    refused = answers.wrong_place_refused()
    try:
        if (status := _mention(bot, index, thread_ts)) != 200:
            raise RuntimeError(f"mention answered {status}")
        posted_at, approval = _next_post(posts, lambda text, blocks: blocks, waiting_for="the approval")
        time.sleep(max(0.0, posted_at + reaction_s - time.perf_counter()))
        clicked = time.perf_counter()
        for _attempt in range(5):
            if (status := _approve(bot, approval)) != 200:
                raise RuntimeError(f"click answered {status}")
            replied_at, reply = _next_post(
                posts, lambda text, _blocks: "restarted" in text or text == refused, waiting_for="the reply"
            )
            if reply.get("text") != refused:
                break
            outcome.clicked_again.append(thread_ts)
            time.sleep(reaction_s)
        else:
            raise RuntimeError("every click was refused")
        outcome.click_to_reply_s.append(replied_at - clicked)
        outcome.finished.append((thread_ts, replied_at, replied_at - clicked))
    except Exception as error:
        outcome.failures.append(f"thread {thread_ts}: {type(error).__name__}: {error}")
    finally:
        slack.forget(thread_ts)


def _next_post(
    posts: "queue.SimpleQueue[tuple[float, dict[str, Any]]]", wanted: Any, *, waiting_for: str
) -> tuple[float, dict[str, Any]]:
    """The first post in the thread for which ``wanted(text, has_approve_button)``, with when it was posted."""
    deadline = time.monotonic() + REPLY_TIMEOUT_S
    other: list[str] = []
    while True:
        try:
            at, message = posts.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError(f"{waiting_for} was not posted in time (other posts: {other})") from None
        text = str(message.get("text", ""))
        if wanted(text, bool(_approve_button(message))):
            return at, message
        other.append(text[:200])


def run_people(
    port: int, slack: BenchSlack, *, people: int, sessions: int, reaction_s: float
) -> tuple[_Outcome, float]:
    """``people`` at once, ``sessions`` in all; return what happened and the wall time it took."""
    outcome = _Outcome()
    left = itertools.count(sessions, -1)
    lock = threading.Lock()

    bot = SignedPoster(f"http://127.0.0.1:{port}", SECRET, timeout=30)  # one kept-alive connection per person

    def person() -> None:
        while True:
            with lock:
                if next(left) <= 0:
                    return
            _one_session(bot, slack, outcome, reaction_s=reaction_s)

    threads = [threading.Thread(target=person) for _ in range(people)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    bot.close()
    return outcome, elapsed


# ---------------------------------------------------------------------------------------------- the floor


@dataclass(frozen=True)
class _RoundTrip:
    at: float
    commands: tuple[tuple[bytes, ...], ...]


_MONITOR_LINE = re.compile(rb"^\+?(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$")
_ESCAPES = {ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t", ord("a"): b"\a", ord("b"): b"\b"}
_SETUP = {b"CLIENT", b"HELLO", b"AUTH", b"SELECT", b"MONITOR"}


def _monitor_args(text: bytes) -> tuple[bytes, ...]:
    """The arguments of one MONITOR line (``"SET" "k" "v\\x00"``), unescaped."""
    args: list[bytes] = []
    index = 0
    while index < len(text):
        if text[index] != ord('"'):
            index += 1
            continue
        index += 1
        value = bytearray()
        while text[index] != ord('"'):
            if text[index] == ord("\\"):
                escaped = text[index + 1]
                if escaped == ord("x"):
                    value.append(int(text[index + 2 : index + 4], 16))
                    index += 4
                    continue
                value += _ESCAPES.get(escaped, bytes([escaped]))
                index += 2
                continue
            value.append(text[index])
            index += 1
        args.append(bytes(value))
        index += 1
    return tuple(args)


class CommandCapture:
    """MONITOR on a raw connection: every command the bot's processes send, with its time and connection."""

    def __init__(self, host: str, port: int) -> None:
        self._socket = socket.create_connection((host, port))
        self._socket.sendall(b"MONITOR\r\n")
        self._lines = self._socket.makefile("rb")
        self._lines.readline()  # +OK
        self._seen: list[tuple[float, str, tuple[bytes, ...]]] = []
        self._lock = threading.Lock()
        self.on = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for raw in self._lines:
                self._line(raw)
        except (OSError, ValueError):
            return  # closed

    def _line(self, raw: bytes) -> None:
        match = _MONITOR_LINE.match(raw.rstrip(b"\r\n"))
        if match is None or not self.on:
            return
        source = match[2].decode()
        if source == "lua":
            return  # run inside a script: part of that script's round trip
        with self._lock:
            self._seen.append((float(match[1]), source, _monitor_args(match[3])))

    def take(self) -> list[tuple[float, str, tuple[bytes, ...]]]:
        """What was seen while ``on``, and forget it."""
        with self._lock:
            seen, self._seen = self._seen, []
        return seen

    def close(self) -> None:
        self._socket.close()


def round_trips(seen: list[tuple[float, str, tuple[bytes, ...]]]) -> list[_RoundTrip]:
    """Group captured commands into round trips: per connection, MULTI..EXEC or a burst of pipelined commands."""
    trips: list[_RoundTrip] = []
    by_connection: dict[str, list[tuple[float, tuple[bytes, ...]]]] = {}
    for at, source, args in seen:
        if args and args[0].upper() not in _SETUP:
            by_connection.setdefault(source, []).append((at, args))
    for commands in by_connection.values():
        current: list[tuple[bytes, ...]] = []
        started = last = 0.0
        in_transaction = False
        for at, args in commands:
            name = args[0].upper()
            joins = in_transaction or (current and at - last <= _PIPELINED_WITHIN_S)
            if current and not joins:
                trips.append(_RoundTrip(started, tuple(current)))
                current = []
            if not current:
                started = at
            current.append(args)
            last = at
            if name == b"MULTI":
                in_transaction = True
            elif name in (b"EXEC", b"DISCARD"):
                in_transaction = False
        if current:
            trips.append(_RoundTrip(started, tuple(current)))
    return sorted(trips, key=lambda trip: trip.at)


def _without_blocking(args: tuple[bytes, ...]) -> tuple[bytes, ...]:
    """The command as one that answers at once (a blocking read waits for work; the floor does not)."""
    name = args[0].upper()
    if name in (b"BLPOP", b"BRPOP"):
        return (name[1:], args[1])
    if name in (b"XREAD", b"XREADGROUP"):
        upper = [arg.upper() for arg in args]
        if b"BLOCK" in upper:
            at = upper.index(b"BLOCK")
            return args[:at] + args[at + 2 :]
    return args


@dataclass(frozen=True)
class SessionWork:
    """The Redis round trips and Slack calls of one session, in the order they were made."""

    steps: list[tuple[float, Any]]
    redis_trips: int
    redis_commands: int
    slack_calls: int


def session_work(trips: list[_RoundTrip], slack_calls: list[tuple[float, str, dict[str, Any]]]) -> SessionWork:
    steps: list[tuple[float, Any]] = [(trip.at, trip) for trip in trips]
    steps += [(at, (method, args)) for at, method, args in slack_calls]
    return SessionWork(
        steps=sorted(steps, key=lambda step: step[0]),
        redis_trips=len(trips),
        redis_commands=sum(len(trip.commands) for trip in trips),
        slack_calls=len(slack_calls),
    )


def floor_sessions_per_s(work: SessionWork, redis_url: str, slack_url: str, *, repeat: int) -> float:
    """Make one session's calls ``repeat`` times, serially, directly; return sessions per second.

    The Redis commands go to database 1 of the same server (the scripts are loaded server-wide), so the
    bot's own data is not touched.
    """
    client = redis.Redis.from_url(redis_url, db=1)
    slack = KeepAliveWebClient(token=TOKEN, base_url=slack_url)  # the client the bot's outbox uses
    client.ping()
    started = time.perf_counter()
    for _ in range(repeat):
        for _at, step in work.steps:
            if isinstance(step, _RoundTrip):
                _replay(client, step)
            else:
                method, args = step
                slack.api_call(method, json=args)
    elapsed = time.perf_counter() - started
    client.close()
    return repeat / elapsed


def _replay(client: redis.Redis, trip: _RoundTrip) -> None:
    commands = [_without_blocking(args) for args in trip.commands]
    try:
        if len(commands) == 1:
            client.execute_command(*commands[0])  # type: ignore[no-untyped-call]
            return
        pipeline = client.pipeline(transaction=False)
        for args in commands:
            pipeline.execute_command(*args)  # type: ignore[no-untyped-call]
        pipeline.execute(raise_on_error=False)
    except redis.ResponseError:
        pass  # database 1 lacks the bot's groups and records: the command still made its round trip


# ---------------------------------------------------------------------------------------------- main


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def _report(name: str, outcome: _Outcome, elapsed_s: float) -> float:
    if outcome.failures:
        raise RuntimeError(f"{name}: {len(outcome.failures)} sessions failed: {outcome.failures[:5]}")
    rate = outcome.sessions / elapsed_s
    latencies = outcome.click_to_reply_s
    print(
        f"  {name}: {outcome.sessions} sessions in {elapsed_s:.2f} s = {rate:.1f} sessions/s; click -> reply "
        f"p50 {_percentile(latencies, 0.5) * 1000:.1f} ms, p99 {_percentile(latencies, 0.99) * 1000:.1f} ms, "
        f"mean {statistics.fmean(latencies) * 1000:.1f} ms; clicks refused as out of place, then clicked again: "
        f"{len(outcome.clicked_again)}"
    )
    return rate


def main() -> None:
    """Run ours, the floor, and the slow-model run; print the numbers and the ratios."""
    args = parse_options(
        __doc__,
        sessions=600,
        people=40,
        web_workers=2,
        workers=2,
        concurrency=(8, "WORKER_CONCURRENCY of each worker"),
        reaction_ms=(20.0, "how soon after the approval a person clicks"),
        floor_repeat=300,
        model_delay=(0.2, "seconds per model call in the slow run"),
        slow_people=50,
        slow_concurrency=(32, "WORKER_CONCURRENCY in the slow run"),
        slow_reaction_ms=(500.0, "the people's reaction in the slow run"),
    )
    reaction_s = args.reaction_ms / 1000
    layout = f"gunicorn {args.web_workers} workers x 8 threads, {args.workers} worker processes"

    with ExitStack() as stack:
        server = stack.enter_context(RedisServer())
        client = redis.Redis.from_url(server.url)
        slack = stack.enter_context(BenchSlack())
        print(f"e2e bench: Procfile layout ({layout}), real Redis, loopback Slack, demonstration agent")
        with procfile(
            server.url, slack.url,
            web_workers=args.web_workers, workers=args.workers, concurrency=args.concurrency, model_delay_s=0,
        ) as bot:  # fmt: skip
            port = bot.port
            run_people(port, slack, people=args.people, sessions=args.people * 2, reaction_s=reaction_s)  # warm-up
            work = _capture_one_session(port, slack, server, reaction_s=reaction_s)
            floor_before = floor_sessions_per_s(work, server.url, slack.url, repeat=args.floor_repeat)
            cpu_before = (*bot.cpu_s(), _redis_cpu_s(client), sum(os.times()[:2]))
            outcome, elapsed = run_people(
                port, slack, people=args.people, sessions=args.sessions, reaction_s=reaction_s
            )
            cpu_used = [after - before for after, before in zip(
                (*bot.cpu_s(), _redis_cpu_s(client), sum(os.times()[:2])), cpu_before, strict=True
            )]  # fmt: skip
            floor_after = floor_sessions_per_s(work, server.url, slack.url, repeat=args.floor_repeat)
        print(
            f"  one session's I/O: {work.redis_trips} Redis round trips ({work.redis_commands} commands), "
            f"{work.slack_calls} Slack calls"
        )
        print(f"  {args.people} people at once, WORKER_CONCURRENCY={args.concurrency}, click {args.reaction_ms:g} ms "
              "after the approval appears")  # fmt: skip
        ours = _report("ours", outcome, elapsed)
        web_ms, worker_ms, redis_ms, bench_ms = (seconds * 1000 / outcome.sessions for seconds in cpu_used)
        print(
            f"  CPU per session: web {web_ms:.1f} ms, worker {worker_ms:.1f} ms, Redis {redis_ms:.1f} ms, "
            f"this process (the people and the loopback Slack) {bench_ms:.1f} ms"
        )
        floor = (floor_before + floor_after) / 2
        print(
            f"  floor: the same Redis and Slack calls, serial, one thread: {floor:.1f} sessions/s "
            f"(before {floor_before:.1f}, after {floor_after:.1f})"
        )
        print(f"ratio ours/floor sessions/s: {ours / floor:.2f}x")

        slow_reaction_s = args.slow_reaction_ms / 1000
        print(
            f"slow model: {args.model_delay * 1000:.0f} ms per model call, {args.slow_people} people at once "
            f"(clicking {args.slow_reaction_ms:g} ms after the approval appears), "
            f"{args.workers} worker processes x WORKER_CONCURRENCY={args.slow_concurrency}"
        )
        with procfile(
            server.url, slack.url, web_workers=args.web_workers, workers=args.workers,
            concurrency=args.slow_concurrency, model_delay_s=args.model_delay,
        ) as bot:  # fmt: skip
            run_people(bot.port, slack, people=args.slow_people, sessions=args.slow_people, reaction_s=slow_reaction_s)
            outcome, elapsed = run_people(
                bot.port, slack, people=args.slow_people, sessions=args.slow_people * 4, reaction_s=slow_reaction_s
            )
        _report("ours", outcome, elapsed)
        p50 = _percentile(outcome.click_to_reply_s, 0.5)
        print(f"ratio click->reply p50/model time: {p50 / args.model_delay:.2f}x (goal <= 1.5x)")


def _capture_one_session(port: int, slack: BenchSlack, server: RedisServer, *, reaction_s: float) -> SessionWork:
    """One session alone, its Redis commands and Slack calls recorded."""
    host, redis_port = server.url.removeprefix("redis://").split("/")[0].split(":")
    capture = CommandCapture(host, int(redis_port))
    try:
        time.sleep(0.2)  # MONITOR is on before the session starts
        slack.recording = []
        capture.on = True
        outcome, _elapsed = run_people(port, slack, people=1, sessions=1, reaction_s=reaction_s)
        time.sleep(0.05)  # the last update of the approval message may come after the reply
        capture.on = False
        calls, slack.recording = slack.recording, None
        if outcome.failures:
            raise RuntimeError(f"the captured session failed: {outcome.failures[0]}")
        return session_work(round_trips(capture.take()), calls)
    finally:
        capture.close()


if __name__ == "__main__":
    main()
