"""What a person does to a request without deciding it: Take it ("I'm on it"), or open its discussion.

Each queues its own Slack side effects here, as the decide script queues a decision's: a Take updates the approval
message (who took it, until when), a Discuss posts the prompt in the request's thread.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.domain.status import Status
from bot.flow.access import Origin
from bot.flow.base import Flow
from bot.flow.outcomes import Outcome
from bot.render.texts import thread_posts
from bot.store.queues.outbox import Outbox, post_message, update_approval


@dataclass(frozen=True)
class Taken:
    """What a Take came to: ``until`` when it was recorded (the ladder waits until then), else why not."""

    outcome: Outcome
    until: datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Attending(Flow):
    """Take and Discuss: who may is the judge's (``DecisionService``), what follows is queued here."""

    outbox: Outbox

    def take(self, approval_id: str, *, user_id: str, origin: Origin, session_id: str | None = None) -> Taken:
        """Pause the escalation ladder for the policy's claim pause and show who took the request.

        ``session_id``: the approval's session, when the button names it (else it is looked up: a round trip more).
        """
        outcome = self.decisions.claim(approval_id, user_id=user_id, origin=origin, session_id=session_id)
        request = outcome.request
        if outcome.status is not Status.CLAIMED or request is None:
            return Taken(outcome)
        self.outbox.send_later(update_approval(request.session_id, request.approval_id))
        return Taken(outcome, until=self.clock() + timedelta(seconds=request.policy.claim_pause_s or 0))

    def discuss(
        self, approval_id: str, *, user_id: str, origin: Origin, session_id: str | None = None
    ) -> Outcome | None:
        """Prompt the discussion in the request's thread; ``None`` when it was, else the refusal.

        ``session_id``: as for ``take``.
        """
        approval, refusal = self.decisions.find_checked(
            approval_id, user_id=user_id, action="discuss", origin=origin, session_id=session_id
        )
        if approval is None or refusal is not None:
            return refusal or Outcome(Status.UNKNOWN)
        request = approval.request
        prompt = post_message(
            request.channel_id,
            thread_posts.discussion_prompt(user_id),
            team_id=request.team_id,
            thread_ts=request.thread_ts,
        )
        self.outbox.send_later(prompt)
        return None
