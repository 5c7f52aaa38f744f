"""Policy-file sections that act over time: quorum aside, the escalation ladder, claims, reminders, expiry.

escalation:
  levels:
    - after: 15m                       # from the request
      targets: {usergroups: [S0614TZR7]}
    - after: 30m                       # from the previous level
      targets: {rotation: primary}     # the rotation's current on-call person (DMed)
  repeat: 1                            # walk the whole ladder once more
claim: {pause: 30m}                    # "I'm looking": pauses the ladder
reminders: {every: 10m}                # a nudge in the thread while pending
expiry: {after: 4h, outcome: deny}     # deny | keep | approve (approve: low_risk rules only)
expiry: never                          # waits until decided; unset: DEFAULT_EXPIRY, then denied as expired
"""

from typing import Annotated, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidatorFunctionWrapHandler, WrapValidator
from pydantic_core import PydanticCustomError

from bot.domain.durations import Seconds
from bot.domain.policy.required import at_least_one
from bot.domain.slack_ids import UsergroupId, UserId


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Targets(_Section):
    """Who an escalation level notifies: users, user groups and/or a rotation's on-call person."""

    users: tuple[UserId, ...] = ()
    """Users the level mentions in the thread."""
    usergroups: tuple[UsergroupId, ...] = ()
    """User groups the level mentions in the thread."""
    rotation: StrictStr | None = None
    """A rotation of ``rotations``: its on-call person is mentioned and sent the request by DM, with its buttons."""

    _someone = at_least_one(
        "users", "usergroups", "rotation", error_type="targets", message="a level needs users, usergroups or a rotation"
    )


class Level(_Section):
    """One rung: ``after`` (from the request for the first, else from the previous rung), ``targets``."""

    after: Seconds
    """How long to wait: from the request for the first rung, else from the previous rung."""
    targets: Targets


class Escalation(_Section):
    """The ladder and how many more times to walk it."""

    levels: tuple[Level, ...] = Field(min_length=1)
    repeat: int = Field(default=0, ge=0, le=10)
    """How many more times to walk the whole ladder after the first."""


class Claim(_Section):
    """Claiming pauses the ladder for ``pause``."""

    pause: Seconds
    """How long a claim pauses the ladder."""


class Reminders(_Section):
    """A nudge in the thread every ``every`` while the request is pending."""

    every: Seconds
    """How often the thread is nudged while the request is pending."""


class Expiry(_Section):
    """After ``after``, the request ends with ``outcome`` (``keep`` leaves it pending)."""

    after: Seconds
    """How long the request may wait."""
    outcome: Literal["deny", "keep", "approve"]
    """``deny``: it ends as expired (the agent is told so, never that a person denied it); ``keep``: it stays
    pending; ``approve``: approved automatically, only on a rule with ``low_risk: true``."""


NEVER: Final = "never"
"""``expiry: never``: the request waits until someone decides, whatever the deployment's default expiry."""


def _expiry_or_never(value: Any, _handler: ValidatorFunctionWrapHandler) -> Any:
    """``never``, or an ``Expiry`` section with its own errors at their keys (a plain union would report both arms)."""
    if value is None or value == NEVER:
        return value
    if isinstance(value, dict | Expiry):
        return Expiry.model_validate(value)
    raise PydanticCustomError(
        "expiry", "expected 'never' or a section with 'after' and 'outcome', got '{value}'", {"value": value}
    )


ExpiryKey = Annotated[Expiry | Literal["never"] | None, WrapValidator(_expiry_or_never)]
"""The ``expiry`` key: a section, ``never``, or unset (the deployment's default applies)."""
