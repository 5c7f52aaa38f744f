"""One delivery at a time per conversation, and none past an entry that was put back.

The outbox is delivered by several threads and processes. For the messages of one conversation
(a *lane*) to arrive in the order they were queued, a delivery first takes the lane's lease; a
lane taken by another delivery waits. When an attempt of an entry of the lane fails (a 429, an
error), the lease becomes a hold for that entry until it is due again: deliveries of later entries
of the lane wait, and only a delivery that starts with that very entry (or an earlier one) may
take the lane. A holder that dies releases the lane when its lease runs out; a hold lasts at most
the entry's delay plus a lease, so a lost entry never blocks its lane for long. Leases run on the
outbox's clock, as the entries' own leases do.

Slack limits posting per channel, not per thread: a 429 pauses the whole channel (``pause_channel``),
and no lane of it is taken until its Retry-After has passed. Deliveries already under way when it came
finish their batch (their own 429s put each entry back for its own Retry-After).
"""

import uuid
from collections.abc import Callable, Sequence

import redis

from bot.store import keys, scripts
from bot.store.pipelined import run_each

_PAUSE_KEPT_MS = 60_000  # a pause's key outlives its end (outbox clock) by this much of Redis's own time


class LaneLeases:
    """Takes and leaves lanes for one delivery batch, each in one round trip for all its lanes."""

    def __init__(self, client: redis.Redis, *, lease_s: float, now_ms: Callable[[], int]) -> None:
        """``lease_s``: how long a lane stays taken by a delivery that went silent; ``now_ms``: the outbox's clock."""
        self._client = client
        self._lease_ms = int(lease_s * 1000)
        self._now_ms = now_ms
        self._take = client.register_script(scripts.TAKE_LANE)
        self._leave = client.register_script(scripts.LEAVE_LANE)

    def take(self, lanes: Sequence[tuple[str, str]]) -> tuple[str, list[float | None]]:
        """Try to take each ``(lane, first entry id)``.

        Returns:
            This delivery's token, and per lane ``None`` if taken, ``0.0`` if another delivery took it moments
            ago, else the seconds to wait (it is held for an entry put back, its channel is paused, or the
            delivery that took it over a second ago is slow or dead: then at most a second).
        """
        token = uuid.uuid4().hex
        if not lanes:
            return token, []
        now_ms = self._now_ms()
        calls = [
            ([keys.outbox_lane(lane), keys.outbox_channel_pause(lane)], [token, now_ms, self._lease_ms, first])
            for lane, first in lanes
        ]
        answers = run_each(self._client, self._take, calls)
        for answer in answers:
            if isinstance(answer, Exception):
                raise answer
        return token, [None if int(answer) < 0 else int(answer) / 1000 for answer in answers]

    def leave(self, token: str, lanes: Sequence[tuple[str, str | None, float]]) -> None:
        """Leave each ``(lane, entry put back or None, its delay s)``: free it, or hold it for that entry."""
        if not lanes:
            return
        now_ms = self._now_ms()
        calls = [
            ([keys.outbox_lane(lane)], [token, put_back or "", now_ms, int(delay_s * 1000) + self._lease_ms])
            for lane, put_back, delay_s in lanes
        ]
        for answer in run_each(self._client, self._leave, calls):
            if isinstance(answer, Exception):
                raise answer

    def pause_channel(self, lane: str, delay_s: float) -> None:
        """Take no lane of the channel ``lane`` is in for ``delay_s`` (Slack's Retry-After: the latest one counts)."""
        delay_ms = int(delay_s * 1000)
        until_ms = self._now_ms() + delay_ms
        self._client.set(keys.outbox_channel_pause(lane), str(until_ms), px=delay_ms + _PAUSE_KEPT_MS)
