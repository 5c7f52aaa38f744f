"""Standing approvals ("approve and allow for 1 h"): what a grant covers, for how long, offered by which rule.

A person who approves a request may, where its rule offers it, also allow the same call for a while: a grant.
It covers calls of exactly that tool with exactly that input (or, where the person picked some of its fields,
with exactly those fields' values and any others: ``fields``), in that channel of that workspace, under that
same rule, and (when the person chose so) only for that requester; it ends at a time fixed when it is made, one
of the rule's durations, never later. It never widens: nothing can change a grant but its revocation. A call it
covers runs without asking, posted in the thread and audited as the grant's use. It never lets its grantor
approve their own requests unless the rule allows self-approval.
"""

import hashlib
import json
import secrets
from datetime import datetime
from typing import Annotated, Any, Final, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from bot.domain.durations import Seconds
from bot.domain.records import ApprovalRequest, PolicySummary

MAX_GRANT_S: Final = 7 * 86_400
"""No grant lasts longer than a week, whatever a rule says."""


class GrantTerms(BaseModel):
    """What a rule offers (``grants:`` in the policy file): the durations a person may choose, shortest first."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    durations: Annotated[tuple[Annotated[Seconds, Field(le=MAX_GRANT_S)], ...], Field(min_length=1, max_length=3)]
    """Each a button on the request ("Approve + allow 1h"): at most three, each at most 7 days."""
    scope: Literal["requester", "channel"] = "requester"
    """Whose calls a grant covers: the requester's (the default), or anyone's in the channel (never the maker's own,
    unless the rule allows self-approval)."""


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
    """The input it covers: the call's whole input, or (``fields``) the fields the person picked."""
    digest: str
    """The exact call (``call_digest``: tool, input, and the API client that asks, if any)."""
    fields: dict[str, str] | None = None
    """Where the person picked fields: each picked field's ``field_digests`` entry. A call with the same values there
    is covered whatever its other fields hold; ``None``: only the exact call is."""
    pattern: str | None = None
    """With ``fields``: ``pattern_key`` of its tool and asker (what lists it with the calls it may cover)."""
    terms: str
    """Who could decide under the rule when it was made (``deciders_digest``): a rule changed since covers nothing."""
    requester: str | None
    """Only this requester's calls, or anyone's (``None``)."""
    granted_by: str
    granted_at: datetime
    expires_at: datetime
    approval_id: str
    """The request it was granted with."""

    granted_ms: int
    """When it was made (ms): a rule whose longest duration was shortened since covers nothing older than that."""

    @property
    def expires_ms(self) -> int:
        """Its end, as the stores keep it."""
        return int(self.expires_at.timestamp() * 1000)


class ListedGrant(NamedTuple):
    """A grant as App Home and ``python -m bot grants`` list it."""

    grant: Grant
    uses: int
    """How often it decided a call."""
    revoking: bool = False
    """Its revoke ended it but could not fence its uses in flight yet: listed until it is finished."""


def call_digest(tool: str, tool_input: Any, *, client: str | None) -> str:
    """One exact call: its tool and its input (whatever the order of its keys), and who asks.

    The asker is an agent behind Slack (``client`` None) or an HTTP API client by name (a grant made in Slack never
    covers an API key's call).
    """
    canonical = json.dumps(
        [tool, tool_input, client], sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def field_digests(tool: str, tool_input: Any, *, client: str | None) -> dict[str, str]:
    """Each top-level field of a call's input, with its value, tool and asker, as one digest.

    ``{}``: the input is not an object. A grant on picked fields covers a call whose digests of those fields are the
    grant's.
    """
    if not isinstance(tool_input, dict):
        return {}
    return {
        str(name): call_digest(tool, {"field": name, "value": value}, client=client)
        for name, value in tool_input.items()
    }


def pattern_key(tool: str, *, client: str | None) -> str:
    """What indexes the grants on picked fields of one tool for one asker (never equal to a ``call_digest``)."""
    return "fields-" + call_digest(tool, None, client=client)


MAX_PICKED_FIELDS: Final = 10
"""Fields a person may pick from (the modal's checkboxes element holds at most 10 options)."""
_FIELD_NAME_MAX: Final = 150  # a field's name is an option's value: at most 150 characters


def offers_similar(request: ApprovalRequest) -> bool:
    """Whether a standing approval on fields the person picks is offered: one call, an object of 2 to 10 fields."""
    tool_input = request.tool_input
    return (
        request.call_digest is not None
        and bool(request.policy.grant_durations)
        and isinstance(tool_input, dict)
        and 2 <= len(tool_input) <= MAX_PICKED_FIELDS
        and all(0 < len(name) <= _FIELD_NAME_MAX for name in tool_input)
    )


def covers_fields(grant_fields: dict[str, str], call_fields: dict[str, str]) -> bool:
    """Whether a call with ``call_fields`` (``field_digests``) has every picked field of a grant as it was."""
    return bool(grant_fields) and all(call_fields.get(name) == digest for name, digest in grant_fields.items())


_DECIDERS: Final = {
    "name",
    "approver_users",
    "approver_groups",
    "also_approvers",
    "allow_self_approval",
    "allow_external",
    "grant_scope",  # a rule that narrows whose calls are covered ends the wider grants made before
}


def deciders_digest(policy: PolicySummary) -> str:
    """Who may decide under ``policy`` (its approver lists and consents) and whose calls its grants cover.

    A grant holds only while these hold.
    """
    deciding = policy.model_dump(mode="json", include=_DECIDERS)
    return hashlib.sha256(json.dumps(deciding, sort_keys=True).encode()).hexdigest()[:32]


def new_grant_id() -> str:
    """A fresh grant id."""
    return "g" + secrets.token_hex(8)
