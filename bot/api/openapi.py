"""The OpenAPI 3.1 document of the HTTP API, served at ``/v1/openapi.json``.

The request body's schema is generated from ``ApprovalAsk`` (the model that validates it), so the two
cannot drift; the response schemas are written here and the tests validate real answers against them.
"""

from typing import Any, Final

from bot.domain.api_requests import ApprovalAsk
from bot.flow.api_requests import SIGNATURE_HEADER, TIMESTAMP_HEADER

_NULLABLE_STRING: Final = {"type": ["string", "null"]}
_DECISION: Final = {
    "type": "object",
    "description": "Who decided, why, and when; `expired` is never a human denial.",
    "required": ["decision", "decided_at"],
    "additionalProperties": False,
    "properties": {
        "decision": {"enum": ["approve", "deny", "expired"]},
        "decided_by": {**_NULLABLE_STRING, "description": "Slack user id; null for the clock or a withdrawal"},
        "approved_by": {"type": "array", "items": {"type": "string"}},
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
    },
}
_APPROVAL: Final = {
    "type": "object",
    "required": ["id", "status", "tool", "input", "client", "channel", "created_at", "decision"],
    "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "pattern": "^[0-9a-f]{24}$"},
        "status": {"enum": ["pending", "approved", "denied", "expired", "cancelled"]},
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
    },
}
_ERROR: Final = {
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


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": ref}}}}


def _errors(*statuses: int) -> dict[str, Any]:
    return {
        str(status): _json("#/components/schemas/Error", "refused; the body names the field") for status in statuses
    }


_ID_PARAMETER: Final = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}


def document() -> dict[str, Any]:
    """The OpenAPI document (a fresh dict)."""
    approval = "#/components/schemas/Approval"
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Signoff API",
            "version": "1",
            "description": (
                "Ask people in Slack to sign off a tool call, under the same policies, escalation, expiry, quorum "
                f"and audit as an agent's interrupt. Callbacks carry `{TIMESTAMP_HEADER}` and `{SIGNATURE_HEADER}`: "
                "`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the client's callback secret."
            ),
        },
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "ApprovalAsk": ApprovalAsk.model_json_schema(),
                "Approval": _APPROVAL,
                "Decision": _DECISION,
                "Error": _ERROR,
            },
        },
        "security": [{"apiKey": []}],
        "paths": {
            "/v1/approvals": {
                "post": {
                    "operationId": "askApproval",
                    "summary": "Ask for a sign-off: the request is posted in Slack",
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApprovalAsk"}}},
                    },
                    "responses": {
                        "201": _json(approval, "asked"),
                        "200": _json(approval, "asked before with the same idempotency key: that request"),
                        **_errors(400, 401, 409, 411, 413, 415, 422, 500, 503),
                    },
                }
            },
            "/v1/approvals/{id}": {
                "get": {
                    "operationId": "getApproval",
                    "summary": "Read a request; with `wait`, once decided or after that long",
                    "parameters": [
                        _ID_PARAMETER,
                        {
                            "name": "wait",
                            "in": "query",
                            "required": False,
                            "description": "long-poll up to this long (`30s`, `1m`; at most 60 s)",
                            "schema": {"type": "string"},
                        },
                    ],
                    "responses": {
                        "200": _json(approval, "the request"),
                        "429": {
                            **_json(
                                "#/components/schemas/Error",
                                "with `wait`: this server holds its most long-polls already; ask again after "
                                "`Retry-After` seconds (a read without `wait` is never refused)",
                            ),
                            "headers": {
                                "Retry-After": {
                                    "description": "seconds to wait before asking again",
                                    "required": True,
                                    "schema": {"type": "integer", "minimum": 1},
                                }
                            },
                        },
                        **_errors(400, 401, 404, 500, 503),
                    },
                }
            },
            "/v1/approvals/{id}/cancel": {
                "post": {
                    "operationId": "cancelApproval",
                    "summary": "Withdraw a pending request (its message shows it withdrawn)",
                    "parameters": [_ID_PARAMETER],
                    "responses": {"200": _json(approval, "withdrawn"), **_errors(401, 404, 409, 500, 503)},
                }
            },
            "/v1/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": {"description": "the OpenAPI document"}},
                }
            },
        },
    }
