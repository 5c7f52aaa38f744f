"""The whole bot as Slack sees it: Bolt over real HTTP, a loopback Web API, a real Redis, a worker.

Tests act as Slack (signed requests) and as the people in the channel; ``drain()`` runs the
worker's job and outbox loops until nothing is left to do, so scenarios are deterministic
without sleeping.
"""

import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import redis
from pydantic import SecretStr
from slack_sdk import WebClient

from agent import Agent
from agent.demo import build_operations_agent
from bot.api import openapi
from bot.domain.records import session_id_for
from bot.domain.workspaces import OneWorkspace
from bot.render import action_ids as ids
from bot.render import blocks
from bot.services import Services
from bot.settings import Settings
from bot.slack.edge.http import guarded_wsgi_app
from bot.slack.outbound.delivery import Deliverer
from bot.store import keys
from bot.store.workspaces.directory import Directory
from bot.worker import Worker
from loopback_slack import slack_requests
from loopback_slack.slack_requests import PostResult, SignedPoster
from tests.bot.support.api_conformance import ApiConformance
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.http_server import serve_wsgi
from tests.bot.support.people import APPROVER, CHANNEL, CHANNEL_MEMBERS, PEOPLE, REQUESTER, TEAM
from tests.bot.support.tampering import TamperingPoster

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"


def jobs_once(worker: Worker) -> int:
    """One read of a drain's jobs: every job it took, run to its end; how many. A shard's read that answered too late
    (this machine busy) counts as work left: its jobs are the next read's, and a drain that stopped would miss them."""
    taken = worker.run_jobs_once(block_ms=1)
    if taken == 0 and worker.jobs.reads_owed():
        time.sleep(0.02)
        return 1
    return taken


