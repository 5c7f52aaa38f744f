"""The OpenAPI 3.1 document of the HTTP API, served at ``/v1/openapi.json``.

The request body's schema is generated from ``ApprovalAsk`` (the model that validates it), so the two
cannot drift; the response schemas are written here and the tests validate real answers against them.
"""

from typing import Any, Final

from bot.api.answer_schemas import APPROVAL, DECISION, ERROR, QUESTION
from bot.api.hook_document import EXAMPLE_HOOK, HOOK_OUTPUT, hook_parameters
from bot.domain.api_requests import DEFAULT_QUESTION_NAME, REQUEST_ID_PATTERN, ApprovalAsk, ChannelRouting, QuestionAsk
from bot.domain.claude_hooks import ClaudeHookInput
from bot.flow.api_requests import MAX_WAIT_S, SIGNATURE_HEADER, TIMESTAMP_HEADER

WAIT_PATTERN: Final = "^(?:(?:[0-9]|[1-5][0-9]|60)s?|[01]m)$"
"""``wait``: whole seconds from 0 to ``MAX_WAIT_S``, with or without ``s``, or ``0m`` / ``1m``."""


def _json(ref: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {"$ref": ref}}}}


_ERROR_REF: Final = "#/components/schemas/Error"
_ERROR_DESCRIPTIONS: Final = {
    400: "malformed: a query parameter, a header, or a body that is not JSON (the error names which)",
    401: "no valid API key",
    403: "the key names no workspace, and the app is installed in several (OAuth): create it with --team",
    404: "no such request for this API key",
    408: "the body did not arrive in time",
    409: "in conflict with the request as it is",
    411: "no Content-Length",
    413: "the body is over 1 MiB",
    415: "the body is not application/json",
    422: "the body is not a valid ask (the error names the field)",
    500: "a fault on the server (logged); nothing the client sent",
    503: "storage unreachable: nothing was recorded, try again",
}
_HEADERS: Final = {
    401: {
        "WWW-Authenticate": {
            "description": "`Bearer`: the scheme the key goes in",
            "required": True,
            "schema": {"type": "string", "const": "Bearer"},
        }
    },
}


def _errors(*statuses: int) -> dict[str, Any]:
    return {
        str(status): {**_json(_ERROR_REF, _ERROR_DESCRIPTIONS[status]), **_headers_of(status)} for status in statuses
    }


def _headers_of(status: int) -> dict[str, Any]:
    return {"headers": _HEADERS[status]} if status in _HEADERS else {}


def _approval(
    description: str, *, links: dict[str, Any], location: bool = False, schema: str = "Approval"
) -> dict[str, Any]:
    answer = {**_json(f"#/components/schemas/{schema}", description), "links": links}
    if location:
        answer["headers"] = {
            "Location": {"description": "the request's own path", "required": True, "schema": {"type": "string"}}
        }
    return answer


_EXAMPLE_ASK: Final = {
    "tool": "deploy",
    "input": {"service": "checkout", "version": "1.2.3"},
    "reason": "release 1.2.3",
    "channel": "C0DEPLOYS",
    "idempotency_key": "deploy-checkout-1.2.3",
}
_BY_ID: Final = {"id": "$response.body#/id"}
_LINKS: Final = {
    "get": {"operationId": "getApproval", "parameters": _BY_ID, "description": "read it, or wait for its decision"},
    "cancel": {"operationId": "cancelApproval", "parameters": _BY_ID, "description": "withdraw it while pending"},
}
_EXAMPLE_QUESTION: Final = {
    "question": "Which region should checkout deploy to?",
    "options": ["eu-west-1", {"label": "us-east-1", "description": "Virginia"}],
    "requester": "U012AB3CD",
    "channel": "C0DEPLOYS",
    "idempotency_key": "deploy-checkout-1.2.3-region",
}
_QUESTION_LINKS: Final = {
    "get": {"operationId": "getQuestion", "parameters": _BY_ID, "description": "read it, or wait for its answer"},
    "cancel": {"operationId": "cancelQuestion", "parameters": _BY_ID, "description": "withdraw it while pending"},
}
_ID_PARAMETER: Final = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "the request's id (the `id` of its answer); any other value is not found",
    "schema": {"type": "string", "pattern": REQUEST_ID_PATTERN},
}
_WAIT_PARAMETER: Final = {
    "name": "wait",
    "in": "query",
    "required": False,
    "description": f"long-poll up to this long: whole seconds, 0 to {MAX_WAIT_S} (`30s`, `45`, `1m`); 0 reads at once",
    "schema": {"type": "string", "pattern": WAIT_PATTERN},
}
_BUSY: Final = {
    **_json(
        _ERROR_REF,
        "with `wait`: this server holds its most long-polls already; ask again after `Retry-After` seconds "
        "(a read without `wait` is never refused)",
    ),
    "headers": {
        "Retry-After": {
            "description": "seconds to wait before asking again",
            "required": True,
            "schema": {"type": "string", "pattern": "^[1-9][0-9]*$"},
        }
    },
}


