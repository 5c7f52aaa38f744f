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
    # The attempt, a field an argument (``decide_call._attempt_args``: flags "1" or "0", lists as JSON), then the
    # decision record: no JSON object made in Python only for the script to decode it whole on every click.
    args=(
        "attempt_approval_id",
        "attempt_kind",
        "attempt_user",
        "attempt_team_id",
        "attempt_channel_id",
        "attempt_checks",
        "origin_surface",
        "origin_team_id",
        "origin_user_team_id",
        "origin_channel_id",
        "origin_ts",
        "origin_thread_ts",
        "attempt_reason_given",
        "attempt_written_at",
        "attempt_quorum",
        "attempt_groups",
        "attempt_replay",
        "attempt_replay_ttl_s",
        "attempt_recent_kept",
        "attempt_decided_stamp",
        "attempt_with_request",
        "attempt_shown",
        "attempt_trust",
        "attempt_answer_kind",
        "attempt_choices",
        "attempt_answer_by_ms",
        "attempt_check",
        "attempt_grant",
        "decision_record",
    ),
    more_keys=True,  # the user groups' cached members, then the signature's replay record
    more_args=True,  # the runs of other owners' records
    owners=("runs", "outbox", "jobs", "audit", "approval_index", "schedule"),
)
