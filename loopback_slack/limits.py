"""Slack's published message and view limits, enforced as Slack does: a message the fake takes, Slack takes too."""

from typing import Any, Final

JsonDict = dict[str, Any]

MESSAGE_TEXT_MAX: Final = 40_000  # a message's ``text``: msg_too_long
MESSAGE_BLOCKS_MAX: Final = 50  # blocks in a message (a view takes 100): invalid_blocks
VIEW_BLOCKS_MAX: Final = 100
SECTION_TEXT_MAX: Final = 3_000  # a section's text: invalid_blocks
HEADER_TEXT_MAX: Final = 150
CONTEXT_ELEMENTS_MAX: Final = 10
# All the text a message's blocks carry: msg_blocks_too_long. Slack documents no exact figure; the
# cut-off is reported between about 12,000 and 13,300 characters, so the fake takes the lower one.
MESSAGE_BLOCKS_TEXT_MAX: Final = 12_000


def block_problem(block: object) -> bool:
    """Whether Slack refuses ``block`` (not an object, or a section, header or context over its limit)."""
    if not isinstance(block, dict):
        return True
    text = block.get("text")
    text_length = len(str(text.get("text", ""))) if isinstance(text, dict) else 0
    if block.get("type") == "section" and text_length > SECTION_TEXT_MAX:
        return True
    if block.get("type") == "header" and text_length > HEADER_TEXT_MAX:
        return True
    elements = block.get("elements")
    return block.get("type") == "context" and isinstance(elements, list) and len(elements) > CONTEXT_ELEMENTS_MAX


def _text_characters(node: object) -> int:
    """Characters of every text object in ``node`` (Block Kit JSON)."""
    if isinstance(node, dict):
        own = len(node["text"]) if isinstance(node.get("text"), str) else 0
        return own + sum(_text_characters(value) for value in node.values())
    if isinstance(node, list):
        return sum(_text_characters(value) for value in node)
    return 0


def message_limit_error(args: JsonDict) -> str | None:
    """The error Slack answers for a message (``text``, ``blocks``) over its limits, or ``None``."""
    if len(str(args.get("text") or "")) > MESSAGE_TEXT_MAX:
        return "msg_too_long"
    blocks = args.get("blocks")
    if not isinstance(blocks, list):
        return None
    if len(blocks) > MESSAGE_BLOCKS_MAX or any(block_problem(block) for block in blocks):
        return "invalid_blocks"
    return "msg_blocks_too_long" if _text_characters(blocks) > MESSAGE_BLOCKS_TEXT_MAX else None


def view_blocks_problem(blocks: object) -> bool:
    """Whether Slack refuses a view with ``blocks`` (not a list, too many, or one over its limit)."""
    return not isinstance(blocks, list) or len(blocks) > VIEW_BLOCKS_MAX or any(block_problem(b) for b in blocks)