def _ask_schema(routing: ChannelRouting) -> dict[str, Any]:
    """``ApprovalAsk``'s schema, and when ``channel`` may be left out: only where the policy routes the tool."""
    schema = ApprovalAsk.model_json_schema()
    names_a_channel = {"required": ["channel"], "properties": {"channel": {"type": "string"}}}
    listed = {"required": ["tool"], "properties": {"tool": {"enum": list(routing.exceptions)}}}
    if routing.by_default and routing.exceptions:  # every tool is routed but those listed
        schema["anyOf"] = [names_a_channel, {"not": listed}]
    elif not routing.by_default:  # only the tools listed are routed
        schema["anyOf"] = [names_a_channel, listed] if routing.exceptions else [names_a_channel]
    return schema


def _question_schema(routing: ChannelRouting | None) -> dict[str, Any]:
    """``QuestionAsk``'s schema, and when ``channel`` may be left out: only where the policy routes the name."""
    schema = QuestionAsk.model_json_schema()
    routing = routing or ChannelRouting(by_default=False, exceptions=())
    if routing.by_default and not routing.exceptions:
        return schema
    names_a_channel = {"required": ["channel"], "properties": {"channel": {"type": "string"}}}
    listed: dict[str, Any] = {"required": ["name"], "properties": {"name": {"enum": list(routing.exceptions)}}}
    if DEFAULT_QUESTION_NAME in routing.exceptions:  # a question that names none is named so
        listed = {"anyOf": [listed, {"not": {"required": ["name"]}}]}
    if routing.by_default:  # every name is routed but those listed
        routed: list[dict[str, Any]] = [names_a_channel, {"not": listed}]
    else:  # only the names listed are routed
        routed = [names_a_channel, listed] if routing.exceptions else [names_a_channel]
    schema["allOf"] = [*schema["allOf"], {"anyOf": routed}]
    return schema


