"""What Slack asked the outbox to wait for (a 429's ``Retry-After``), scoped as Slack scopes its limits.

Waits are spread at random (``Jitter``): what failed, or waited, together must not all come back at one instant.

``chat.postMessage`` is limited per channel: a 429 pauses every lane of the channel (``LaneLeases.pause_channel``).
Every other method is limited per workspace: a 429 pauses that method there (``LaneLeases.pause_method``). Both are
kept in Redis for every dispatcher, and here as this process knows them, so that a lane under way stops at the first
429 of its channel or method instead of each of its entries earning one.
"""

import random
import threading
from collections.abc import Callable, Sequence
from typing import Final

from slack_sdk.errors import SlackApiError

from bot.slack.outbound.lanes import lane_of
from bot.store.queues.lane_leases import LaneLeases
from bot.store.queues.outbox import OutboxEntry, OutboxKind, backoff_s

POSTING: Final = "chat.postMessage"
# The Web API method each kind of entry calls (a post that may have been sent asks for its copies first).
_METHOD_OF: Final[dict[str, str]] = {
    OutboxKind.POST_APPROVAL: POSTING,
    OutboxKind.POST_APPROVAL_COPY: POSTING,
    OutboxKind.POST_MESSAGE: POSTING,
    OutboxKind.POST_ANSWER: POSTING,
    OutboxKind.UPDATE_APPROVAL: "chat.update",
    OutboxKind.POST_EPHEMERAL: "chat.postEphemeral",
    OutboxKind.PUBLISH_HOME: "views.publish",
}
_COPIES_FOUND_WITH: Final = ("conversations.history", "conversations.replies")


class SlackPauses:
    """The pauses Slack asked for: set on a 429, read before sending (thread-safe)."""

    def __init__(self, lanes: LaneLeases, *, now_ms: Callable[[], int]) -> None:
        """``lanes``: where the pauses are kept for every dispatcher; ``now_ms``: the outbox's clock."""
        self._lanes = lanes
        self._now_ms = now_ms
        self._until_ms: dict[str, int] = {}
        self._lock = threading.Lock()

    def learn(self, entries: Sequence[OutboxEntry]) -> None:
        """Read the pauses on the methods ``entries`` call (another dispatcher may have met the 429): one round trip."""
        pairs = {(entry.team_id, method) for entry in entries for method in _methods_of(entry) if method != POSTING}
        for (team_id, method), until_ms in self._lanes.paused_methods(pairs).items():
            self._remember(_method_pause(team_id, method), until_ms)

    def rate_limited(self, entry: OutboxEntry, error: SlackApiError, retry_after_s: float) -> str:
        """Pause what Slack limited when it answered ``entry``'s call with a 429; return the method it was."""
        method = str(getattr(error.response, "api_url", "") or "").rstrip("/").rpartition("/")[2] or POSTING
        if method == POSTING:
            until_ms = self._lanes.pause_channel(lane_of(entry), retry_after_s)
            self._remember(_channel_pause(entry), until_ms)
        else:
            until_ms = self._lanes.pause_method(entry.team_id, method, retry_after_s)
            self._remember(_method_pause(entry.team_id, method), until_ms)
        return method

    def paused_s(self, entry: OutboxEntry) -> float:
        """How long Slack asked for none of the calls ``entry`` makes (0: none is paused)."""
        now_ms = self._now_ms()
        keys = [
            _channel_pause(entry) if method == POSTING else _method_pause(entry.team_id, method)
            for method in _methods_of(entry)
        ]
        with self._lock:
            until_ms = max((self._until_ms.get(key, 0) for key in keys), default=0)
        return max(until_ms - now_ms, 0) / 1000

    def _remember(self, key: str, until_ms: int) -> None:
        with self._lock:
            self._until_ms[key] = until_ms  # the latest Retry-After counts, as in Redis


class Jitter:
    """Random spreads of waits (thread-safe: ``random.Random`` is not documented so)."""

    def __init__(self, draws: random.Random) -> None:
        """``draws``: the random source (seeded by tests)."""
        self._draws = draws
        self._lock = threading.Lock()

    def backoff_s(self, attempts: int) -> float:
        """The wait after ``attempts`` failed attempts: between half and all of ``outbox.backoff_s``."""
        return backoff_s(attempts, spread=0.5 + self._draw() / 2)

    def spread(self, wait_s: float) -> float:
        """``wait_s`` and up to half as much again."""
        return wait_s * (1 + self._draw() / 2)

    def _draw(self) -> float:
        with self._lock:
            return self._draws.random()


def _methods_of(entry: OutboxEntry) -> tuple[str, ...]:
    """The Web API methods delivering ``entry`` calls first (what a pause on them holds back)."""
    method = _METHOD_OF.get(entry.kind)
    if method is None:
        return ()
    return (method, *_COPIES_FOUND_WITH) if method == POSTING and entry.may_have_been_sent else (method,)


def _channel_pause(entry: OutboxEntry) -> str:
    return f"channel:{lane_of(entry).partition('/')[0]}"


def _method_pause(team_id: str, method: str) -> str:
    return f"method:{team_id}:{method}"
