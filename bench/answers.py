"""A question answered against an approval decided: the Redis round trips on the click's path, counted for real.

Run: ``python -m bench.answers [--clicks N]``

The whole bot in this process, as the sandbox builds it (``bot.sandbox``'s Slack stand-in on loopback, the bot's
HTTP app, a real Redis), its worker driven between clicks only. Requests are made through the HTTP API: approvals
(``POST /v1/approvals``) and questions (``POST /v1/questions``). Each kind of click is sent N times, signed as
Slack signs it, each on a request of its own, after one warm-up (caches filled, connections open); counted are the
round trips the bot's Redis client makes from the click's arrival to its response (a pipeline or a script is one;
not what waits until the answer has left):

- an Approve click on an approval, against an option's button clicked on a question;
- a deny form submitted (its reason typed), against a question's form submitted (its fields filled in).

The figures to read are ``ratio question/approval`` (medians; goal: at most 1.00).
"""

import argparse
import json
import statistics
import threading
import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final
from wsgiref.simple_server import WSGIRequestHandler, make_server

import redis

from bench.round_trips import RoundTrips, counting_client
from bot.render import action_ids as ids
from bot.render import blocks
from bot.sandbox.people import CHANNEL
from bot.sandbox.run import sandbox_settings
from bot.sandbox.workspace import SandboxSlack
from bot.services import Services
from bot.slack.edge.http import guarded_wsgi_app
from bot.worker import Worker
from loopback_slack.slack_requests import SignedPoster
from state import RedisServer

