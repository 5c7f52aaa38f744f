"""Edits of pending calls in Redis: the input an approver edited a call to, one record per approval.

The record (``keys.approval_edit``, a hash: ``input`` as JSON, ``digest``, ``by``, ``at``) is written by one
script (``bot.store.scripts.EDIT_CALL``) with the message update and the audit event; the decide script reads it
(an Approve must name the input it saw, and the decision carries the edited input). It expires with its round.
"""

import json
from datetime import datetime

import redis

from bot.domain.edits import CallEdit
from bot.domain.status import Status
from bot.store import keys, scripts
from bot.store.queues.outbox import Outbox
from state.text import as_text


class EditStore:
    """Records edits of pending calls. Thread-safe (redis-py pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        """Register the script; nothing is sent yet."""
        self._edit = client.register_script(scripts.EDIT_CALL.text)

    def edit(
        self,
        session_id: str,
        approval_id: str,
        *,
        edit: CallEdit,
        started_from: str,
        update: scripts.ScriptRecord,
        audit: scripts.ScriptRecord,
    ) -> tuple[Status, str]:
        """Record ``edit`` if the call still waits with the input whose digest is ``started_from``.

        Returns:
            The status (``edited``, ``unknown``, ``already``, ``forbidden``, ``changed``, ``unchanged``) and the
            digest of the input that waits now.
        """
        shard = keys.shard_of(session_id)  # every key below shares the session's slot
        meta = {
            "approval_id": approval_id,
            "editor": edit.edited_by,
            "from": started_from,
            "digest": edit.digest,
            "at": edit.edited_at.isoformat(),
        }
        status, digest = self._edit(
            keys=scripts.EDIT_CALL.key_list(
                approval_key=keys.approval(session_id, approval_id),
                edit_key=keys.approval_edit(session_id, approval_id),
                votes_key=keys.votes(session_id, approval_id),
                open_set_key=keys.open_approvals(session_id),
                **Outbox.script_named_keys(shard),
                audit_key=keys.audit(shard),
            ),
            args=scripts.EDIT_CALL.arg_list(
                *scripts.runs(update, audit),
                edit_json=json.dumps(meta),
                input=json.dumps(edit.input, ensure_ascii=False),
            ),
        )
        return Status(as_text(status)), as_text(digest)


def read_edit(approval_id: str, fields: dict[bytes, bytes]) -> CallEdit | None:
    """The edit a ``HGETALL`` of ``keys.approval_edit`` returned (``None``: the call was not edited).

    Raises:
        ValueError: The stored edit cannot be read back (``KeyError`` for a missing field).
    """
    if not fields:
        return None
    decoded = {as_text(key): as_text(value) for key, value in fields.items()}
    try:
        edited = json.loads(decoded["input"])
    except RecursionError as error:
        raise ValueError(f"approval_id=<{approval_id}> | stored edit nests too deep") from error
    return CallEdit(
        input=edited,
        digest=decoded["digest"],
        edited_by=decoded["by"],
        edited_at=datetime.fromisoformat(decoded["at"]),
    )
