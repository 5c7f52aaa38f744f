"""Where an Approve click's time goes, part by part (``bench.ack`` measures the whole click over HTTP).

Run: ``python -m bench.ack_parts [--clicks N]``

In one process, on a real Redis, with the clicks ``bench.ack`` sends (each a different pending approval):

- ``python``: the bot's WSGI app serves them with the decide script's reply canned (no round trip), and each layer's
  median time is printed, its callees included (the edge, the click, the decision, the script's keys and arguments);
  then the whole of bare+rt's Bolt app the same way, its no-op script's reply canned too: what ours is held against.
- ``server``: each app's script, its time inside Redis (``INFO commandstats``: the mean, as SLOWLOG would log every
  command the script runs too) and its round trip as the click waits for it (median); then a copy of the decide script
  with ``TIME`` stamps between its parts (judging, the decision, the indexes, the outbox, the audit, the resume job):
  each part's median on a decided click. The copy fails at once when the script no longer has a part's marker.

Read it next to ``bench.ack``'s ``ratio ours/bare+rt``: what a click costs above the floor is ours' Python above
Bolt's, the decide script's time in Redis above the no-op's, and the larger command's way there and back.
"""

import argparse
import importlib
import io
import os
import statistics
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from types import SimpleNamespace
from typing import Any, Final, cast

import redis

from bench.ack import SECRET, click_body, pending_approvals, slack_api
from bench.ack_apps import bare_round_trip, ours
from bot.observe.exposition import WsgiApp
from bot.store.direct_script import DirectScript
from bot.store.scripts.decide import DECIDE
from loopback_slack import slack_requests
from state import RedisServer

_LAYERS: Final = (
    ("bot.slack.edge.guard", "RequestGuard.verify"),
    ("bot.slack.edge.http", "read_request"),
    ("bot.slack.edge.http", "payload_problem"),
    ("bot.slack.edge.http", "approve_click"),
    ("bot.slack.edge.clicks", "ApproveClicks.serve"),
    ("bot.flow.decisions", "DecisionService.decide"),
    ("bot.flow.decisions", "DecisionService._attempt"),
    ("bot.flow.decisions", "DecisionService._decide_script"),
    ("bot.flow.decisions", "update_approval"),
    ("bot.store.queues.outbox", "Outbox.script_entry"),
    ("bot.flow.decisions", "DecisionService._audit_events"),
    ("bot.store.approvals.approvals", "ApprovalStore.decide"),
    ("bot.store.approvals.approvals", "keys_and_args"),
    ("bot.store.approvals.decide_call", "_decision_record"),
    ("bot.store.approvals.decide_call", "_attempt_args"),
    ("bot.flow.decisions", "DecisionService._outcome"),
    ("bot.observe.metrics", "decided"),
    ("bot.observe.tracing", "enabled"),
)
"""The layers of a click's Python, timed with their callees: ``(module, attribute path)`` as the caller looks it up."""

_PARTS: Final = (
    ("", "local attempt = {"),
    ("judge: the attempt from its arguments", "local update_run, vote_run"),
    ("judge: read the runs, the time limit", "local replay_key = "),
    ("judge: replay EXISTS, approval HMGET", "if terms_json == '' then return answer(STATUS_UNKNOWN) end"),
    ("judge: decode the terms", "local policy = terms.policy"),
    ("judge: place, members, policy", "if attempt.check then return answer(STATUS_WRONG_ACTION) end  -- a check is"),
    ("judge: edit, open set, round, discussion", "-- Records' empty fields are filled in place"),
    ("decision: fill in the record", "redis.call('HSET', approval_key, 'decision', decision"),
    ("decision: HSET, SREM from the open set", "drop_steps(schedule_due_key"),
    ("schedule: drop the steps", "redis.call('ZREM', open_index_key"),
    ("index: open index, channel's open index", "local indexed = stored[6]"),
    ("index: open-by entries", "-- Listed in one ZADD"),
    ("index: recent-by (workspace, people)", "queue_update_and_audit(decision_run)\n"),
    ("outbox: the message update", "  add_audit(audit_key, event_run, with_input)"),
    ("audit: the decision's event", "if redis.call('SCARD', open_set_key) == 0 then queue_job"),
    ("jobs: the round's resume job", "return answer(STATUS_DECIDED, decision)"),
)
"""The decide script's parts on a decided click: each is what runs from the marker before it to its own."""
_STAMPS_KEY: Final = "bench:decide-stamps"
_WARMUP: Final = 100