def take_over(worker: Worker, *, within_s: float = 5.0) -> int:
    """``worker`` (another, with a claim time of 0) takes a dead worker's jobs over: it reads until it has taken one,
    for at most ``within_s``; how many it took. On a busy machine a shard's claim may answer after its read has
    returned: its jobs are then the next read's."""
    deadline = time.monotonic() + within_s
    while not (taken := worker.run_jobs_once(block_ms=1)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return taken


def drain(worker: Worker, *, rounds: int = 50) -> None:
    """Run ``worker``'s jobs, fire what its schedule has due and deliver its outbox, until all are idle (the lanes a
    batch left running included: a drain that returned before them would read a post not yet made)."""
    for _ in range(rounds):
        jobs = jobs_once(worker)
        fired = worker.escalator.tick() + worker.finish_uninstalls()
        delivered = worker.deliverer.deliver_due()
        if not jobs and not fired and not delivered and not worker.deliverer.settle():
            if not _reads_owed(worker):
                return
            time.sleep(0.02)  # a shard's late answer (its due steps, entries or jobs) is the next read's
    raise AssertionError("the worker did not settle")


def _reads_owed(worker: Worker) -> bool:
    """Whether a cluster shard's read of jobs, due steps or outbox entries answered after its call had returned."""
    queues = (worker.jobs, worker.escalator.schedule, worker.escalator.outbox)
    return any(queue.rests.owed() for queue in queues)


@dataclass
class Bot:
    """A running bot and the handles a scenario needs."""

    slack: FakeSlack
    services: Services
    poster: TamperingPoster
    worker: Worker
    url: str
    api: ApiConformance | None = None
    """Every exchange with the HTTP API, checked against the document it serves (None: not checked)."""

    def drain(self, *, rounds: int = 50) -> None:
        """Run jobs, fire what the schedule has due and deliver the outbox, until all are idle."""
        drain(self.worker, rounds=rounds)

    def deliverer_through(self, client: WebClient) -> Deliverer:
        """A second worker's deliverer of this bot's outbox, sending through ``client`` (one that stalls, or fails)."""
        return Deliverer(
            clients=OneWorkspace(client),
            outbox=self.services.stores.outbox,
            approvals=self.services.stores.approvals,
            redis=self.services.stores.redis,
        )

    def ask(self, text: str = "restart checkout", *, user: str = REQUESTER) -> tuple[str, str]:
        """Mention the bot with a request that needs an approval; return (approval id, session id)."""
        self.mention(text, user=user)
        self.drain()
        approval_id = self.approval_id(-1)
        session_id = self.services.stores.approvals.session_of(approval_id)
        assert session_id is not None
        return approval_id, session_id

    def corrupt(self, approval_id: str, session_id: str) -> None:
        """Write garbage where the approval's request and its terms (what a click is judged by) are stored."""
        self.services.stores.redis.hset(
            keys.approval(session_id, approval_id), mapping={"request": "{garbage", "terms": "{"}
        )

    def texts_posted(self) -> list[str]:
        """Texts of every chat.postMessage the bot made, in order."""
        return [str(call.args.get("text", "")) for call in self.slack.calls("chat.postMessage")]

    def mention(self, text: str, *, user: str = REQUESTER, thread_ts: str | None = None) -> PostResult:
        """Someone mentions the bot in the channel (or in a thread)."""
        event = slack_requests.app_mention(user=user, channel=CHANNEL, text=f"<@U0BOT> {text}", thread_ts=thread_ts)
        return self.poster.post_event(event)

    def reply(self, text: str, *, user: str, thread_ts: str) -> PostResult:
        """Someone replies in a thread."""
        event = slack_requests.message_event(channel=CHANNEL, text=text, user=user, thread_ts=thread_ts)
        return self.poster.post_event(event)

    def approval_messages(self) -> list[dict[str, Any]]:
        """The bot's approval messages in the channel, latest state, oldest first."""
        return [message for message in self.slack.messages(CHANNEL) if blocks.approval_id_shown(message) is not None]

    def approval_id(self, index: int = 0) -> str:
        """The approval id carried by the buttons of the ``index``-th approval message."""
        approval_id = blocks.approval_id_shown(self.approval_messages()[index])
        assert approval_id is not None
        return approval_id

    def click(self, action_id: str, approval_id: str, *, user: str) -> PostResult:
        """Someone clicks a button of an approval message in the channel."""
        message = next(m for m in self.approval_messages() if blocks.approval_id_shown(m) == approval_id)
        return self.click_message(action_id, approval_id, user=user, channel=CHANNEL, message=message)

    def click_message(
        self, action_id: str, approval_id: str, *, user: str, channel: str, message: dict[str, Any]
    ) -> PostResult:
        """Someone clicks a button of ``message`` in ``channel`` (a DM copy, say)."""
        payload = message_click(self.slack, action_id, approval_id, user=user, channel=channel, message=message)
        return self.poster.post_action(payload)

    def click_payload(self, action_id: str, approval_id: str, *, user: str) -> dict[str, Any]:
        """The ``block_actions`` payload of a click on a button of the approval's message (to send as is, or bent)."""
        message = next(m for m in self.approval_messages() if blocks.approval_id_shown(m) == approval_id)
        return message_click(self.slack, action_id, approval_id, user=user, channel=CHANNEL, message=message)

    def slash_approvals(self, *, user: str = REQUESTER, channel: str = CHANNEL) -> str:
        """Someone runs ``/approvals`` in ``channel``: the text the bot answers through the response URL."""
        answered = len(self.slack.calls("response_url"))
        command = slack_requests.slash_command(
            command=ids.APPROVALS_COMMAND,
            user_id=user,
            channel_id=channel,
            response_url=self.slack.response_url(channel=channel),
        )
        assert self.poster.post_command(command).status == 200
        return str(self.slack.wait_for("response_url", count=answered + 1)[-1].args["text"])

    def open_deny(self, approval_id: str, *, user: str) -> dict[str, Any]:
        """Someone clicks Deny on the approval message: the modal the bot opened for them."""
        opened = len(self.slack.calls("views.open"))
        self.click(ids.DENY_ACTION, approval_id, user=user)
        call = self.slack.wait_for("views.open", count=opened + 1)[-1]
        return dict(call.response["view"])

    def submit_deny(
        self, approval_id: str, *, user: str, reason: str | None, view: dict[str, Any] | None = None
    ) -> PostResult:
        """Someone submits the deny modal (opened by clicking Deny first, unless ``view`` is given)."""
        view = view if view is not None else self.open_deny(approval_id, user=user)
        values = {ids.DENY_REASON_BLOCK: {ids.DENY_REASON_INPUT: {"type": "plain_text_input", "value": reason}}}
        return self._submit(view, ids.DENY_MODAL_CALLBACK, user=user, values=values)

    def open_answer(self, approval_id: str, *, user: str) -> dict[str, Any]:
        """Someone clicks Answer on a question's message: the form the bot opened for them."""
        opened = len(self.slack.calls("views.open"))
        assert self.click(ids.ANSWER_ACTION, approval_id, user=user).status == 200
        call = self.slack.wait_for("views.open", count=opened + 1)[-1]
        return dict(call.response["view"])

    def submit_answer(
        self, approval_id: str, *, user: str, answer: str | None, view: dict[str, Any] | None = None
    ) -> PostResult:
        """Someone submits the answer form (opened by clicking Answer first, unless ``view`` is given)."""
        view = view if view is not None else self.open_answer(approval_id, user=user)
        values = {ids.ANSWER_BLOCK: {ids.ANSWER_INPUT: {"type": "plain_text_input", "value": answer}}}
        return self._submit(view, ids.ANSWER_MODAL_CALLBACK, user=user, values=values)

    def submit_answer_form(self, view: dict[str, Any], *, user: str, changes: dict[str, Any]) -> PostResult:
        """Someone submits a question's form ``view``, its fields (by label) holding ``changes``, as ``submit_edit``."""
        return self._submit(view, ids.ANSWER_MODAL_CALLBACK, user=user, values=edit_form_state(view, changes))

    def open_edit(self, approval_id: str, *, user: str) -> dict[str, Any]:
        """Someone clicks Edit on the approval message: the form the bot opened for them."""
        opened = len(self.slack.calls("views.open"))
        assert self.click(ids.EDIT_ACTION, approval_id, user=user).status == 200
        call = self.slack.wait_for("views.open", count=opened + 1)[-1]
        return dict(call.response["view"])

    def submit_edit(self, view: dict[str, Any], *, user: str, changes: dict[str, Any]) -> PostResult:
        """Someone submits the edit form ``view``: the fields named in ``changes`` (by label) set to those values
        (a text, a choice, a tick), the others as the form showed them, in Slack's state shapes."""
        return self._submit(view, ids.EDIT_MODAL_CALLBACK, user=user, values=edit_form_state(view, changes))

    def _submit(self, view: dict[str, Any], callback_id: str, *, user: str, values: dict[str, Any]) -> PostResult:
        """``user`` submits the modal ``view`` (opened under ``callback_id``) with its inputs holding ``values``."""
        payload = slack_requests.view_submission(
            callback_id=callback_id,
            user_id=user,
            view_id=view["id"],
            external_id=view.get("external_id", ""),
            private_metadata=view["private_metadata"],
            values=values,
        )
        return self.poster.post_view_submission(payload)

    def open_home(self, user: str) -> dict[str, Any]:
        """Someone opens the App Home tab: the view the bot published for them."""
        event = {"type": "app_home_opened", "user": user, "channel": f"D{user}", "tab": "home"}
        assert self.poster.post_event(slack_requests.event_callback(event)).status == 200
        self.drain()  # the tab is built and published by the outbox
        view = self.slack.home_view(user)
        assert view is not None
        return view

    def click_home(self, action_id: str, approval_id: str, *, user: str) -> PostResult:
        """Someone clicks a button on their App Home tab."""
        return self.poster.post_action(home_click(action_id, approval_id, user=user))

    def thread_texts(self, thread_ts: str) -> list[str]:
        """Texts of the messages in a thread, in order."""
        return [message.get("text", "") for message in self.slack.messages(CHANNEL, thread_ts=thread_ts)]

    def wait_told(self, user: str, text: str, *, timeout_s: float = 10) -> None:
        """Drain until ``user`` was shown ``text`` (a lazy listener's answer comes after the click's 200)."""
        deadline = time.monotonic() + timeout_s
        while text not in self.ephemeral_texts(user):
            assert time.monotonic() < deadline, f"{user} was never told {text!r}: {self.ephemeral_texts(user)}"
            time.sleep(0.02)
            self.drain()

    def ephemeral_texts(self, user: str) -> list[str]:
        """Ephemeral texts shown to ``user``."""
        return [
            call.args.get("text", "")
            for call in self.slack.calls("chat.postEphemeral")
            if call.args.get("user") == user
        ]


def message_click(
    slack: FakeSlack, action_id: str, approval_id: str, *, user: str, channel: str, message: dict[str, Any]
) -> dict[str, Any]:
    """A click on the button ``action_id`` of the approval message ``message`` in ``channel``, as Slack sends it
    (with a response URL on ``slack``)."""
    # The button's own value, as Slack sends it back (it names the session too), when it is this approval's.
    shown = _button_value(message, action_id)
    value = shown if shown is not None and ids.parse_button_value(shown)[0] == approval_id else approval_id
    return slack_requests.block_actions(
        action_id=action_id,
        user_id=user,
        channel_id=channel,
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts"),
        value=value,
        blocks=message.get("blocks"),
        response_url=slack.response_url(channel=channel, message_ts=message["ts"]),
    )


def edit_form_state(view: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The ``state.values`` Slack sends for the edit form ``view``: each input as shown, but those ``changes`` names."""
    state: dict[str, Any] = {}
    for block in view["blocks"]:
        if block.get("type") != "input":
            continue
        element, label = block["element"], block["label"]["text"]
        kind = element["type"]
        if kind == "checkboxes":
            ticked = bool(changes[label]) if label in changes else bool(element.get("initial_options"))
            shown: dict[str, Any] = {"selected_options": element["options"][:1] if ticked else []}
        elif kind == "static_select":
            chosen = changes.get(label, (element.get("initial_option") or {}).get("value"))
            options = [option for option in element["options"] if option["value"] == chosen]
            shown = {"selected_option": options[0] if options else None}
        else:
            shown = {"value": changes.get(label, element.get("initial_value"))}
        state[block["block_id"]] = {element["action_id"]: {"type": kind, **shown}}
    return state


def deny_submission(approval_id: str, *, user: str = APPROVER, reason: str = "no") -> dict[str, Any]:
    """A submitted deny modal for ``approval_id``, built without opening it (to send as is, or bent)."""
    return slack_requests.view_submission(
        callback_id=ids.DENY_MODAL_CALLBACK,
        user_id=user,
        private_metadata=approval_id,
        values={ids.DENY_REASON_BLOCK: {ids.DENY_REASON_INPUT: reason}},
    )


def start_thread(bot: Bot, request: str) -> str:
    """Mention the bot with ``request`` (accepted) and let the worker settle; the first approval message's thread."""
    assert bot.mention(request).status == 200
    bot.drain()
    return str(bot.approval_messages()[0]["thread_ts"])


def thread_session(thread_ts: str, *, channel: str = CHANNEL) -> str:
    """The id of the session a thread of the test workspace holds (the bot's own spelling)."""
    return session_id_for(slack_requests.TEAM_ID, channel, thread_ts)


def home_click(
    action_id: str, approval_id: str, *, user: str, team: slack_requests.Team = slack_requests.DEFAULT_TEAM
) -> dict[str, Any]:
    """A click on the App Home tab (in workspace ``team``), as Slack sends it: no channel, no message, a view
    container."""
    payload = slack_requests.block_actions(
        action_id=action_id, user_id=user, channel_id=CHANNEL, message_ts="0", value=approval_id, team=team
    )
    for key in ("channel", "message"):
        payload.pop(key, None)
    payload["container"] = {"type": "view", "view_id": "V0HOME"}
    payload["view"] = {"id": "V0HOME", "type": "home"}
    return payload


def _button_value(message: dict[str, Any], action_id: str) -> str | None:
    """The value of the button ``action_id`` of ``message`` (``None`` if it has none)."""
    for block in message.get("blocks") or []:
        for element in block.get("elements") or []:
            if isinstance(element, dict) and element.get("action_id") == action_id:
                return str(element.get("value"))
    return None


def is_decided(message: dict[str, Any]) -> bool:
    """Whether the approval message shows a decision (and no buttons)."""
    block_ids = [str(block.get("block_id", "")) for block in message.get("blocks") or []]
    return any(b.startswith(blocks.DECISION_BLOCK_PREFIX) for b in block_ids) and not any(
        b.startswith(blocks.ACTIONS_BLOCK_PREFIX) for b in block_ids
    )


@contextmanager
def running_bot(
    redis_client: redis.Redis,
    *,
    agent_factory: Any = None,
    policy_path: Any = None,
    usergroups: dict[str, list[str]] | None = None,
    clock: Any = None,
    api_max_waits: int | None = None,
    home_refresh_seconds: float = 0,
) -> Iterator[Bot]:
    """Start the fake Slack, the Bolt app over HTTP, and a worker (driven by ``drain``).

    ``api_max_waits``: the API's long-polls held at once (``API_MAX_WAITS``; default: the setting's).
    ``home_refresh_seconds``: ``HOME_REFRESH_SECONDS`` (0 here: ``drain`` shows every change at once).
    """
    users: dict[str, dict[str, Any]] = {user: {} for user in PEOPLE}
    with FakeSlack(usergroups=usergroups or {}, users=users, channels={CHANNEL: CHANNEL_MEMBERS}) as slack:
        settings = Settings(
            slack_bot_token=SecretStr(slack.token),
            slack_signing_secret=SecretStr(SIGNING_SECRET),
            slack_api_url=slack.url,
            approval_policy=policy_path,
            home_refresh_seconds=home_refresh_seconds,
        )
        if api_max_waits is not None:
            settings = settings.model_copy(update={"api_max_waits": api_max_waits})
        extra = {"clock": clock} if clock is not None else {}
        services = Services(settings, redis_client=redis_client, agent_factory=agent_factory, **extra)
        # Closed after the test: its shard-read and lane threads would otherwise outlive it (the heap with them).
        with closing(services), served_bot(settings, services, TamperingPoster) as served:
            yield Bot(slack, services, served.poster, served.worker, served.url, served.api)


PosterT = TypeVar("PosterT", bound=SignedPoster)


@dataclass
class ServedBot(Generic[PosterT]):
    """The bot's app served at ``url``: a ``poster`` signing requests to it, a worker, every API exchange checked."""

    url: str
    poster: PosterT
    worker: Worker
    api: ApiConformance


@contextmanager
def served_bot(settings: Settings, services: Services, poster: type[PosterT]) -> Iterator[ServedBot[PosterT]]:
    """Serve the bot built as ``services`` over HTTP (its job group made), a ``poster`` signing with ``SIGNING_SECRET``.

    On leaving, asserts the HTTP API answered only what its OpenAPI document lists.
    """
    services.stores.jobs.ensure_group()
    api = ApiConformance(lambda: openapi.document(services.api_requests.channel_routing()))
    with (
        serve_wsgi(api.wrap(guarded_wsgi_app(settings, services))) as url,
        poster(url, SIGNING_SECRET) as signed,
    ):
        yield ServedBot(url, signed, services.worker(claim_idle_ms=60_000), api)
    assert api.outside_the_document == [], "the HTTP API answered outside its OpenAPI document"


def demo_factory(*, session_id: str, store: Any) -> Agent:
    """The demonstration operations agent (the bot's default)."""
    return build_operations_agent(session_id=session_id, store=store)


def waiting_on_a_warm_bot(bot: Bot) -> tuple[str, str]:
    """An approval waiting (its id and session) in a channel whose members the bot knows already, on a bot that has
    clicked before (its connections are open), so a click sends its one script at once: an outage's tests hold that."""
    approval_id, session_id = bot.ask()
    directory = Directory(clients=bot.services.clients, redis_client=bot.services.stores.redis)
    assert directory.in_channel(TEAM, CHANNEL, APPROVER, shard=keys.shard_of(session_id))
    other_id, _other_session = bot.ask("restart search")
    assert bot.click(ids.APPROVE_ACTION, other_id, user=APPROVER).status == 200
    bot.drain()
    return approval_id, session_id
