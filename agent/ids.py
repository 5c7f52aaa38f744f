"""Deterministic interrupt ids, in the ``v1:`` scheme of Strands Agents 1.62.

The same raiser asking the same question gets the same id on every replay, which is how a
resumed tool or hook finds the human's answer. Callers treat ids as opaque.
"""

import uuid
from typing import Final, Literal

from state.interrupt import _AGENT_STREAM_INTERRUPT_ID_PREFIX

Scope = Literal["tool_call", "before_tool_call", "before_tools", "middleware_agent_stream"]
_SCOPED_TO_TOOL_USE: Final = frozenset({"tool_call", "before_tool_call"})


def interrupt_id(scope: Scope, name: str, tool_use_id: str | None = None) -> str:
    """Return the id of interrupt ``name`` raised in ``scope``.

    Raises:
        ValueError: ``tool_use_id`` is missing for a per-call scope, or given for another.
    """
    name_hash = uuid.uuid5(uuid.NAMESPACE_OID, name)
    if scope in _SCOPED_TO_TOOL_USE:
        if not tool_use_id:
            raise ValueError(f"scope=<{scope}> | a toolUseId is required")
        return f"v1:{scope}:{tool_use_id}:{name_hash}"
    if tool_use_id is not None:
        raise ValueError(f"scope=<{scope}> | takes no toolUseId")
    if scope == "middleware_agent_stream":
        return f"{_AGENT_STREAM_INTERRUPT_ID_PREFIX}{name_hash}"
    return f"v1:{scope}:{name_hash}"
