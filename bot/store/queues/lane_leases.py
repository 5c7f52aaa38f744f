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
and no lane of it is taken until its Retry-After has passed; then, for a minute, its lanes start ``PACE_S`` apart
(one post a second is what Slack allows a channel), so that the threads that waited do not all hit the limit again
at once. Slack limits its other methods per workspace: a 429 there pauses that method (``pause_method``), read
before a batch is sent (``paused_methods``).
"""

import uuid
from collections.abc import Callable, Collection, Sequence

import redis

from bot.store import keys, scripts
from bot.store.pipelined import run_each

_PAUSE_KEPT_MS = 60_000  # a pause's key outlives its end (outbox clock) by this much: the lanes' pacing lasts as long
PACE_S = 1.0


class LaneLeases:
    """Takes and leaves lanes for one delivery batch, each in one round trip for all its lanes."""

    def __init__(self, client: redis.Redis, *, lease_s: float, now_ms: Callable[[], int]) -> None:
        """``lease_s``: how long a lane stays taken by a delivery that went silent; ``now_ms``: the outbox's clock."""
        self._client = client
        self._lease_ms = int(lease_s * 1000)
        self._now_ms = now_ms
        self._take = client.register_script(scripts.TAKE_LANE.text)
        self._leave = client.register_script(scripts.LEAVE_LANE.text)

    def take(self, lanes: Sequence[tuple[str, str]]) -> tuple[str, list[float | None], list[bool]]:
        """Try to take each ``(lane, first entry id)``.

        Returns:
            As below, and per lane whether it waits for its channel's pause (or its pace after one): lanes that wait
            for that one moment are spread by the caller.

            This delivery's token, and per lane ``None`` if taken, ``0.0`` if another delivery took it moments
            ago, else the seconds to wait (it is held for an entry put back, its channel is paused or starting again
            after a pause, or the delivery that took it over a second ago is slow or dead: then at most a second).
        """
        token = uuid.uuid4().hex
        if not lanes:
            return token, [], []
        now_ms = self._now_ms()
        pace_ms = int(PACE_S * 1000)
        take = scripts.TAKE_LANE
        calls = [
            (
                take.key_list(lane_key=keys.outbox_lane(lane), pause_key=keys.outbox_channel_pause(lane)),
                take.arg_list(token=token, now_ms=now_ms, lease_ms=self._lease_ms, first_entry=first, pace_ms=pace_ms),
            )
            for lane, first in lanes
        ]
        answers = run_each(self._client, self._take, calls)
        for answer in answers:
            if isinstance(answer, Exception):
                raise answer
        codes = [int(answer) for answer in answers]
        waits = [None if code == -1 else (-2 - code if code < -1 else code) / 1000 for code in codes]
        return token, waits, [code < -1 for code in codes]

    def leave(self, token: str, lanes: Sequence[tuple[str, str | None, float]]) -> None:
        """Leave each ``(lane, entry put back or None, its delay s)``: free it, or hold it for that entry."""
        if not lanes:
            return
        now_ms = self._now_ms()
        leave = scripts.LEAVE_LANE
        calls = [
            (
                leave.key_list(lane_key=keys.outbox_lane(lane)),
                leave.arg_list(
                    token=token, put_back=put_back or "", now_ms=now_ms, hold_ms=int(delay_s * 1000) + self._lease_ms
                ),
            )
            for lane, put_back, delay_s in lanes
        ]
        for answer in run_each(self._client, self._leave, calls):
            if isinstance(answer, Exception):
                raise answer

    def pause_channel(self, lane: str, delay_s: float) -> int:
        """Take no lane of the channel ``lane`` is in for ``delay_s`` (Slack's Retry-After: the latest one counts).

        Returns:
            When the pause ends (outbox clock, ms).
        """
        delay_ms = int(delay_s * 1000)
        until_ms = self._now_ms() + delay_ms
        self._client.set(keys.outbox_channel_pause(lane), str(until_ms), px=delay_ms + _PAUSE_KEPT_MS)
        return until_ms

    def pause_method(self, team_id: str, method: str, delay_s: float) -> int:
        """Call ``method`` in ``team_id`` no more for ``delay_s`` (Slack's Retry-After); when the pause ends (ms)."""
        delay_ms = int(delay_s * 1000)
        until_ms = self._now_ms() + delay_ms
        self._client.set(keys.outbox_method_pause(team_id, method), str(until_ms), px=delay_ms + _PAUSE_KEPT_MS)
        return until_ms

    def paused_methods(self, methods: Collection[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """Which ``(team, method)`` pairs are paused now, and until when (outbox clock, ms); one round trip."""
        if not methods:
            return {}
        asked = list(methods)
        reads = self._client.pipeline(transaction=False)  # each key in its own slot: no transaction
        for team_id, method in asked:
            reads.get(keys.outbox_method_pause(team_id, method))
        now_ms = self._now_ms()
        paused = {pair: int(value) for pair, value in zip(asked, reads.execute(), strict=True) if value is not None}
        return {pair: until_ms for pair, until_ms in paused.items() if until_ms > now_ms}
