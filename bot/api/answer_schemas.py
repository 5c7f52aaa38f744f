"""The JSON Schemas of what the HTTP API answers: an approval, a question, a decision, an error.

Written here, not generated: the views are built by hand (``bot.flow.api_views``), and the tests validate real
answers (and callbacks) against these schemas through the served document (``bot.api.openapi``).
"""

from typing import Final

from bot.domain.api_requests import REQUEST_ID_PATTERN

_NULLABLE_STRING: Final = {"type": ["string", "null"]}
DECISION: Final = {
    "type": "object",
    "description": "Who decided, why, and when; `expired` is never a human denial.",
    "required": ["decision", "decided_at"],
    "additionalProperties": False,
    "properties": {
        "decision": {"enum": ["approve", "deny", "expired", "answer"]},
        "decided_by": {**_NULLABLE_STRING, "description": "Slack user id; null for the clock or a withdrawal"},
        "approved_by": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Slack user ids of every approver counted (the one of a single approval too); "
            "empty unless approved",
        },
        "reason": _NULLABLE_STRING,
        "discussion": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["user", "text", "at"],
                "additionalProperties": False,
                "properties": {"user": {"type": "string"}, "text": {"type": "string"}, "at": {"type": "string"}},
            },
        },
        "decided_at": {"type": "string", "format": "date-time"},
        "by_rule": {
            **_NULLABLE_STRING,
            "description": "the policy rule that decided by itself (tier allow or deny), nobody asked",
        },
        "by_grant": {
            **_NULLABLE_STRING,
            "description": "the standing approval that covered the call (made by decided_by), nobody asked",
        },
        "input_digest": {
            **_NULLABLE_STRING,
            "description": "SHA-256 (hex) of the canonical JSON (sorted keys, no spaces) of the input approved: "
            "run only an input with this digest",
        },
        "updated_input": {
            "type": ["object", "null"],
            "description": "the input an approver edited the call to before approving it: run this one instead; "
            "null: run the input as asked",
        },
        "edited_by": {**_NULLABLE_STRING, "description": "Slack user id of who edited the call (updated_input)"},
        "answer": {
            **_NULLABLE_STRING,
            "description": "a question's answer, exactly as the person wrote it (decision `answer`); null otherwise",
        },
        "trusted": {
            "type": "boolean",
            "description": "the approver also trusted the tool for the rest of the agent's session (Strands' "
            "HumanInTheLoop trust); always false for a request made through this API",
        },
    },
}
APPROVAL: Final = {
    "type": "object",
    "required": ["id", "kind", "status", "tool", "input", "client", "channel", "created_at", "decision"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": REQUEST_ID_PATTERN},
        "kind": {"const": "approval"},
        "status": {
            "enum": ["pending", "approved", "denied", "expired", "cancelled", "answered"],
            "description": "`answered`: a person answered in words instead of deciding (asked with `respond`)",
        },
        "tool": {"type": "string"},
        "input": {"type": "object"},
        "reason": _NULLABLE_STRING,
        "requester": _NULLABLE_STRING,
        "client": {"type": "string", "description": "the name of the API key that asked"},
        "channel": {"type": "string"},
        "thread_ts": _NULLABLE_STRING,
        "message_ts": {**_NULLABLE_STRING, "description": "the approval message, once posted"},
        "policy": {**_NULLABLE_STRING, "description": "the policy rule that applies"},
        "quorum": {"type": ["integer", "null"]},
        "votes": {"type": "array", "items": {"type": "string"}},
        "created_at": {"type": "string", "format": "date-time"},
        "expires_at": {"type": ["string", "null"], "format": "date-time"},
        "callback_url": _NULLABLE_STRING,
        "decision": {"oneOf": [{"$ref": "#/components/schemas/Decision"}, {"type": "null"}]},
        "respond": {"type": "boolean", "description": "whether a person may answer in words instead of deciding"},
        "answer": {
            **_NULLABLE_STRING,
            "description": "the person's words, when they answered instead of deciding (status `answered`); else null",
        },
    },
}
_ANSWER: Final = {
    "description": "the answer: the person's words, the label chosen, the labels chosen (`multiple`, in the options' "
    "order) or the object the form was filled in with; null until answered",
    "oneOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}},
        {"type": "object"},
        {"type": "null"},
    ],
}
QUESTION: Final = {
    "type": "object",
    "required": [
        "id",
        "kind",
        "status",
        "question",
        "options",
        "multiple",
        "schema",
        "name",
        "client",
        "channel",
        "created_at",
        "answer",
        "answered_by",
        "answered_at",
    ],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": REQUEST_ID_PATTERN},
        "kind": {"const": "question"},
        "status": {
            "enum": ["pending", "answered", "expired", "cancelled", "refused"],
            "description": "`expired`: nobody answered in time (never an answer); `cancelled`: withdrawn through the "
            "API; `refused`: a policy rule of tier `deny` matched its name, nobody was asked",
        },
        "question": {"type": "string"},
        "other": {"type": "boolean", "description": "with options: the person may answer in words instead"},
        "options": {
            "type": ["array", "null"],
            "items": {
                "type": "object",
                "required": ["label", "description"],
                "additionalProperties": False,
                "properties": {"label": {"type": "string"}, "description": _NULLABLE_STRING},
            },
        },
        "multiple": {"type": "boolean"},
        "schema": {"type": ["object", "null"], "description": "the form's JSON Schema, as asked"},
        "name": {"type": "string", "description": "the interrupt name policy rules match"},
        "requester": _NULLABLE_STRING,
        "client": {"type": "string", "description": "the name of the API key that asked"},
        "channel": {"type": "string"},
        "thread_ts": _NULLABLE_STRING,
        "message_ts": {**_NULLABLE_STRING, "description": "the question's message, once posted"},
        "policy": {**_NULLABLE_STRING, "description": "the policy rule that applies"},
        "created_at": {"type": "string", "format": "date-time"},
        "expires_at": {"type": ["string", "null"], "format": "date-time"},
        "callback_url": _NULLABLE_STRING,
        "answer": _ANSWER,
        "answered_by": {**_NULLABLE_STRING, "description": "Slack user id of who answered"},
        "answered_at": {"type": ["string", "null"], "format": "date-time"},
    },
}
ERROR: Final = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "field"],
            "additionalProperties": False,
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "field": {**_NULLABLE_STRING, "description": "the field (or header, or parameter) at fault"},
            },
        }
    },
}
