"""Block Kit rendering: pure functions from records to message and view payloads.

No I/O and no clock: every time shown comes from the records. Every text is bounded by Block
Kit's limits (truncated with an explicit marker, never inside a code fence or an escape), and
user-controlled text is escaped (see ``bot.render.safe_text``).
"""

import json
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agent.approval import refusal_text
from agent.attempts import is_rerun_interrupt
from bot.domain.edits import Change, input_changes
from bot.domain.progress import Progress
from bot.domain.records import ApprovalRequest, Decision
from bot.domain.storable_json import truncation_marker
from bot.render import controls, safe_text
from bot.render.action_ids import DENY_MODAL_CALLBACK, DENY_REASON_BLOCK, DENY_REASON_INPUT
from bot.render.block_kit import button, context, plain_text, section
from bot.render.controls import ACTIONS_BLOCK_PREFIX, actions_block_id, checked_approval_id
from bot.render.texts import approval_request, questions, thread_posts

__all__ = [
    "ACTIONS_BLOCK_PREFIX",
    "DECISION_BLOCK_PREFIX",
    "MAX_BLOCKS",
    "SECTION_TEXT_MAX",
    "actions_block_id",
    "agent_reply_blocks",
    "agent_reply_messages",
    "approval_id_shown",
    "approval_message",
    "button",
    "checked_approval_id",
    "context",
    "deny_modal",
    "has_hidden_characters",
    "modal_errors",
    "plain_text",
    "refusal_accounts",
    "section",
]

SECTION_TEXT_MAX: Final = 3000
MAX_BLOCKS: Final = 50
# Slack refuses a message whose blocks carry more than about 12,000 characters in all
# (msg_blocks_too_long), whatever each block's own limit: a long answer is several messages.
MESSAGE_BLOCKS_TEXT_MAX: Final = 12_000
REPLY_SECTIONS_PER_MESSAGE: Final = 3  # three full sections (9,000 characters) stay well under it
MAX_REPLY_MESSAGES: Final = 10
DENY_REASON_MAX: Final = 2000
MODAL_ERROR_MAX: Final = 300
DECISION_BLOCK_PREFIX: Final = "signoff_decision:"
_CHANGED_VALUE_MAX: Final = 200  # a changed value, shown on one line

FENCE: Final = "```"
_CLOSE: Final = "\n" + FENCE


# ---------------------------------------------------------------- text shaping


def decision_block_id(approval_id: str) -> str:
    """The block id of a decided approval's outcome (keeps the message findable once its buttons are gone)."""
    return DECISION_BLOCK_PREFIX + checked_approval_id(approval_id)


def approval_id_shown(message: Mapping[str, Any], *, live: bool = False) -> str | None:
    """The approval id a posted approval message shows, read back from its block ids (``None`` for other messages).

    ``live``: only while the message still shows its buttons (not once decided).
    """
    prefixes = (ACTIONS_BLOCK_PREFIX,) if live else (ACTIONS_BLOCK_PREFIX, DECISION_BLOCK_PREFIX)
    for block in message.get("blocks") or []:
        block_id = str(block.get("block_id", ""))
        for prefix in prefixes:
            if block_id.startswith(prefix):
                return block_id.removeprefix(prefix)
    return None


def _defang_fences(code: str) -> str:
    """Break every run of backticks with zero-width spaces: code can never close our fence."""
    return code.replace("``", "`\u200b`").replace("``", "`\u200b`")


def _pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (RecursionError, ValueError, TypeError):
        return approval_request.UNDISPLAYABLE


def code_section(label: str, code: str) -> str:
    """``label`` then ``code`` in a fence, within one section; the marker comes after the closed fence."""
    code = _defang_fences(safe_text.reveal(code))
    head = f"{label}\n{FENCE}\n"
    room = SECTION_TEXT_MAX - len(head) - len(_CLOSE)
    body, omitted = safe_text.fit_escaped(code, room)
    if not omitted:
        return head + body + _CLOSE
    marker_room = len(truncation_marker(len(code))) + 1
    body, omitted = safe_text.fit_escaped(code, room - marker_room)
    return f"{head}{body}{_CLOSE}\n{truncation_marker(omitted)}"