SECRET: Final = "bench-answers-signing-secret"
REQUESTER: Final = "USBXREQ"  # asks; answers the questions asked for them
APPROVER: Final = "USBXAPPR"
FORM: Final = {"type": "object", "properties": {"note": {"type": "string", "maxLength": 40}}, "required": ["note"]}


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Quiet."""


@dataclass
class _Bench:
    """The bot in this process, its Slack stand-in, and the counter of its Redis client's round trips."""

    slack: SandboxSlack
    services: Services
    worker: Worker
    trips: RoundTrips
    url: str
    key: str
    answered: list[int]
    """The round trips of each request the bot answered, counted when its answer left (not what it did after)."""

    def drain(self) -> None:
        """Run the worker's loops until idle (never while a click is counted)."""
        for _ in range(50):
            jobs = self.worker.run_jobs_once(block_ms=1)
            fired = self.worker.escalator.tick()
            delivered = self.worker.deliverer.deliver_due()
            if not jobs and not fired and not delivered:
                return
        raise RuntimeError("the worker did not settle")

    def create(self, path: str, body: dict[str, Any]) -> str:
        """``POST /v1/<path>`` (the request's channel and requester added); the new request's id."""
        data = json.dumps({"channel": CHANNEL, "requester": REQUESTER, **body}).encode()
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        request = urllib.request.Request(f"{self.url}/v1/{path}", data=data, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return str(json.loads(response.read())["id"])

    def messages(self) -> dict[str, dict[str, Any]]:
        """The request messages in the channel, by the approval id their controls carry."""
        shown = {blocks.approval_id_shown(message): message for message in self.slack.messages(CHANNEL)}
        return {approval_id: message for approval_id, message in shown.items() if approval_id is not None}

    def click(self, user: str, message: dict[str, Any], action_id: str) -> int:
        """``user`` clicks ``action_id`` on ``message``: the round trips the bot's Redis client made to answer it."""
        served = len(self.answered)
        self.slack.click(user, CHANNEL, message["ts"], action_id)
        return self._counted(served)

    def submit(self, user: str, view: dict[str, Any], text: str) -> int:
        """``user`` submits the modal ``view``, ``text`` in each of its inputs: the round trips made to answer it."""
        typed = {
            str(block["block_id"]): {str(block["element"]["action_id"]): text}
            for block in view.get("blocks") or []
            if block.get("type") == "input"
        }
        served = len(self.answered)
        answered = self.slack.submit(user, str(view["id"]), typed)
        if answered.get("errors"):
            raise RuntimeError(f"the form was refused: {answered['errors']}")
        return self._counted(served)

    def _counted(self, served: int) -> int:
        if len(self.answered) != served + 1:
            raise RuntimeError("one request was to be answered")
        return self.answered[-1]

    def opened(self, user: str, message: dict[str, Any], action_id: str) -> dict[str, Any]:
        """``user`` clicks ``action_id`` on ``message``: the modal the bot opened for them (lazily, after the ack)."""
        before = len(self.slack.calls("views.open"))
        self.slack.click(user, CHANNEL, message["ts"], action_id)
        deadline = time.monotonic() + 10
        while len(self.slack.calls("views.open")) <= before:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no modal opened for {action_id}")
            self.slack.wait_for_change(self.slack.version, 0.05)
        return self.slack.calls("views.open")[-1].response["view"]  # type: ignore[no-any-return]


@contextmanager
def _bot(url: str) -> Iterator[_Bench]:
    """The bot on ``url``'s Redis, served on a loopback port, with the sandbox's Slack stand-in and policy."""
    client, trips = counting_client(url)
    slack_client = redis.Redis.from_url(url)  # the stand-in's own (its clock): not counted
    with SandboxSlack(token="xoxb-bench-answers", redis_client=slack_client) as slack:
        settings = sandbox_settings(token="xoxb-bench-answers", signing_secret=SECRET, api_url=slack.url)
        services = Services(settings, redis_client=client)
        services.stores.jobs.ensure_group()
        answered: list[int] = []
        application = guarded_wsgi_app(settings, services)

        def counted(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            before = trips.count
            chunks = application(environ, start_response)  # the whole answer: every one of ours is a list
            answered.append(trips.count - before)
            return chunks  # what waits for the answer runs once sent (its close), one request at a time

        server = make_server("127.0.0.1", 0, counted, handler_class=_Quiet)  # serves one request at a time
        threading.Thread(target=server.serve_forever, name="bench-bot", daemon=True).start()
        bot_url = f"http://127.0.0.1:{server.server_port}"
        issued = services.stores.api_keys.create("bench-answers")
        assert issued is not None
        try:
            with SignedPoster(bot_url, SECRET) as poster:
                slack.connect(poster)
                worker = services.worker(claim_idle_ms=60_000)
                yield _Bench(slack, services, worker, trips, bot_url, issued.key, answered)
        finally:
            server.shutdown()
            server.server_close()


def _measure(bench: _Bench, clicks: int) -> dict[str, list[int]]:
    """Each kind of click ``clicks + 1`` times (the first a warm-up, not kept): the round trips of each."""
    count = clicks + 1
    approvals = [bench.create("approvals", {"tool": "deploy_docs", "input": {"n": n}}) for n in range(2 * count)]
    options = [bench.create("questions", {"question": f"Region {n}?", "options": ["eu", "us"]}) for n in range(count)]
    forms = [bench.create("questions", {"question": f"Note {n}?", "schema": FORM}) for n in range(count)]
    bench.drain()
    shown = _by_request(bench, bench.messages())
    counts: dict[str, list[int]] = {"approve click": [], "option click": [], "deny form": [], "answer form": []}
    for n in range(count):
        counts["approve click"].append(bench.click(APPROVER, shown[approvals[2 * n]], ids.APPROVE_ACTION))
        counts["option click"].append(bench.click(REQUESTER, shown[options[n]], f"{ids.CHOOSE_PREFIX}0"))
        deny = bench.opened(APPROVER, shown[approvals[2 * n + 1]], ids.DENY_ACTION)
        counts["deny form"].append(bench.submit(APPROVER, deny, "not today"))
        form = bench.opened(REQUESTER, shown[forms[n]], ids.ANSWER_ACTION)
        counts["answer form"].append(bench.submit(REQUESTER, form, "ship it"))
        bench.drain()
    _all_settled(bench, [*approvals, *options, *forms])
    return {kind: values[1:] for kind, values in counts.items()}


def _by_request(bench: _Bench, shown: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The messages by the API request they show (its session is ``api:<id>``)."""
    found: dict[str, dict[str, Any]] = {}
    for approval_id, message in shown.items():
        session_id = bench.services.stores.approvals.session_of(approval_id)
        if session_id is not None and session_id.startswith("api:"):
            found[session_id.removeprefix("api:")] = message
    return found


def _all_settled(bench: _Bench, request_ids: list[str]) -> None:
    """Every click counted did what it should: each request is decided or answered (else the count is of nothing)."""
    for request_id in request_ids:
        approval_id = next(
            approval_id
            for approval_id in bench.messages()
            if bench.services.stores.approvals.session_of(approval_id) == f"api:{request_id}"
        )
        approval = bench.services.stores.approvals.get(f"api:{request_id}", approval_id)
        if approval is None or approval.decision is None:
            raise RuntimeError(f"request {request_id} was not settled by its click")


def main() -> None:
    """Count, then print the round trips of each kind of click and the ratios question/approval."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=20, help="clicks of each kind counted (after one warm-up)")
    args = parser.parse_args()
    with RedisServer() as server, _bot(server.url) as bench:
        counts = _measure(bench, args.clicks)
    print(f"answers bench: Redis round trips on a click's path (arrival to response), {args.clicks} of each kind")
    for kind, values in counts.items():
        shown = f"median {statistics.median(values):g}   mean {statistics.fmean(values):.2f}"
        print(f"  {kind:13} {shown}   min {min(values)}   max {max(values)}")
    for question, approval in (("option click", "approve click"), ("answer form", "deny form")):
        # Medians: a click that happens to refill a cache (a channel's members, every minute) is not the path.
        ratio = statistics.median(counts[question]) / statistics.median(counts[approval])
        print(f"ratio question/approval ({question} / {approval}): {ratio:.2f} (goal <= 1.00)")


if __name__ == "__main__":
    main()
