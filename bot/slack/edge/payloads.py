"""The Slack payloads ``bot.slack.edge.payload_shape`` lets through, as types for the listeners that read them.

The edge runs ``payload_problem`` on every payload (over HTTP and Socket Mode) before Bolt sees it, so
a listener is handed one of these shapes. A field is typed as the check holds it: required only where
the check requires it, and ``Any`` where it does not look (read those as Slack may send anything).
"""

from typing import Any, Literal, NotRequired, TypedDict


class IdObject(TypedDict):
    """A ``channel`` (or ``team``, ``user``) given as an object: its ``id`` a string or null."""

    id: NotRequired[str | None]


class Interactor(TypedDict):
    """The ``user`` of an interaction: an object with a string ``id``."""

    id: str
    team_id: NotRequired[Any]


class Action(TypedDict):
    """One of a ``block_actions``' actions (``value`` is there on every button of the bot's that acts on something)."""

    action_id: str
    value: NotRequired[str]
    block_id: NotRequired[Any]


class ClickedMessage(TypedDict):
    """The message a click came from, as far as the listeners read it."""

    thread_ts: NotRequired[str | None]


class BlockActions(TypedDict):
    """A click on a button or a menu."""

    type: Literal["block_actions"]
    user: Interactor
    actions: list[Action]
    channel: NotRequired[IdObject]
    container: NotRequired[dict[str, Any]]
    message: NotRequired[ClickedMessage]
    team: NotRequired[Any]
    team_id: NotRequired[str | None]
    view: NotRequired[Any]
    state: NotRequired[Any]
    """What the message's inputs hold (a click on the App Home: the view's ``state``)."""
    trigger_id: NotRequired[Any]
    response_url: NotRequired[Any]


class InputState(TypedDict):
    """What one input of a submitted view holds (``value`` for a text input, the options for the others)."""

    value: NotRequired[str | None]
    type: NotRequired[Any]
    selected_option: NotRequired[Any]
    selected_options: NotRequired[Any]


class ViewState(TypedDict):
    """A submitted view's inputs: block id -> action id -> what the input holds."""

    values: NotRequired[dict[str, dict[str, InputState]]]


class SubmittedView(TypedDict):
    """The view of a ``view_submission``."""

    type: str
    callback_id: str
    private_metadata: str
    state: NotRequired[ViewState]
    external_id: NotRequired[Any]


class ViewSubmission(TypedDict):
    """A modal submitted."""

    type: Literal["view_submission"]
    user: Interactor
    view: SubmittedView
    team: NotRequired[Any]
    team_id: NotRequired[str | None]


class EventCallback(TypedDict):
    """The envelope of an event (the event itself is handed to the listener beside it)."""

    type: Literal["event_callback"]
    event: dict[str, Any]
    event_id: NotRequired[str | None]
    team_id: NotRequired[str | None]
    enterprise_id: NotRequired[str | None]
    is_enterprise_install: NotRequired[bool | None]


class _PostedEvent(TypedDict):
    """What a ``message`` and an ``app_mention`` share: where and when, and the text (strings when present)."""

    type: str
    channel: str
    ts: str
    thread_ts: NotRequired[str]
    team: NotRequired[str]
    text: NotRequired[str]
    user_team: NotRequired[Any]


class MessageEvent(_PostedEvent):
    """A ``message`` event (a bot's message or a subtype may come without a user)."""

    user: NotRequired[str]
    bot_id: NotRequired[Any]
    subtype: NotRequired[Any]


class MentionEvent(_PostedEvent):
    """An ``app_mention`` event."""

    user: str


class HomeOpenedEvent(TypedDict):
    """An ``app_home_opened`` event."""

    type: str
    user: str
    tab: NotRequired[str]


class TeamAccessEvent(TypedDict):
    """A ``team_access_revoked`` event: workspaces an org admin took from the org-wide installation."""

    type: str
    team_ids: list[str]


class SlashCommand(TypedDict):
    """A slash command's form."""

    command: str
    user_id: str
    channel_id: str
    text: NotRequired[str]
    team_id: NotRequired[str | None]
    trigger_id: NotRequired[Any]
