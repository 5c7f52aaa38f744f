"""Where a person acted (``Origin``), as the decide script judges it, and the modals bound to a click.

A decision is bound to the approval *and* to where it was shown (invariant 1, "Seen"): a
click counts only on the approval's own message or on the direct-message copy the bot sent
that person, a typed reply only in the approval's own thread; a click on the App Home is
re-checked against the channel. It is also bound to the workspace that asked: a person of
another workspace (Slack Connect), or a payload naming another team, is refused unless the
request's policy says ``allow_external: true``. The decide script judges all of it, for every
path (``bot.flow.decisions``): here is only what the payload says.

Deny and edit modals carry where their button was clicked in their ``private_metadata``, and the bot
remembers the same for the view it opened (``Modals``, kept by ``bot.store.modal_views``): a submission whose
metadata does not match what the bot opened that view with, or names another approval, is refused.
"""

import json
from dataclasses import asdict, dataclass
from typing import Final, Literal

from bot.domain.records import place_of_session
from bot.store.modal_views import ModalViews

Surface = Literal["message", "home", "reply"]
Purpose = Literal["deny", "edit", "grant", "answer"]
"""What a modal the bot opened is for."""

_EXTERNAL_ID_MAX: Final = 255  # Slack's limit for a view's external_id


@dataclass(frozen=True)
class Origin:
    """Where an attempt comes from, as the signed payload says.

    Attributes:
        surface: ``message`` (a button on a message), ``home`` (the App Home tab) or ``reply`` (a typed reply).
        team_id: The workspace the payload comes from (``team.id``, or an event's ``team_id``).
        user_team_id: The person's own workspace (``user.team_id``; another one for a Slack Connect guest).
        channel_id: The channel of the message or reply (``None`` on the App Home).
        ts: The message clicked, or the thread replied in (``None`` on the App Home).
        thread_ts: The thread of the message clicked, if it is in one.
    """

    surface: Surface
    team_id: str
    user_team_id: str
    channel_id: str | None = None
    ts: str | None = None
    thread_ts: str | None = None

    def fields(self) -> dict[str, str]:
        """The origin as the decide script reads it (``""`` where there is none)."""
        return {
            "surface": self.surface,
            "team_id": self.team_id,
            "user_team_id": self.user_team_id,
            "channel_id": self.channel_id or "",
            "ts": self.ts or "",
            "thread_ts": self.thread_ts or "",
        }

    def place_of(self, session_id: str) -> tuple[str, str]:
        """The workspace and channel an attempt on ``session_id`` names: the session's own, else this origin's.

        A session id that names no place (a request made through the API) is expected where the attempt comes
        from, as it is when nothing is amiss. The decide script checks the request's own place either way; only a
        wrong guess costs a round trip more (it answers with the place).
        """
        team_id, channel_id = place_of_session(session_id)
        if not channel_id and self.channel_id:
            return self.team_id, self.channel_id
        return team_id, channel_id

    def audit_details(self) -> dict[str, str | None]:
        """The origin as an audit event names it: the surface, the channel and the person's own workspace."""
        return {"surface": self.surface, "channel_id": self.channel_id, "team_id": self.user_team_id}


@dataclass(frozen=True)
class ModalBinding:
    """What a modal was opened for: the approval, the person, where they clicked, and to do what.

    ``purpose``: ``deny``, ``edit`` or ``grant``; the last two also name the input they were opened on (``digest``).
    An ``answer`` names the question's session too (``session_id``: its submission reads the question at once).
    """

    approval_id: str
    user_id: str
    surface: Surface
    channel_id: str | None
    ts: str | None
    purpose: Purpose = "deny"
    digest: str = ""
    session_id: str = ""

    def metadata(self) -> str:
        """The modal's ``private_metadata`` (well under Slack's 3,000 characters: ids only)."""
        return json.dumps(asdict(self), separators=(",", ":"), sort_keys=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Modals:
    """Remembers what each deny or edit modal was opened for (``ModalViews``), and checks each submission."""

    views: ModalViews

    def remember(self, binding: ModalBinding) -> str:
        """Record ``binding``; return the ``external_id`` to open its view with."""
        return self.views.remember(binding.metadata())

    def matches(self, external_id: str, *, metadata: str, user_id: str, purpose: Purpose) -> ModalBinding | None:
        """The binding of a submitted view if its metadata, submitter and purpose are the ones it was opened with."""
        if not 0 < len(external_id) <= _EXTERNAL_ID_MAX:
            return None
        opened_with = self.views.opened_with(external_id)
        if opened_with is None or opened_with != metadata:
            return None
        binding = ModalBinding(**json.loads(opened_with))
        return binding if binding.user_id == user_id and binding.purpose == purpose else None
