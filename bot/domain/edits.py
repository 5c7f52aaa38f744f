"""An approver's edit of a call before it is approved: the edited input, who made it, and what changed.

An edit replaces the input that runs; the approval that follows names the edited input by its digest
(``agent.approval.input_digest``), so the agent runs exactly what was approved. What changed is shown as
a line per changed leaf (``input_changes``), in the message, its direct-message copies and the audit.
"""

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict

from agent.attempts import is_rerun_interrupt
from bot.domain.records import ApprovalRequest

_PLAIN_KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class CallEdit(BaseModel):
    """The input an approver edited a pending call to (stored with its approval until it is decided)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: Any
    digest: str
    """``input_digest`` of ``input``: what an Approve button of the edited message names."""
    edited_by: str
    edited_at: datetime


@dataclass(frozen=True)
class Change:
    """One leaf of the input that differs: ``path`` as ``a.b[0]``, its value before and after."""

    path: str
    kind: Literal["added", "removed", "changed"]
    before: Any = None
    after: Any = None


def editable(request: ApprovalRequest) -> bool:
    """Whether a person may edit the call before approving it.

    They may for one call whose whole input is stored, a rule that allows edits and asks a person, and a call that has
    not started (a tool that re-runs from its start cannot).
    """
    policy = request.policy
    return (
        request.input_digest is not None
        and policy.edits != "forbidden"
        and policy.tier == "ask"
        and not is_rerun_interrupt(request.interrupt_name)
    )


def input_changes(before: Any, after: Any) -> list[Change]:
    """What differs between two inputs, leaf by leaf, in the order of ``before`` (then what ``after`` adds)."""
    changes: list[Change] = []
    _compare("", before, after, changes)
    return changes


def _compare(path: str, before: Any, after: Any, changes: list[Change]) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in [*before, *(key for key in after if key not in before)]:
            child = _child(path, key)
            if key not in after:
                changes.append(Change(child, "removed", before=before[key]))
            elif key not in before:
                changes.append(Change(child, "added", after=after[key]))
            else:
                _compare(child, before[key], after[key], changes)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            _compare(f"{path}[{index}]", old, new, changes)
        return
    # ``1 == True`` in Python: a number edited into a boolean (or back) is a change.
    if before != after or type(before) is not type(after):
        changes.append(Change(path or "(input)", "changed", before=before, after=after))


def _child(path: str, key: str) -> str:
    name = key if _PLAIN_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{name}" if path else name


def changes_json(changes: list[Change]) -> str:
    """The changes as one JSON text (the audit's ``changes``): ``[{"path", "kind", "before", "after"}]``."""
    return json.dumps(
        [{"path": c.path, "kind": c.kind, "before": c.before, "after": c.after} for c in changes],
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
