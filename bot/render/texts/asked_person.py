"""What an agent is told about a question it asked a person through the MCP server.

Through ``ask_person``, and Claude Code's ``AskUserQuestion`` through ``permission_prompt``.
"""

from collections.abc import Mapping
from typing import Any


def answered(question: Mapping[str, Any]) -> str:
    """An answered question: who answered (the answer itself is beside it)."""
    return f"Answered in Slack by {question.get('answered_by') or 'a person'}."


def not_answered(question: Mapping[str, Any]) -> str:
    """Why a question has no answer: it expired, or was withdrawn (the wait ran out, or its asker cancelled it)."""
    status = question["status"]
    asked = _quoted(question)
    if status == "expired":
        return f"The question{asked} expired in Slack without an answer. Do not assume one."
    reason = str((question.get("decision") or {}).get("reason") or "").rstrip(". ")
    why = f" ({reason})" if reason else ""
    return f"The question{asked} was withdrawn before anyone answered it{why}. Do not assume an answer."


def could_not_ask(error: object) -> str:
    """The API could not be reached, or refused the question (the error names the field)."""
    return f"Signoff could not ask the question: {error}"


def _quoted(question: Mapping[str, Any]) -> str:
    text = question.get("question")
    return f' "{text}"' if isinstance(text, str) and text else ""
