"""What became of an attempt on an approval: one vocabulary from the decide script to the person's answer.

The scripts in ``bot.store.scripts`` return these values, ``bot.flow.decisions`` reports them, and
``bot.render.messages.outcome_text`` says them to the person (a table, one entry per status).
"""

from enum import StrEnum


class Status(StrEnum):
    """Why an attempt was recorded, or why not."""

    DECIDED = "decided"
    """This attempt decided the approval."""
    VOTE = "vote"
    """Counted toward the quorum; more approvals are needed."""
    VOTED = "voted"
    """This person already voted."""
    ALREADY = "already"
    """A decision stands (its record comes along)."""
    UNKNOWN = "unknown"
    """No such approval, or its round is over."""
    UNSEEN = "unseen"
    """A typed reply written before the approval message was posted."""
    NO_ROUND = "no_round"
    """The approval's round is gone (internal: reported as unknown)."""
    NEEDS = "needs"
    """The decide script needs something first (a cold cache, the request's place): internal, never shown."""
    UNREADABLE = "unreadable"
    """The stored approval cannot be read back (internal: raised as an error)."""
    REPLAYED = "replayed"
    """The signed request was sent before: nothing changed (the edge answers 409)."""
    NOT_AN_APPROVER = "not_an_approver"
    SELF_APPROVAL = "self_approval"
    WRONG_WORKSPACE = "wrong_workspace"
    WRONG_PLACE = "wrong_place"
    NOT_A_MEMBER = "not_a_member"
    REASON_REQUIRED = "reason_required"
    UNAVAILABLE = "unavailable"
    """Who may decide could not be resolved (Slack did not answer)."""
    CLAIMED = "claimed"
    NO_CLAIMS = "no_claims"
    """The request's policy has no claim pause."""
