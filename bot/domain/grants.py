"""Standing approvals ("approve and allow for 1 h"): what a grant covers, for how long, offered by which rule.

A person who approves a request may, where its rule offers it, also allow the same call for a while: a grant.
It covers calls of exactly that tool with exactly that input, in that channel of that workspace, under that
same rule, and (when the person chose so) only for that requester; it ends at a time fixed when it is made, one
of the rule's durations, never later. It never widens: nothing can change a grant but its revocation. A call it
covers runs without asking, posted in the thread and audited as the grant's use. It never lets its grantor
approve their own requests unless the rule allows self-approval.
"""

import hashlib
import json
import secrets
from datetime import datetime
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field

from bot.domain.durations import Seconds

MAX_GRANT_S: Final = 7 * 86_400
"""No grant lasts longer than a week, whatever a rule says."""


class GrantTerms(BaseModel):
    """What a rule offers (``grants:`` in the policy file): the durations a person may choose, shortest first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    durations: Annotated[tuple[Annotated[Seconds, Field(le=MAX_GRANT_S)], ...], Field(min_length=1, max_length=3)]
    """Each a button on the request ("Approve + allow 1h"): at most three, each at most 7 days."""


class Grant(BaseModel):
    """One standing approval, as stored (and audited)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grant_id: str
    team_id: str
    channel_id: str
    rule: str
    """The policy rule it was granted under: a call under another rule (the file changed) is not covered."""
    tool: str
    tool_input: Any
    digest: str
    requester: str | None
    """Only this requester's calls, or anyone's (``None``)."""
    granted_by: str
    granted_at: datetime
    expires_at: datetime
    approval_id: str
    """The request it was granted with."""

    @property
    def expires_ms(self) -> int:
        """Its end, as the stores keep it."""
        return int(self.expires_at.timestamp() * 1000)


def call_digest(tool: str, tool_input: Any) -> str:
    """One exact call: its tool and its input, whatever the order of the input's keys."""
    canonical = json.dumps([tool, tool_input], sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def new_grant_id() -> str:
    """A fresh grant id."""
    return "g" + secrets.token_hex(8)
