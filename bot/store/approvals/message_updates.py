"""Updates of an approval's messages: one delivery at a time, and never an older render over a newer one.

Each queued message update bumps the approval's ``version`` (the decide and claim scripts). A
delivery leases the right to update the approval's messages (``lease``), renders what is stored
then, and records the version the messages now show (``shown_if_leased``): a later delivery that
finds that version shown has nothing to do. A delivery whose lease ran out half way may have
been overtaken (its older render landing last): its record is refused, and it shows the latest
state again. When an update fails half way, what the messages show is unknown (``forget_shown``).

Keys (``bot.store.keys``): the lease and the version shown, per approval, under the session's hash tag.
The version shown is kept a while (longer than the default retention); once it expires the next
update simply redraws.
"""

import uuid
from typing import Final

import redis

from bot.store import keys, scripts

_SHOWN_KEPT_S: Final = 40 * 86_400


class MessageUpdates:
    """The update lease and the version shown of each approval's messages."""

    def __init__(self, client: redis.Redis) -> None:
        """Register the scripts; nothing is sent yet."""
        self._client = client
        self._shown_if_held = client.register_script(scripts.SHOWN_IF_HELD.text)
        self._release_if_held = client.register_script(scripts.RELEASE_IF_HELD.text)

    def lease(self, session_id: str, approval_id: str, *, lease_ms: int) -> tuple[str | None, int]:
        """Take the lease for ``lease_ms`` (one round trip).

        Returns:
            The lease token (``None``: another delivery holds it) and the version the messages
            show (-1: unknown).
        """
        token = uuid.uuid4().hex
        pipeline = self._client.pipeline(transaction=False)
        pipeline.set(keys.message_update_lease(session_id, approval_id), token, nx=True, px=lease_ms)
        pipeline.get(keys.message_shown(session_id, approval_id))
        taken, shown = pipeline.execute()
        return (token if taken else None), int(shown) if shown is not None else -1

    def shown_if_leased(self, session_id: str, approval_id: str, *, token: str, version: int) -> bool:
        """Record that the messages show ``version``; ``False`` (nothing recorded) if the lease was lost."""
        shown = scripts.SHOWN_IF_HELD
        return bool(
            self._shown_if_held(
                keys=shown.key_list(
                    shown_key=keys.message_shown(session_id, approval_id),
                    lease_key=keys.message_update_lease(session_id, approval_id),
                ),
                args=shown.arg_list(token=token, version=version, ttl_s=_SHOWN_KEPT_S),
            )
        )

    def forget_shown(self, session_id: str, approval_id: str) -> None:
        """The messages may show anything now (an update failed half way): the next update redraws them."""
        self._client.delete(keys.message_shown(session_id, approval_id))

    def release(self, session_id: str, approval_id: str, *, token: str) -> None:
        """Give the lease back (if still held)."""
        release = scripts.RELEASE_IF_HELD
        self._release_if_held(
            keys=release.key_list(lease_key=keys.message_update_lease(session_id, approval_id)),
            args=release.arg_list(token=token),
        )
