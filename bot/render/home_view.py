"""The App Home tab as Block Kit: the viewer's queue, their standing approvals and recent decisions.

Pure: ``bot.flow.home_queue`` chooses what the viewer may see; this lays it out within the tab's 100 blocks,
saying how many more there are where a list is longer than the tab shows.
"""

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from bot.domain.grants import ListedGrant
from bot.domain.progress import Progress
from bot.domain.records import ApprovalRequest, Decision
from bot.domain.trusts import Trust
from bot.render import blocks, safe_text
from bot.render.action_ids import (
    REVOKE_GRANT_ACTION,
    REVOKE_TRUST_ACTION,
    revoke_button_value,
    revoke_trust_button_value,
)
from bot.render.questions import request_actions
from bot.render.texts import app_home, approval_request, questions, standing_approvals

QUEUE_BLOCKS: Final = 75  # 15 requests of 5 blocks (fewer when edited, 6): the tab's 100 with all the rest
RECENT_SHOWN: Final = 10
GRANTS_SHOWN: Final = 5  # a block each: 75 + 5 + 3 + 10, the headers and "more" lines stay under the tab's 100
TRUSTS_SHOWN: Final = 3
GRANT_BLOCK_PREFIX: Final = "signoff_grant_"
TRUST_BLOCK_PREFIX: Final = "signoff_trust_"


def home_view(
    *,
    queue: Sequence[tuple[ApprovalRequest, Progress]],
    recent: Sequence[tuple[ApprovalRequest, Decision]],
    now: datetime,
    grants: Sequence[ListedGrant] = (),
    trusts: Sequence[Trust] = (),
    queue_read_whole: bool = True,
) -> dict[str, Any]:
    """The ``views.publish`` view.

    Args:
        queue: What the viewer may decide now, oldest first, each with what happened to it so far.
        recent: Decisions the viewer could see, newest first.
        now: When the view is built (how long each request has waited).
        grants: The viewer's standing approvals, each with how often it was used.
        trusts: The tools trusted for the rest of a session that the viewer made, or that serve their requests.
        queue_read_whole: ``False`` when ``queue`` is only the oldest of more: the count of the rest is a floor.
    """
    view_blocks: list[dict[str, Any]] = [{"type": "header", "text": blocks.plain_text(app_home.HOME_QUEUE_TITLE)}]
    if not queue:
        view_blocks.append(blocks.section(app_home.home_queue_empty()))
    shown, used = 0, 0
    for waiting, progress in queue:
        entry = _queue_entry(waiting, progress, now=now)
        if used + len(entry) > QUEUE_BLOCKS:
            break
        view_blocks += entry
        shown, used = shown + 1, used + len(entry)
    if len(queue) > shown:
        hidden = app_home.home_more(len(queue) - shown, at_least=not queue_read_whole)
        view_blocks.append(blocks.context(hidden))
    view_blocks.append({"type": "header", "text": blocks.plain_text(app_home.HOME_GRANTS_TITLE)})
    if not grants and not trusts:
        view_blocks.append(blocks.context(app_home.home_grants_empty()))
    view_blocks += [_grant_entry(listed) for listed in grants[:GRANTS_SHOWN]]
    if len(grants) > GRANTS_SHOWN:
        view_blocks.append(blocks.context(app_home.home_more_grants(len(grants) - GRANTS_SHOWN)))
    view_blocks += [_trust_entry(trust) for trust in trusts[:TRUSTS_SHOWN]]
    if len(trusts) > TRUSTS_SHOWN:
        view_blocks.append(blocks.context(app_home.home_more_grants(len(trusts) - TRUSTS_SHOWN)))
    view_blocks.append({"type": "header", "text": blocks.plain_text(app_home.HOME_RECENT_TITLE)})
    if not recent:
        view_blocks.append(blocks.section(app_home.home_recent_empty()))
    for asked, decision in recent[:RECENT_SHOWN]:
        request, _edited_by = blocks.as_shown(asked, decision=decision)  # the input that ran, not the one asked
        line = app_home.home_recent_line(request, decision, _compact_arguments(request))
        view_blocks.append(blocks.context(line))
    return {"type": "home", "blocks": view_blocks}


def _queue_entry(waiting: ApprovalRequest, progress: Progress, *, now: datetime) -> list[dict[str, Any]]:
    """One request of the queue, as its message shows it: the input a click would approve, and any edit of it."""
    request, edited_by = blocks.as_shown(waiting, progress=progress)
    entry: list[dict[str, Any]] = []
    if request.asks:
        entry.append(blocks.section(questions.question_intro(request)))
        entry.append(blocks.section(questions.question_text(request)))
    else:
        entry.append(blocks.section(approval_request.request_intro(request, request.tool)))
        entry.append(blocks.arguments_block(request))
    if request is not waiting:
        entry.append(blocks.section(blocks.edited_section(waiting.tool_input, request.tool_input, edited_by=edited_by)))
    status = app_home.home_item_status(request, now=now, level=progress.level, taken_by=progress.claimed_by)
    warning = [approval_request.HIDDEN_CHARACTERS_WARNING] if blocks.has_hidden_characters(request) else []
    entry.append(blocks.context(status, *warning))
    entry.append(request_actions(request))
    entry.append({"type": "divider"})
    return entry


def _compact_arguments(request: ApprovalRequest) -> str:
    """The call's arguments on one line, as inline code (a recent decision on App Home): escaped and bounded."""
    shown: Any = request.tool_input if request.tool is not None else [call.input for call in request.calls]
    return safe_text.code_inline(_compact_json(shown), safe_text.MAX_INLINE_ARGUMENTS)


def _compact_json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (RecursionError, ValueError, TypeError):
        return approval_request.UNDISPLAYABLE


def _grant_entry(listed: ListedGrant) -> dict[str, Any]:
    """A standing approval on App Home: what it covers, where, until when (or that it is being revoked), and Revoke."""
    grant = listed.grant
    arguments = safe_text.code_inline(_compact_json(grant.tool_input), safe_text.MAX_INLINE_ARGUMENTS)
    if grant.fields:
        arguments += standing_approvals.ANY_OTHER_ARGUMENTS
    text = standing_approvals.grant_line(
        tool=grant.tool,
        arguments=arguments,
        channel_id=grant.channel_id,
        requester=grant.requester,
        until=grant.expires_at,
        uses=listed.uses,
    )
    if listed.revoking:
        text += standing_approvals.GRANT_REVOKING
    value = revoke_button_value(grant.team_id, grant.channel_id, grant.grant_id)
    revoke = blocks.button(REVOKE_GRANT_ACTION, standing_approvals.REVOKE_LABEL, value, "danger")
    return {**blocks.section(text), "block_id": f"{GRANT_BLOCK_PREFIX}{grant.grant_id}", "accessory": revoke}


def _trust_entry(trust: Trust) -> dict[str, Any]:
    """A tool trusted for the rest of a session, on App Home, with a Revoke button."""
    text = standing_approvals.trust_line(
        tool=trust.tool,
        channel_id=trust.channel_id,
        thread_ts=trust.thread_ts,
        trusted_by=trust.trusted_by,
        since=trust.trusted_at,
    )
    value = revoke_trust_button_value(trust.session_id, trust.tool)
    revoke = blocks.button(REVOKE_TRUST_ACTION, standing_approvals.REVOKE_LABEL, value, "danger")
    block_id = f"{TRUST_BLOCK_PREFIX}{trust.approval_id}"
    return {**blocks.section(text), "block_id": block_id, "accessory": revoke}