def _break_point(text: str, room: int) -> int:
    """Where to cut ``text`` (longer than ``room``).

    At a newline or space if one is near, never inside an escape, a backtick run or a visible character.
    """
    cut = room
    for separator in ("\n", " "):
        found = text.rfind(separator, room // 2, room)
        if found != -1:
            cut = found + 1
            break
    amp = text.rfind("&", max(cut - 4, 0), cut)
    if amp != -1 and ";" not in text[amp:cut]:
        cut = amp
    while cut > 1 and text[cut - 1] == "`" and text[cut] == "`":
        cut -= 1
    return safe_text.safe_cut(text, cut) if cut > 1 else room


def _split_mrkdwn(text: str, max_pieces: int) -> list[str]:
    """Split mrkdwn into section texts (≤ 3000 characters, ≤ ``max_pieces`` of them).

    A code fence open at a cut is closed there and reopened in the next piece. Text beyond the
    last piece is dropped with the truncation marker.
    """
    pieces: list[str] = []
    rest = text
    in_fence = False
    while rest and len(pieces) < max_pieces:
        head = FENCE + "\n" if in_fence else ""
        room = SECTION_TEXT_MAX - len(head) - len(_CLOSE)
        last = len(pieces) == max_pieces - 1
        marker_room = len(truncation_marker(len(rest))) + 1 if last and len(rest) > room else 0
        room -= marker_room
        cut = len(rest) if len(rest) <= room else _break_point(rest, room)
        chunk, rest = rest[:cut].rstrip("\n"), rest[cut:]
        in_fence ^= chunk.count(FENCE) % 2 == 1
        piece = head + chunk + (_CLOSE if in_fence and rest else "")
        if marker_room and rest:
            piece += "\n" + truncation_marker(len(rest))
            rest = ""
        if piece.strip():
            pieces.append(piece)
    return pieces


# ---------------------------------------------------------------- payloads


def _reason_section(request: ApprovalRequest) -> str | None:
    reason = request.reason
    if reason is None or reason == "":
        return None
    if isinstance(reason, str):
        label = approval_request.REASON_LABEL
        return f"{label}\n{safe_text.clip(reason, SECTION_TEXT_MAX - len(label) - 1)}"
    describes_the_call = (
        isinstance(reason, dict)
        and set(reason) <= {"tool", "input", "toolUseId", "policy", "response", "attempts", "inputSchema"}
        and reason.get("policy") in (None, request.policy.name)
        and reason.get("tool") == request.tool
        and reason.get("input") == request.tool_input
    )
    if describes_the_call:  # the tool gate's own description: already shown above
        return None
    return code_section(approval_request.REASON_LABEL, _pretty_json(reason))


def has_hidden_characters(request: ApprovalRequest) -> bool:
    """Whether anything the agent or requester supplied holds characters that ``safe_text.reveal`` makes visible."""
    names = (request.tool or "", request.interrupt_name, *(call.tool for call in request.calls))
    if any(safe_text.reveal_inline(name) != name for name in names):
        return True  # names are shown on one line: a newline in one is spelled out too
    reason = request.reason if isinstance(request.reason, str) else _pretty_json(request.reason)
    supplied = (
        request.requested_by,
        _pretty_json(request.tool_input),
        _pretty_json([{"tool": call.tool, "input": call.input} for call in request.calls]),
        reason,
    )
    return any(safe_text.has_hidden(text) for text in supplied)


def approval_message(
    request: ApprovalRequest, *, decision: Decision | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """The approval message: ``{"text": fallback, "blocks": [...]}`` for chat.postMessage / chat.update.

    Undecided, it ends with Approve / Deny / Discuss buttons (values: ``action_ids.button_value``). Decided,
    the buttons are replaced by the outcome and the number of discussion replies.
    """
    approval_id = checked_approval_id(request.approval_id)
    original = request
    request, edited_by = as_shown(request, decision=decision, progress=progress)
    tools = request.tool or ", ".join(dict.fromkeys(call.tool for call in request.calls)) or None
    blocks = [
        {"type": "header", "text": plain_text(approval_request.approval_header(tools))},
        section(approval_request.request_intro(request, tools)),
    ]
    if is_rerun_interrupt(request.interrupt_name):
        blocks.append(section(approval_request.rerun_warning()))
    if has_hidden_characters(request):
        blocks.append(context(approval_request.HIDDEN_CHARACTERS_WARNING))
    blocks.append(arguments_block(request))
    if request is not original:
        blocks.append(section(edited_section(original.tool_input, request.tool_input, edited_by=edited_by)))
    reason = _reason_section(original)
    if reason is not None:
        blocks.append(section(reason))
    facts = [approval_request.policy_line(request.policy), approval_request.requested_at(request.created_at)]
    if decision is None:
        if request.expires_at is not None:
            facts.append(approval_request.expires(request.expires_at))
        blocks.append(context(*facts))
        status = _progress_lines(request, progress or Progress())
        if status:
            blocks.append(context(*status))
        blocks.append(controls.approval_actions(request))
    else:
        blocks.append(context(*facts))
        blocks.append(
            {**section(approval_request.decision_status(decision)), "block_id": decision_block_id(approval_id)}
        )
        quote = questions.answer_quote(decision)  # answered in words instead of decided
        if quote is not None:
            blocks.append(section(quote))
        blocks.append(context(approval_request.discussion_count(len(decision.discussion))))
    return {"text": approval_request.approval_fallback(request, decision), "blocks": blocks}


def arguments_block(request: ApprovalRequest) -> dict[str, Any]:
    """What the request would run, within a section's limit.

    The call's arguments (or the batch's calls), escaped, hidden characters shown; or a note that the tool could not be
    determined.
    """
    if request.tool is not None or request.tool_input is not None:
        return section(code_section(approval_request.ARGUMENTS_LABEL, _pretty_json(request.tool_input)))
    if request.calls:
        batch = [{"tool": call.tool, "input": call.input} for call in request.calls]
        return section(code_section(approval_request.CALLS_LABEL, _pretty_json(batch)))
    return context(approval_request.tool_unknown(request.interrupt_name))


# ---------------------------------------------------------------- an approver's edit


def as_edited(request: ApprovalRequest, edited_input: Any, digest: str | None) -> ApprovalRequest:
    """``request`` as it now waits: the edited input, named by its digest.

    Never covered by a standing approval (those are for calls as agents send them): its Approve + allow buttons are
    gone.
    """
    return request.model_copy(update={"tool_input": edited_input, "input_digest": digest, "call_digest": None})


def as_shown(
    request: ApprovalRequest, *, decision: Decision | None = None, progress: Progress | None = None
) -> tuple[ApprovalRequest, str]:
    """``request`` with the input a click approves now (or, decided, the input approved), and who edited it.

    ``request`` itself and ``""`` when nobody edited it.
    """
    edit = (progress or Progress()).edit if decision is None else None
    if edit is not None:
        return as_edited(request, edit.input, edit.digest), edit.edited_by
    if decision is not None and decision.updated_input is not None:
        return as_edited(request, decision.updated_input, None), decision.edited_by or ""
    return request, ""


def edited_section(original: Any, edited: Any, *, edited_by: str) -> str:
    """Who edited the call and what changed, leaf by leaf (``-`` before, ``+`` after), in a code block."""
    lines = [line for change in input_changes(original, edited) for line in _change_lines(change)]
    return code_section(approval_request.edited_by(edited_by), "\n".join(lines) or approval_request.NOTHING_CHANGED)


def _change_lines(change: Change) -> list[str]:
    before, after = f"- {change.path}: {_one_line(change.before)}", f"+ {change.path}: {_one_line(change.after)}"
    if change.kind == "removed":
        return [before]
    if change.kind == "added":
        return [after]
    return [before, after]


def _one_line(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError, TypeError):
        return approval_request.UNDISPLAYABLE
    return text if len(text) <= _CHANGED_VALUE_MAX else text[: _CHANGED_VALUE_MAX - 1] + "…"


def _progress_lines(request: ApprovalRequest, progress: Progress) -> list[str]:
    lines = []
    if request.policy.quorum > 1:
        lines.append(approval_request.votes_so_far(len(progress.votes), request.policy.quorum, progress.votes))
    if progress.claimed_by and progress.claimed_until:
        lines.append(approval_request.taken(progress.claimed_by, progress.claimed_until))
    if progress.level:
        lines.append(approval_request.escalation_level(progress.level))
    return lines


def deny_modal(
    request: ApprovalRequest, *, reason_required: bool, private_metadata: str | None = None, external_id: str = ""
) -> dict[str, Any]:
    """The deny view (views.open); its private metadata names the approval (by default, its id alone)."""
    approval_id = checked_approval_id(request.approval_id)
    view: dict[str, Any] = {
        "type": "modal",
        "callback_id": DENY_MODAL_CALLBACK,
        "private_metadata": approval_id if private_metadata is None else private_metadata,
        "title": plain_text(approval_request.DENY_MODAL_TITLE),
        "submit": plain_text(approval_request.DENY_MODAL_SUBMIT),
        "close": plain_text(approval_request.DENY_MODAL_CLOSE),
        "blocks": [
            section(approval_request.deny_modal_intro(request)),
            *([context(approval_request.HIDDEN_CHARACTERS_WARNING)] if has_hidden_characters(request) else []),
            {
                "type": "input",
                "block_id": DENY_REASON_BLOCK,
                "optional": not reason_required,
                "label": plain_text(approval_request.deny_reason_label(reason_required)),
                "element": {
                    "type": "plain_text_input",
                    "action_id": DENY_REASON_INPUT,
                    "multiline": True,
                    "max_length": DENY_REASON_MAX,
                    "placeholder": plain_text(approval_request.DENY_REASON_PLACEHOLDER),
                },
            },
        ],
    }
    if external_id:
        view["external_id"] = external_id
    return view


def modal_errors(reason_problem: str) -> dict[str, Any]:
    """A view-submission answer showing ``reason_problem`` under the reason input: ``ack(**modal_errors(...))``."""
    return {"response_action": "errors", "errors": {DENY_REASON_BLOCK: modal_error_text(reason_problem)}}


def modal_error_text(problem: str) -> str:
    """A form error as Slack shows it under an input: plain text within its limit."""
    return safe_text.clip_plain(problem, MODAL_ERROR_MAX)


def agent_reply_blocks(text: str, accounts: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The agent's raw text, revealed and escaped, as section blocks (≤ 3000 characters each).

    At most ``REPLY_SECTIONS_PER_MESSAGE * MAX_REPLY_MESSAGES`` of them: beyond, the text is cut
    with the truncation marker. ``accounts``: see ``thread_posts.agent_reply``.
    """
    reply = thread_posts.agent_reply(text, accounts)
    pieces = _split_mrkdwn(reply, REPLY_SECTIONS_PER_MESSAGE * MAX_REPLY_MESSAGES)
    return [section(piece) for piece in pieces]


def refusal_accounts(decisions: Iterable[Decision]) -> dict[str, str]:
    """What each refused call of ``decisions`` told its model, with what people read in its place."""
    return {
        refusal_text(decision): thread_posts.refusal_account(decision)
        for decision in decisions
        if decision.decision != "approve"
    }


def agent_reply_messages(text: str, accounts: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The agent's raw text as messages to post in this order: ``[{"text": fallback, "blocks": [...]}, ...]``.

    Each is within Slack's limits (3000 characters a section, ``MESSAGE_BLOCKS_TEXT_MAX`` in all).
    ``accounts``: see ``thread_posts.agent_reply``.
    """
    sections = agent_reply_blocks(text, accounts)
    step = REPLY_SECTIONS_PER_MESSAGE
    return [
        {"text": sections[start]["text"]["text"], "blocks": sections[start : start + step]}
        for start in range(0, len(sections), step)
    ]