def _environ(body: bytes) -> dict[str, Any]:
    """The WSGI environ of a signed click, as gunicorn makes it."""
    timestamp = int(time.time())
    return {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/slack/events",
        "QUERY_STRING": "",
        "SERVER_PORT": "8000",
        "CONTENT_TYPE": "application/x-www-form-urlencoded",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_X_SLACK_REQUEST_TIMESTAMP": str(timestamp),
        "HTTP_X_SLACK_SIGNATURE": slack_requests.sign(SECRET, timestamp, body),
        "wsgi.input": io.BytesIO(body),
    }


def _serve(app: WsgiApp, body: bytes) -> None:
    statuses: list[str] = []
    answer = app(_environ(body), lambda status, headers, error=None: statuses.append(status))
    for _chunk in answer:
        pass
    getattr(answer, "close", lambda: None)()
    if not statuses[0].startswith("200"):
        raise RuntimeError(f"status=<{statuses[0]}> | a click was refused")


@contextmanager
def _replaced(owner: Any, name: str, value: Any) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def _timing(function: Callable[..., Any], name: str, into: dict[str, int]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter_ns()
        try:
            return function(*args, **kwargs)
        finally:
            into[name] = into.get(name, 0) + time.perf_counter_ns() - started

    return timed


def _timed_layers(stack: ExitStack, into: dict[str, int]) -> None:
    """Time every layer of ``_LAYERS`` into ``into`` (ns, summed by name) until ``stack`` closes."""
    for module, path in _LAYERS:
        *parents, name = path.split(".")
        owner: Any = importlib.import_module(module)
        for parent in parents:
            owner = getattr(owner, parent)
        stack.enter_context(_replaced(owner, name, _timing(getattr(owner, name), path, into)))


def _median_us(values: Iterable[float]) -> float:
    return statistics.median(values) / 1000


def _canned_reply(app: WsgiApp, body: bytes) -> Any:
    """What ``app``'s script answers a click with (the round trip's reply, as ``DirectScript`` reads it)."""
    replies: list[Any] = []
    send = DirectScript._send

    def kept(script: DirectScript, *args: Any) -> Any:
        replies.append(send(script, *args))
        return replies[-1]

    with _replaced(DirectScript, "_send", kept):
        _serve(app, body)
    return replies[-1]


def _layer_times(app: WsgiApp, bodies: Iterator[bytes], clicks: int, *, layers: bool) -> list[dict[str, int]]:
    """Each click's time (ns: ``whole``, and with ``layers`` each of ``_LAYERS``), its script's reply canned."""
    canned = _canned_reply(app, next(bodies))
    times: list[dict[str, int]] = []
    timed: dict[str, int] = {}
    with ExitStack() as stack:
        stack.enter_context(_replaced(DirectScript, "_send", lambda script, *args: canned))
        if layers:
            _timed_layers(stack, timed)
        for index in range(_WARMUP + clicks):
            body = next(bodies)
            timed.clear()
            started = time.perf_counter_ns()
            _serve(app, body)
            whole = time.perf_counter_ns() - started
            if index >= _WARMUP:
                times.append({"whole": whole, **timed})
    return times


def _python(apps: dict[str, WsgiApp], bodies: Iterator[bytes], clicks: int) -> None:
    """The whole of each app and each layer of ours: medians over ``clicks``."""
    print(f"python: median us per click over {clicks} clicks, the script's reply canned (callees included)")
    wholes: dict[str, float] = {}
    for name, app in apps.items():
        times = _layer_times(app, bodies, clicks, layers=name == "ours")
        wholes[name] = _median_us(row["whole"] for row in times)
        print(f"  {name}: {wholes[name]:7.1f}")
        for _module, path in _LAYERS if name == "ours" else ():
            print(f"    {path:40} {_median_us(row.get(path, 0) for row in times):7.1f}")
    print(f"ratio ours/bare+rt (python): {wholes['ours'] / wholes['bare+rt']:.2f}x")


def _stamped(text: str) -> str:
    """The decide script with a ``TIME`` stamp at each part's marker, pushed to ``_STAMPS_KEY`` when it decides."""
    stamp = (
        "local bench_stamps = {}\nlocal function bench_stamp() local now = redis.call('TIME') "
        "bench_stamps[#bench_stamps + 1] = now[1] .. string.format('%06d', tonumber(now[2])) end\n"
    )
    for index, (_part, marker) in enumerate(_PARTS):
        if text.count(marker) != 1:
            raise RuntimeError(f"marker=<{marker!r}> | not once in the decide script: update _PARTS")
        added = (stamp if index == 0 else "") + "bench_stamp()\n"
        if index == len(_PARTS) - 1:
            added += f"redis.call('RPUSH', '{_STAMPS_KEY}', table.concat(bench_stamps, ','))\n"
        text = text.replace(marker, added + marker)
    return text


def _server(client: redis.Redis, apps: dict[str, WsgiApp], bodies: Iterator[bytes], clicks: int) -> None:
    """Each app's script: its time in Redis (the mean ``INFO commandstats`` gives) and its round trip (median)."""
    print(f"server: us per click over {clicks} clicks")
    waited: list[int] = []
    timing: dict[str, int] = {}
    with _replaced(DirectScript, "_send", _timing(DirectScript._send, "send", timing)):
        for name, app in apps.items():
            client.config_resetstat()
            waited.clear()
            for _click in range(clicks):
                timing.clear()
                _serve(app, next(bodies))
                waited.append(timing["send"])
            in_redis = float(client.info("commandstats")["cmdstat_evalsha"]["usec_per_call"])
            print(
                f"  {name}: script in Redis (mean) {in_redis:6.1f}, its round trip (median) {_median_us(waited):6.1f}"
            )


def _script_parts(client: redis.Redis, bodies: Iterator[bytes], clicks: int) -> None:
    """Each part of the decide script on a decided click (median), stamped by Redis' clock in a copy of it."""
    stamped_text = _stamped(DECIDE.text)
    with _replaced(
        importlib.import_module("bot.store.approvals.approvals"), "DECIDE", SimpleNamespace(text=stamped_text)
    ):
        stamped = ours()
    for _click in range(_WARMUP + clicks):
        _serve(stamped, next(bodies))
    listed = cast(list[bytes], client.lrange(_STAMPS_KEY, _WARMUP, -1))
    rows = [[int(stamp) for stamp in row.split(b",")] for row in listed]
    print(f"  the decide script's parts, us ({len(rows)} decided clicks, a copy stamped with Redis' TIME):")
    for index, (part, _marker) in enumerate(_PARTS[1:], start=1):
        print(f"    {part:44} {statistics.median(row[index] - row[index - 1] for row in rows):6.1f}")
    print(f"    {'whole, first stamp to last':44} {statistics.median(row[-1] - row[0] for row in rows):6.1f}")


def main() -> None:
    """Measure ours and bare+rt: their Python by layer, their scripts in Redis, the decide script by part."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=2000)
    args = parser.parse_args()
    clicks = args.clicks
    with RedisServer() as server, slack_api() as api_url:
        os.environ.update(BENCH_SIGNING_SECRET=SECRET, BENCH_SLACK_API_URL=api_url, REDIS_URL=server.url)
        client = redis.Redis.from_url(server.url)
        needed = 2 * (_WARMUP + clicks + 1) + 2 * clicks + _WARMUP + clicks
        bodies = iter([click_body(request) for request in pending_approvals(client, needed)])
        apps = {"ours": ours(), "bare+rt": bare_round_trip()}
        _python(apps, bodies, clicks)
        _server(client, apps, bodies, clicks)
        _script_parts(client, bodies, clicks)


if __name__ == "__main__":
    main()
