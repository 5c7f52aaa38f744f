"""The OpenAPI document's parts for ``POST /v1/hooks/claude-code``: its query and the hook output Claude Code reads.

The output shapes are those the bundled ``claude`` CLI (2.1.x) acts on: ``PreToolUse``'s
``hookSpecificOutput.permissionDecision``, ``PermissionRequest``'s ``hookSpecificOutput.decision``, and a
``systemMessage`` alone (no decision). ``bot.api.openapi`` assembles them with the rest.
"""

from typing import Any, Final

from bot.domain import claude_hooks
from bot.domain.api_requests import ChannelRouting
from bot.domain.slack_ids import CHANNEL_ID_PATTERN

_REASON: Final = {"type": "string"}
_EDITED: Final = {"type": "object", "description": "the input as an approver edited it: the tool runs this one"}
HOOK_OUTPUT: Final = {
    "description": "A hook output Claude Code reads (the decision, or none: Claude Code's own prompt decides)",
    "anyOf": [
        {
            "type": "object",
            "required": ["hookSpecificOutput"],
            "additionalProperties": False,
            "properties": {
                "hookSpecificOutput": {
                    "type": "object",
                    "required": ["hookEventName", "permissionDecision", "permissionDecisionReason"],
                    "additionalProperties": False,
                    "properties": {
                        "hookEventName": {"const": "PreToolUse"},
                        "permissionDecision": {"enum": ["allow", "deny", "ask"]},
                        "permissionDecisionReason": {
                            **_REASON,
                            "description": "who approved; or why not (Claude Code tells the model on a deny)",
                        },
                        "updatedInput": _EDITED,
                    },
                }
            },
        },
        {
            "type": "object",
            "required": ["hookSpecificOutput"],
            "additionalProperties": False,
            "properties": {
                "hookSpecificOutput": {
                    "type": "object",
                    "required": ["hookEventName", "decision"],
                    "additionalProperties": False,
                    "properties": {
                        "hookEventName": {"const": "PermissionRequest"},
                        "decision": {
                            "type": "object",
                            "required": ["behavior"],
                            "additionalProperties": False,
                            "properties": {
                                "behavior": {"enum": ["allow", "deny"]},
                                "message": {**_REASON, "description": "why not (with deny): the model is told"},
                                "updatedInput": _EDITED,
                            },
                        },
                    },
                }
            },
        },
        {
            "type": "object",
            "required": ["systemMessage"],
            "additionalProperties": False,
            "properties": {"systemMessage": {**_REASON, "description": "no decision (PermissionRequest): why"}},
        },
    ],
}


def hook_parameters(routing: ChannelRouting) -> list[dict[str, Any]]:
    """The hook URL's query: how long to hold the call, what nobody deciding means, and where to ask."""
    routed = "without it, the channel the policy routes the tool to" + (
        f" (every tool but {', '.join(routing.exceptions)})" if routing.exceptions else ""
    )
    return [
        {
            "name": "wait",
            "in": "query",
            "required": False,
            "description": f"hold the call up to this long for a decision: whole seconds, 1 to "
            f"{claude_hooks.MAX_WAIT_S} (default {claude_hooks.DEFAULT_WAIT_S}); keep it under the hook's `timeout`",
            "schema": {"type": "string", "pattern": claude_hooks.WAIT_PATTERN},
        },
        {
            "name": "on_timeout",
            "in": "query",
            "required": False,
            "description": "when nobody decided within `wait` (the request is then withdrawn): `deny` (default) "
            "or `ask` (Claude Code's own permission prompt decides)",
            "schema": {"enum": ["deny", "ask"]},
        },
        {
            "name": "channel",
            "in": "query",
            "required": not routing.by_default,
            "description": f"the Slack channel to ask in; {routed}",
            "schema": {"type": "string", "pattern": CHANNEL_ID_PATTERN},
        },
    ]


EXAMPLE_HOOK: Final = {
    "session_id": "496b7d33-bcb1-42d9-ac20-379bd27678d6",
    "transcript_path": "/home/dev/.claude/projects/-src-checkout/496b7d33-bcb1-42d9-ac20-379bd27678d6.jsonl",
    "cwd": "/src/checkout",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "kubectl rollout restart deploy/checkout", "description": "Restart checkout"},
    "tool_use_id": "toolu_01ABC",
}
