"""The decide script's spec (``decide.lua``): one click (or typed reply, or the clock) judged and recorded in one step.

``bot.store.approvals.decide_call`` turns an attempt into its keys and arguments (by the names below), and reads
its answer.
"""

from typing import Final

from bot.store.scripts.spec import TOO_LATE, script

__all__ = ["DECIDE", "TOO_LATE"]

DECIDE: Final = script(
    "decide",
    keys=(
        "approval_key",
        "open_set_key",
        "round_key",
        "votes_key",
        "discussion_key",
        "jobs_key",
        "outbox_due_key",
        "outbox_entries_key",
        "outbox_wake_key",
        "audit_key",
        "schedule_due_key",
        "schedule_steps_key",
        "open_index_key",
        "channel_open_key",
        "members_key",
        "edit_key",
        "open_by_key",
        "recent_by_key",
    ),
    args=("attempt_json", "decision_record"),
    more_keys=True,  # the user groups' cached members, then the signature's replay record
    more_args=True,  # the runs of other owners' records
    owners=("runs", "outbox", "jobs", "audit", "approval_index", "schedule"),
)
