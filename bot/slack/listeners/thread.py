"""Replies in a thread with open approvals: kept as discussion, or a typed decision (``bot.flow.replies``)."""

from slack_bolt import App

from bot.domain.records import session_id_for
from bot.flow.decisions import DecisionService
from bot.flow.replies import Reply, ThreadReplies, TypedDecision
from bot.render.texts import answers, questions
from bot.slack.edge.payloads import EventCallback, MessageEvent
from bot.slack.listeners.feedback import outcome_text, reply_origin, tell
from bot.store.approvals.approvals import ApprovalStore
from bot.store.event_deliveries import EventDeliveries
from bot.store.queues.outbox import Outbox


def register(
    app: App,
    *,
    approvals: ApprovalStore,
    decisions: DecisionService,
    event_deliveries: EventDeliveries,
    outbox: Outbox,
) -> None:
    """Add the thread listener to ``app``."""
    replies = ThreadReplies(approvals=approvals, decisions=decisions)

    def on_message(body: EventCallback, event: MessageEvent) -> None:
        thread_ts = event.get("thread_ts")
        if not thread_ts or event.get("bot_id") or event.get("subtype") or "user" not in event:
            return
        if not event_deliveries.first(body.get("event_id") or f"{event['channel']}:{event['ts']}"):
            return  # Slack redelivered it: the reply is already with the approvals
        team_id = str(body.get("team_id") or event.get("team", ""))
        user, channel = event["user"], event["channel"]
        typed = replies.take(
            Reply(
                session_id=session_id_for(team_id, channel, thread_ts),
                user_id=user,
                text=event.get("text", ""),
                written_at=event["ts"],
                origin=reply_origin(body, event),
            )
        )
        answer = _typed_feedback(typed) if typed is not None else None
        if answer:
            tell(outbox, team_id=team_id, channel=channel, user=user, text=answer, thread_ts=thread_ts)

    app.event("message")(on_message)


def _typed_feedback(typed: TypedDecision) -> str | None:
    """Why a typed decision decided nothing, or the request it decided (or voted on); otherwise the usual refusal."""
    outcome = typed.outcome
    if outcome is None:
        return answers.several_open() if typed.seen else answers.typed_decision_unseen()
    if outcome.status == "unseen":
        return answers.typed_decision_unseen()
    request = outcome.request
    if request is not None and outcome.status == "decided" and typed.kind == "answer":
        return questions.answer_sent(request)
    if request is not None and outcome.status == "decided":
        return answers.typed_decision_applied(typed.kind, request)
    if request is not None and outcome.status == "vote":
        return answers.typed_vote_counted(request, outcome.votes, request.policy.quorum)
    return outcome_text(outcome)
