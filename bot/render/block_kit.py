"""Block Kit's element constructors: plain text, sections, context lines, buttons (pure, no texts of their own)."""

from typing import Any


def plain_text(text: str) -> dict[str, Any]:
    """A plain-text object (emoji on)."""
    return {"type": "plain_text", "text": text, "emoji": True}


def section(text: str) -> dict[str, Any]:
    """A section with mrkdwn text."""
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def context(*lines: str) -> dict[str, Any]:
    """A context block, one mrkdwn element per line."""
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": line} for line in lines]}


def button(action_id: str, label: str, value: str, style: str | None = None) -> dict[str, Any]:
    """A button (``style``: ``primary``, ``danger`` or none)."""
    button: dict[str, Any] = {"type": "button", "action_id": action_id, "text": plain_text(label), "value": value}
    if style is not None:
        button["style"] = style
    return button
