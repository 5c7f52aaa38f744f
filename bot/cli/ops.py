"""Operator commands for a 3 a.m. look at a running bot (both need ``REDIS_URL``).

- ``python -m bot pending``: every session stopped on approvals, oldest first, with each open
  request (tool, requester, age, escalation level, claim), then the approvals quarantined
  because their stored data cannot be read back. A session whose round cannot be read is named
  on stderr and skipped. Stored text is printed with hidden and terminal-control characters
  spelled out (``⟨U+202E⟩``): an agent's tool name must not rewrite the operator's screen.
- ``python -m bot resume <session id>``: queue the resume of a session whose approvals are all
  decided but whose resume was given up (after a long outage, say). Refused otherwise, and
  when the session's records cannot be read back.
"""

import argparse
import sys
from datetime import UTC, datetime

import redis

from bot import preflight
from bot.cli.exits import fail
from bot.render import safe_text
from bot.settings import read_settings
from bot.store.approvals.approval_record import ApprovalDataError
from bot.store.approvals.approvals import ApprovalStore
from bot.store.queues.jobs import JobQueue, ResumeJob
from state.store import SessionStore, keys_for


def _session_id(text: str) -> str:
    """A session id the store can name: refused before Redis is asked, not as a traceback from the key builder."""
    try:
        keys_for(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"not a session id: {error}") from None
    return text


def main(argv: list[str]) -> int:
    """Run ``pending`` or ``resume``; return the exit status (1 when a resume is refused)."""
    parser = argparse.ArgumentParser(prog="python -m bot", description="Operator commands.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("pending", help="list the sessions waiting for approvals")
    resume = commands.add_parser("resume", help="queue the resume of a fully decided session")
    resume.add_argument("session_id", type=_session_id)
    args = parser.parse_args(argv)
    settings = read_settings()
    client = preflight.operator_redis(settings, unset="REDIS_URL is not set: point it at the bot's Redis")
    if args.command == "pending":
        return _pending(client)
    return _resume(client, args.session_id)


def _pending(client: redis.Redis) -> int:
    approvals = ApprovalStore(client)
    now = datetime.now(UTC)
    sessions = SessionStore(client).interrupted_sessions()
    for session_id in sessions:
        try:
            _version, round_approvals = approvals.round_approvals(session_id, readable_only=True)
        except ApprovalDataError as error:
            print(f"signoff: skipped: {_line(str(error))}", file=sys.stderr)
            continue
        print(_line(session_id))
        for approval in round_approvals:
            request = approval.request
            minutes = int((now - request.created_at).total_seconds() // 60)
            state = f"decided: {approval.decision.decision}" if approval.decision else "open"
            extra = [f"level {approval.level}"] if approval.level else []
            extra += [f"claimed by {approval.claimed_by}"] if approval.claimed_by else []
            print(
                _line(
                    f"  {request.approval_id}  {request.tool or request.interrupt_name}  by {request.requested_by}"
                    f"  {minutes} min  {state}" + "".join(f"  {item}" for item in extra)
                )
            )
    quarantined = approvals.quarantined()
    if quarantined:
        print("quarantined (stored data unreadable; the records are left in place):")
    for approval_id, note in quarantined.items():
        print(_line(f"  {approval_id}  session {note.get('session_id')}  {note.get('why')}"))
    print(f"{len(sessions)} session(s) waiting", file=sys.stderr)
    if quarantined:
        print(f"{len(quarantined)} approval(s) quarantined", file=sys.stderr)
    return 0


def _resume(client: redis.Redis, session_id: str) -> int:
    try:
        version, round_approvals = ApprovalStore(client).round_approvals(session_id)
    except ApprovalDataError as error:
        return fail(f"not resumed, the session's records cannot be read back: {_line(str(error))}", status=1)
    if not round_approvals:
        return fail(f"session {session_id!r} has no approval round", status=1)
    undecided = [approval.request.approval_id for approval in round_approvals if approval.decision is None]
    if undecided:
        return fail(f"{len(undecided)} approval(s) still open: {', '.join(undecided)}", status=1)
    JobQueue(client).enqueue(ResumeJob(session_id, version))
    print(f"resume of {session_id} at version {version} queued; a worker picks it up", file=sys.stderr)
    return 0


def _line(text: str) -> str:
    """``text`` for one line of a terminal: hidden and control characters spelled out, line breaks too."""
    return safe_text.reveal(text).replace("\n", "⟨U+000A⟩").replace("\t", "⟨U+0009⟩")
