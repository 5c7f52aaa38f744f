"""Request arguments the way ``slack_sdk`` sends them: query string, form, JSON or multipart, merged into one dict."""

import contextlib
import email.parser
import email.policy
import json
from typing import Any, Final
from urllib.parse import parse_qsl

JsonDict = dict[str, Any]

# Arguments that carry JSON documents; in form-encoded requests they arrive as JSON strings.
_JSON_FIELDS: Final = frozenset({"blocks", "attachments", "view", "metadata", "user_auth_blocks"})


def _decode_json_fields(args: JsonDict) -> JsonDict:
    for name in _JSON_FIELDS:
        value = args.get(name)
        if isinstance(value, str) and value.strip()[:1] in {"[", "{"}:
            # Undecodable JSON stays a string; the method then answers invalid_blocks / invalid_arguments.
            with contextlib.suppress(json.JSONDecodeError):
                args[name] = json.loads(value)
    return args


def _parse_multipart(content_type: str, body: bytes) -> JsonDict:
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
    )
    args: JsonDict = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not name:
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            continue
        try:
            args[str(name)] = payload.decode("utf-8")
        except UnicodeDecodeError:
            args[str(name)] = payload
    return args


def parse_request_args(query: str, content_type: str, body: bytes) -> JsonDict:
    """Merge the query string and the body (form, JSON or multipart) into one argument dict."""
    args: JsonDict = dict(parse_qsl(query, keep_blank_values=True))
    media_type = content_type.split(";", 1)[0].strip().lower()
    if body:
        if media_type == "application/json":
            parsed = json.loads(body.decode("utf-8"))
            if not isinstance(parsed, dict):
                raise ValueError("JSON body is not an object")
            args.update(parsed)
        elif media_type == "multipart/form-data":
            args.update(_parse_multipart(content_type, body))
        else:
            args.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    return _decode_json_fields(args)


def truthy(value: object) -> bool:
    """A boolean argument as Slack reads it (``true``, ``"true"``, ``"1"``, ``1``)."""
    return value is True or (isinstance(value, str) and value.lower() in {"1", "true"}) or value == 1
