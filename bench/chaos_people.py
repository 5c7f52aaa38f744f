"""The people of ``bench/chaos.py``: a requester and four approvers racing on every approval message.

Each session is one thread: the requester asks (``chaos single|quorum|pair <ticket>``), then every
approval message that shows live buttons gets a randomized race: one click, a double click, two
approvers at once (approve against deny), a typed ``approve:`` reply, a deny through the modal,
a self-approval attempt, three or four quorum votes at once. A message still live a few seconds
later is acted on again, as a person whose click was lost would. Requests go through the sandbox's
Slack stand-in (signed as Slack signs them); an event answered with an error is sent again, as
Slack retries it.
"""

import contextlib
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from bench.chaos_agent import FINAL_PREFIX
from bot.render import action_ids as ids
from bot.render import blocks
from bot.sandbox.people import CHANNEL, PEOPLE
from bot.sandbox.workspace import PageError, SandboxSlack
from loopback_slack import slack_requests

REQUESTER: Final = "USBXREQ"
APPROVERS: Final = ("USBXAPPR", "USBXSECOND", "UCHAOS3", "UCHAOS4")
SHAPES: Final = ("single", "single", "quorum", "pair")
_AGAIN_AFTER_S: Final = 4.0
_EVENT_RETRY_S: Final = 30.0


@dataclass
class Session:
    """One thread the bench drives."""

    ticket: str
    shape: str
    thread_ts: str = ""
    started_at: float = 0.0
    finished_at: float | None = None
    acted: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    """What stopped the bench's own driver of this session, if anything did (not the bot's doing)."""


def is_final_answer(message: dict[str, Any], bot_user_id: str) -> bool:
    """The agent's answer that ends a session."""
    return message.get("user") == bot_user_id and str(message.get("text", "")).startswith(FINAL_PREFIX)


class People:
    """Drives sessions through the stand-in; thread-safe (each session runs in its own thread)."""

    def __init__(self, slack: SandboxSlack, *, seed: int) -> None:
        """Add the approvers the sandbox lacks, as members of its channel; randomness from ``seed``."""
        self._slack = slack
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        for user in APPROVERS:
            slack.add_user(user, name=user.lower())
        # Only members of a request's channel may decide it: the extra approvers join the channel.
        members = {slack.identity.bot_user_id, REQUESTER, *APPROVERS, *(person.user_id for person in PEOPLE)}
        slack.set_channel_members(CHANNEL, sorted(members))

    def run(self, session: Session, *, until: float) -> None:
        """Ask, then race on every live approval message until the answer arrives or ``until`` (monotonic)."""
        session.started_at = time.monotonic()
        session.thread_ts = self.say(
            REQUESTER, f"<@{self._slack.identity.bot_user_id}> chaos {session.shape} {session.ticket}"
        )
        while time.monotonic() < until:
            thread = self._slack.messages(CHANNEL, session.thread_ts)
            if any(is_final_answer(message, self._slack.identity.bot_user_id) for message in thread):
                session.finished_at = time.monotonic()
                return
            for message in thread:
                approval_id = blocks.approval_id_shown(message, live=True)
                last = session.acted.get(approval_id or "")
                if approval_id is None or (last is not None and time.monotonic() - last < _AGAIN_AFTER_S):
                    continue
                session.acted[approval_id] = time.monotonic()
                self._race(session, message, approval_id, again=last is not None)
            time.sleep(0.1)

    def say(self, user: str, text: str, thread_ts: str | None = None) -> str:
        """Post a message as ``user`` (a mention starts a session); its events are retried until answered 200."""
        message = self._slack.add_message(
            CHANNEL, user=user, text=text, thread_ts=thread_ts, team=self._slack.identity.team_id
        )
        endpoint = self._slack.bot
        assert endpoint is not None
        for event in slack_requests.message_events(
            self._slack.space, user=user, channel=CHANNEL, text=text, ts=message["ts"], thread_ts=thread_ts
        ):
            deadline = time.monotonic() + _EVENT_RETRY_S
            while not _taken(endpoint, event) and time.monotonic() < deadline:
                time.sleep(0.5)  # Slack retries an event the app did not take
        return str(message["ts"])

    def _race(self, session: Session, message: dict[str, Any], approval_id: str, *, again: bool) -> None:
        with self._lock:
            pick = self._random.random()
            people = self._random.sample(APPROVERS, 4)
        ts = str(message["ts"])
        approve = self._clicker(ts, ids.APPROVE_ACTION)
        if session.shape == "quorum":
            voters = people[: 3 if again or pick < 0.5 else 4]
            moves = [approve(user) for user in voters]
            if not again and pick > 0.75:
                moves[-1] = self._denier(ts, approval_id, voters[-1])  # one deny ends it
            if pick < 0.25:
                moves.append(approve(voters[0]))  # a double click
        elif again or pick < 0.2:
            moves = [approve(people[0])]
        elif pick < 0.35:
            moves = [approve(people[0]), approve(people[0])]  # double click
        elif pick < 0.55:
            moves = [approve(people[0]), self._denier(ts, approval_id, people[1])]
        elif pick < 0.7 and session.shape == "single":
            moves = [lambda: self.say(people[0], "approve: fine by me", session.thread_ts), approve(people[1])]
        elif pick < 0.85:
            moves = [self._denier(ts, approval_id, people[0])]
        else:
            moves = [approve(REQUESTER), approve(people[0])]  # a self-approval is refused
        _all_at_once(moves)

    def _clicker(self, ts: str, action_id: str) -> Callable[[str], Callable[[], Any]]:
        def click_as(user: str) -> Callable[[], Any]:
            return lambda: self._click(user, ts, action_id)

        return click_as

    def _click(self, user: str, ts: str, action_id: str) -> bool:
        try:
            self._slack.click(user, CHANNEL, ts, action_id)
        except PageError:
            return False  # the button is gone (decided), or the bot answered an error
        return True

    def _denier(self, ts: str, approval_id: str, user: str) -> Callable[[], Any]:
        def deny() -> None:
            seen = {view["id"] for view in self._slack.views()}
            if not self._click(user, ts, ids.DENY_ACTION):
                return
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline:
                modal = next(
                    (
                        view
                        for view in self._slack.views()
                        if view["id"] not in seen and _modal_approval(view) == approval_id
                    ),
                    None,
                )
                if modal is not None:
                    values = {ids.DENY_REASON_BLOCK: {ids.DENY_REASON_INPUT: "not during the chaos"}}
                    with contextlib.suppress(PageError):  # the modal went to another denier's click; theirs counts
                        self._slack.submit(user, str(modal["id"]), values)
                    return
                time.sleep(0.05)

        return deny


def _taken(endpoint: slack_requests.SignedPoster, event: dict[str, Any]) -> bool:
    try:
        return endpoint.post_event(event).status == 200
    except OSError:  # refused or timed out (the web process is busy or restarting): not taken
        return False


def _all_at_once(moves: list[Callable[[], Any]]) -> None:
    start = threading.Barrier(len(moves))

    def run(move: Callable[[], Any]) -> None:
        start.wait()
        with contextlib.suppress(Exception):  # a refused or failed move is part of the chaos; acted on again later
            move()

    threads = [threading.Thread(target=run, args=(move,)) for move in moves]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _modal_approval(view: dict[str, Any]) -> str | None:
    """The approval a deny modal was opened for (its ``private_metadata`` is the bot's JSON binding)."""
    try:
        binding = json.loads(str(view.get("private_metadata") or ""))
    except json.JSONDecodeError:
        return None
    return binding.get("approval_id") if isinstance(binding, dict) else None
