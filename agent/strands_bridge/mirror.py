"""The bot's view of a Strands session: what the repository mirrors into the session's ``state.store`` hash.

The bot reads a session's version, its interrupted flag and its conversation from ``state.store``; a Strands
agent or orchestrator keeps its own records (``agent.strands_bridge.records``). After each write of those, the
repository writes this view with the store's own compare-and-set, so the bot's version checks and the
``signoff:interrupted`` index work unchanged.
"""

from dataclasses import dataclass, field
from typing import Any

from strands.types.session import encode_bytes_values

from state.errors import ConflictError
from state.shapes import Message
from state.store import SessionStore


@dataclass
class MirrorView:
    """What one session looks like in ``state.store``, and the version it was read at."""

    version: int
    messages: dict[int, Message] = field(default_factory=dict)
    agent_state: dict[str, Any] = field(default_factory=dict)
    interrupt_state: dict[str, Any] = field(
        default_factory=lambda: {"interrupts": {}, "context": {}, "activated": False}
    )


@dataclass
class Mirror:
    """The store writes are mirrored to, and its views of the sessions read so far."""

    store: SessionStore
    views: dict[str, MirrorView] = field(default_factory=dict)

    def base_version(self, session_id: str) -> int:
        """The session's version in the store now (0: none), the base of a view read now."""
        stored = self.store.load(session_id)
        return stored.version if stored is not None else 0

    def write(self, session_id: str, view: MirrorView) -> None:
        """Save the view with the store's compare-and-set on the version it was read at.

        Bytes (an image or document block) are written in Strands' JSON form for them, as in its own records.

        Raises:
            ConflictError: The session changed since; the view is dropped, so the next write reads it again.
        """
        try:
            view.version = self.store.save(
                session_id,
                expected_version=view.version,
                messages=encode_bytes_values([view.messages[message_id] for message_id in sorted(view.messages)]),
                agent_state=view.agent_state,
                interrupt_state=encode_bytes_values(view.interrupt_state),
            )
        except ConflictError:
            self.views.pop(session_id, None)  # re-read on the next write; this one is lost to the caller
            raise