def document(routing: ChannelRouting) -> dict[str, Any]:
    """The OpenAPI document (a fresh dict), for a policy that routes requests as ``routing`` says."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Signoff API",
            "version": "1",
            "description": (
                "Ask people in Slack to sign off a tool call, or to answer a question, under the same policies, "
                "escalation, expiry, quorum and audit as an agent's interrupt. "
                f"Callbacks carry `{TIMESTAMP_HEADER}` and `{SIGNATURE_HEADER}`: "
                "`v0=` + hex HMAC-SHA256 of `v0:<timestamp>:<body>` with the client's callback secret. "
                "A method a path does not list is answered 405 with `Allow`; a path not listed here, 404. Every "
                "answer is JSON, errors as `Error`."
            ),
        },
        "components": {
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "ApprovalAsk": _ask_schema(routing),
                "Approval": APPROVAL,
                "QuestionAsk": _question_schema(routing.questions),
                "Question": QUESTION,
                "Decision": DECISION,
                "Error": ERROR,
                "ClaudeHookInput": ClaudeHookInput.model_json_schema(),
                "ClaudeHookOutput": HOOK_OUTPUT,
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
                        "description": "at most 1 MiB",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ApprovalAsk"},
                                "examples": {"deploy": {"value": _EXAMPLE_ASK}},
                            }
                        },
                    },
                    "responses": {
                        "201": _approval("asked", links=_LINKS, location=True),
                        "200": _approval(
                            "asked before with the same idempotency key: that request", links=_LINKS, location=True
                        ),
                        **_errors(400, 401, 403, 408, 409, 411, 413, 415, 422, 500, 503),
                    },
                }
            },
            "/v1/approvals/{id}": {
                "get": {
                    "operationId": "getApproval",
                    "summary": "Read a request; with `wait`, once decided or after that long",
                    "parameters": [_ID_PARAMETER, _WAIT_PARAMETER],
                    "responses": {
                        "200": _approval("the request", links={"cancel": _LINKS["cancel"]}),
                        "429": _BUSY,
                        **_errors(400, 401, 404, 500, 503),
                    },
                }
            },
            "/v1/approvals/{id}/cancel": {
                "post": {
                    "operationId": "cancelApproval",
                    "summary": "Withdraw a pending request (its message shows it withdrawn)",
                    "parameters": [_ID_PARAMETER],
                    "responses": {
                        "200": _approval("withdrawn", links={"get": _LINKS["get"]}),
                        **_errors(401, 404, 409, 500, 503),
                    },
                }
            },
            "/v1/questions": {
                "post": {
                    "operationId": "askQuestion",
                    "summary": "Ask a person a question (in words, with options, or a form): it is posted in Slack",
                    "requestBody": {
                        "required": True,
                        "description": "at most 1 MiB",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/QuestionAsk"},
                                "examples": {"region": {"value": _EXAMPLE_QUESTION}},
                            }
                        },
                    },
                    "responses": {
                        "201": _approval("asked", links=_QUESTION_LINKS, location=True, schema="Question"),
                        "200": _approval(
                            "asked before with the same idempotency key: that question",
                            links=_QUESTION_LINKS,
                            location=True,
                            schema="Question",
                        ),
                        **_errors(400, 401, 403, 408, 409, 411, 413, 415, 422, 500, 503),
                    },
                }
            },
            "/v1/questions/{id}": {
                "get": {
                    "operationId": "getQuestion",
                    "summary": "Read a question; with `wait`, once answered (expired, withdrawn) or after that long",
                    "parameters": [_ID_PARAMETER, _WAIT_PARAMETER],
                    "responses": {
                        "200": _approval(
                            "the question", links={"cancel": _QUESTION_LINKS["cancel"]}, schema="Question"
                        ),
                        "429": _BUSY,
                        **_errors(400, 401, 404, 500, 503),
                    },
                }
            },
            "/v1/questions/{id}/cancel": {
                "post": {
                    "operationId": "cancelQuestion",
                    "summary": "Withdraw a pending question (its message shows it withdrawn)",
                    "parameters": [_ID_PARAMETER],
                    "responses": {
                        "200": _approval("withdrawn", links={"get": _QUESTION_LINKS["get"]}, schema="Question"),
                        **_errors(401, 404, 409, 500, 503),
                    },
                }
            },
            "/v1/hooks/claude-code": {
                "post": {
                    "operationId": "claudeCodeHook",
                    "summary": "Claude Code's http hook: ask in Slack, answer once decided (or withdrawn after `wait`)",
                    "parameters": hook_parameters(routing),
                    "requestBody": {
                        "required": True,
                        "description": "the hook input Claude Code POSTs (other fields are ignored); at most 1 MiB",
                        "content": {
                            "application/json": {
                                "schema": {"$ref": "#/components/schemas/ClaudeHookInput"},
                                "examples": {"bash": {"value": EXAMPLE_HOOK}},
                            }
                        },
                    },
                    "responses": {
                        "200": _json("#/components/schemas/ClaudeHookOutput", "the hook's output"),
                        **_errors(400, 401, 403, 408, 409, 411, 413, 415, 422, 500, 503),
                    },
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
