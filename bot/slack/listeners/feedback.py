"""Tell a clicker what happened to their click: an ephemeral message through the outbox.

Clicks on the App Home tab come from no channel: there the answer is a direct message.
"""

from dataclasses import dataclass

from bot.flow.access import Origin
from bot.flow.outcomes import Outcome
from bot.render.texts.outcomes import told
from bot.slack.edge.payloads import BlockActions, EventCallback, MessageEvent, ViewSubmission
from bot.store.queues.outbox import Outbox, post_ephemeral, post_message


def outcome_text(outcome: Outcome | None) -> str | None:
    """The ephemeral text for a refused or repeated click (``None`` when there is nothing to say, or no outcome)."""
    return told(outcome) if outcome is not None else None


@dataclass(frozen=True)
class Clicker:
    """Who clicked, and where.

    ``channel`` is ``None`` for a click on the App Home tab; ``team``: the workspace the click came from, whose token
    answers it.
    """

    user: str
    channel: str | None
    thread_ts: str | None
    team: str = ""


def clicker(body: BlockActions) -> Clicker:
    """Read who clicked and where from a ``block_actions`` body."""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
    return Clicker(body["user"]["id"], channel, _thread_of(body), team_of(body))


def _thread_of(body: BlockActions) -> str | None:
    """The thread of the message clicked: the container's, else the message's (``payload_shape`` checked both).

    Slack may leave it out of the container; without it a click on a message whose ts was never recorded (the worker
    died while Slack held the post) could not be placed by its thread.
    """
    return (body.get("container") or {}).get("thread_ts") or (body.get("message") or {}).get("thread_ts")


def team_of(body: BlockActions | ViewSubmission) -> str:
    """The workspace a request (an interaction, an event, a command) came from ("" if it names none)."""
    team = body.get("team")
    if isinstance(team, dict):
        return str(team.get("id") or "")
    return str(body.get("team_id") or team or "")


def click_origin(body: BlockActions) -> Origin:
    """Where a ``block_actions`` click comes from: a message (its channel and ts) or the App Home tab.

    A missing team counts as another workspace (fails closed): Slack always sends both.
    """
    team_id = str((body.get("team") or {}).get("id") or "")
    user_team_id = str((body.get("user") or {}).get("team_id") or "")
    container = body.get("container") or {}
    if container.get("type") == "view" and (body.get("view") or {}).get("type") == "home":
        return Origin("home", team_id, user_team_id)
    if container.get("type") != "message":
        return Origin("message", team_id, user_team_id)  # nowhere an approval is shown: refused as such
    channel_id, ts = container.get("channel_id"), container.get("message_ts")
    return Origin("message", team_id, user_team_id, channel_id, ts, _thread_of(body))


def reply_origin(body: EventCallback, event: MessageEvent) -> Origin:
    """Where a thread reply comes from: its channel, its thread, the person's workspace (``user_team``)."""
    user_team_id = str(event.get("user_team") or event.get("team") or "")
    return Origin("reply", str(body.get("team_id") or ""), user_team_id, event.get("channel"), event.get("thread_ts"))


def tell(
    outbox: Outbox, *, team_id: str, channel: str | None, user: str, text: str, thread_ts: str | None = None
) -> None:
    """Queue a message only ``user`` of ``team_id`` sees: ephemeral in ``channel``, or a DM when there is no channel."""
    if channel is None:
        outbox.send_later(post_message(user, text, team_id=team_id))
        return
    outbox.send_later(post_ephemeral(channel, team_id=team_id, user=user, text=text, thread_ts=thread_ts))


def tell_clicker(outbox: Outbox, who: Clicker, text: str) -> None:
    """Queue ``text`` for ``who`` only, where they clicked (in its thread; a DM for a click on the App Home tab)."""
    tell(outbox, team_id=who.team, channel=who.channel, user=who.user, text=text, thread_ts=who.thread_ts)
