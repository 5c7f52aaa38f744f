"""The App Home tab: the viewer's queue (what they may decide now, oldest first) and recent decisions.

A person sees only what they may decide (the request's policy allows them and they are in its
channel, or were sent a copy) and decisions they could already see (their channel's, or ones
they requested, decided or were sent).

``render_home`` is pure; ``HomeTab`` gathers what it needs (open approvals, who may decide them,
the latest decisions) and is called when a person opens the tab and after every change that
can alter a queue.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from bot.domain.clock import Clock, system_clock
from bot.domain.grants import Grant
from bot.flow.decisions import DecisionService
from bot.flow.grants import GrantFlow
from bot.render import blocks, messages
from bot.store.approval_record import Approval
from bot.store.approvals import ApprovalStore
from bot.store.decide_call import RECENT_KEPT

QUEUE_SHOWN: Final = 15  # 5 blocks each: within the tab's 100 blocks, with the headers and recent decisions
RECENT_SHOWN: Final = 10
GRANTS_SHOWN: Final = 5  # a block each: 75 + 6 + 10 + the headers stay under the tab's 100 blocks


def progress_of(approval: Approval) -> blocks.Progress:
    """What a pending approval's message shows besides the request."""
    until = (
        datetime.fromtimestamp(approval.claimed_until_ms / 1000, approval.request.created_at.tzinfo)
        if approval.claimed_until_ms is not None
        else None
    )
    return blocks.Progress(
        votes=tuple(sorted(approval.votes)),
        claimed_by=approval.claimed_by,
        claimed_until=until,
        level=approval.level,
        edit=approval.edit,
    )


def render_home(
    *,
    queue: Sequence[Approval],
    recent: Sequence[Approval],
    now: datetime,
    grants: Sequence[tuple[Grant, int]] = (),
) -> dict[str, Any]:
    """The ``views.publish`` view; ``grants``: the viewer's standing approvals, with how often each was used."""
    view_blocks: list[dict[str, Any]] = [{"type": "header", "text": blocks.plain_text(messages.HOME_QUEUE_TITLE)}]
    if not queue:
        view_blocks.append(blocks.section(messages.home_queue_empty()))
    for approval in queue[:QUEUE_SHOWN]:
        request, edit = approval.request, approval.edit
        if edit is not None:  # what a click would approve: the input as edited
            request = blocks.as_edited(request, edit.input, edit.digest)
        progress = progress_of(approval)
        view_blocks.append(blocks.section(messages.request_intro(request, request.tool)))
        view_blocks.append(blocks.arguments_block(request))  # what a click would run, as the message shows it
        status = messages.home_item_status(request, now=now, level=progress.level, claimed_by=progress.claimed_by)
        warning = [messages.HIDDEN_CHARACTERS_WARNING] if blocks.has_hidden_characters(request) else []
        view_blocks.append(blocks.context(status, *warning))
        view_blocks.append(blocks.approval_actions(request))
        view_blocks.append({"type": "divider"})
    if len(queue) > QUEUE_SHOWN:
        view_blocks.append(blocks.context(messages.home_more(len(queue) - QUEUE_SHOWN)))
    view_blocks.append({"type": "header", "text": blocks.plain_text(messages.HOME_GRANTS_TITLE)})
    if not grants:
        view_blocks.append(blocks.context(messages.home_grants_empty()))
    view_blocks += [blocks.grant_entry(grant, uses) for grant, uses in grants[:GRANTS_SHOWN]]
    if len(grants) > GRANTS_SHOWN:
        view_blocks.append(blocks.context(messages.home_more_grants(len(grants) - GRANTS_SHOWN)))
    view_blocks.append({"type": "header", "text": blocks.plain_text(messages.HOME_RECENT_TITLE)})
    if not recent:
        view_blocks.append(blocks.section(messages.home_recent_empty()))
    for approval in recent[:RECENT_SHOWN]:
        if approval.decision is not None:
            request, arguments = approval.request, blocks.compact_arguments(approval.request)
            view_blocks.append(blocks.context(messages.home_recent_line(request, approval.decision, arguments)))
    return {"type": "home", "blocks": view_blocks}


class HomeTab:
    """Builds a person's App Home from Redis."""

    def __init__(
        self,
        *,
        approvals: ApprovalStore,
        decisions: DecisionService,
        grants: GrantFlow,
        clock: Clock = system_clock,
    ) -> None:
        """Keep the collaborators."""
        self._approvals = approvals
        self._decisions = decisions
        self._grants = grants
        self._clock = clock

    def view_for(self, user_id: str) -> dict[str, Any]:
        """The home view of ``user_id``: requests they may decide now, and recent decisions they could see."""
        queue = []
        for approval_id in self._approvals.open_everywhere():
            approval = self._approvals.find_readable(approval_id)
            if approval is None or approval.decision is not None or user_id in approval.votes:
                continue
            allowed, _refusal = self._decisions.may_decide(approval, user_id=user_id)
            if allowed:
                queue.append(approval)
        recent = []
        for approval_id in self._approvals.recent_decisions(limit=RECENT_KEPT):
            approval = self._approvals.find_readable(approval_id)
            if approval is not None and self._decisions.may_see(approval, user_id=user_id):
                recent.append(approval)
                if len(recent) == RECENT_SHOWN:
                    break
        grants = self._grants.live_for(user_id)
        return render_home(queue=queue, recent=recent, now=self._clock(), grants=grants)
