"""Hostile input to the HTTP API over real HTTP: whatever a client sends, the answer is a 4xx naming the
field (and nothing is stored or posted) or the request it asked for; never a 500."""

import http.client
import json
from contextlib import closing
from typing import Any
from urllib.parse import urlsplit

import httpx

from tests.bot.support.api_client import DEPLOY, ApiCaller, api_caller
from tests.bot.support.harness import Bot
from tests.redis_targets import every_key

MiB = 1024 * 1024

_WRONG: dict[str, list[Any]] = {
    "tool": [7, 1.5, True, None, [], {}],
    "input": ["x", 1, True, [], [{"a": 1}]],
    "reason": [1, [], {}, False],
    "requester": [1, [], {"id": "U0ALICE"}],
    "channel": [1, [], {"id": "C0OPS"}],
    "thread_ts": [1.5, 1700000000, []],
    "idempotency_key": [1, [], {}],
    "callback_url": [1, [], {"url": "http://example.com/"}],
}
WRONG_TYPES = [(field, value) for field, values in _WRONG.items() for value in values]

HUGE_OR_ODD_STRINGS: list[tuple[str, Any]] = [
    ("tool", "t" * 500_000),
    ("reason", "x" * 900_000),
    ("idempotency_key", "k" * 100_000),
    ("callback_url", "http://example.com/" + "x" * 100_000),
    ("requester", "U" + "A" * 500_000),
    ("channel", "C" + "A" * 500_000),
    ("thread_ts", "1" * 100_000 + ".1"),
    # Unicode controls, a trailing newline after a valid id, digits of other scripts, lone surrogates.
    ("tool", "deploy\u0000"),
    ("tool", "dep\u202eloy"),
    ("tool", "restart_service\n"),
    ("requester", "U0ALICE\n"),
    ("channel", "C0OPS\n"),
    ("thread_ts", "1700000000.000100\n"),
    ("thread_ts", "\u0661\u0667\u0660\u0660.\u0661"),
    ("callback_url", "http://exa\u0000mple.com/"),
    ("callback_url", "http://example.com/\r\nX-Injected: 1"),
    ("callback_url", "http://example.com/a b"),
    ("callback_url", "http://example.com/\u00e9t\u00e9"),
    ("callback_url", "http://exa..mple.com/"),  # an empty label: the HTTP client cannot encode the host
    ("callback_url", "http://" + "a" * 64 + ".example.com/"),  # a label over 63 characters, likewise
    ("idempotency_key", "\ud800"),
    ("reason", "\ud800 lone surrogate"),
    ("input", {"\ud800": "key"}),
    ("input", {"value": "\udfff"}),
]
"""Refused or accepted as given, never a 500 (a valid-looking id followed by a newline is no Slack id)."""

MUST_BE_REFUSED = {"requester", "channel", "thread_ts", "callback_url"}
"""Slack ids and URLs: a tool name may hold anything but whitespace (the message shows hidden characters)."""


def _refused_or_asked(bot: Bot, answer: httpx.Response, field: str) -> None:
    assert answer.status_code != 500, answer.text
    assert answer.headers["content-type"] == "application/json"
    if answer.status_code in (200, 201):
        return
    assert 400 <= answer.status_code < 500, answer.text
    error = answer.json()["error"]
    assert error["field"] == field, (field, error)
    assert error["message"].startswith(field), error
    assert len(answer.content) < 2000, "the error quotes a huge value whole"


def _raw(api: ApiCaller, text: str) -> httpx.Response:
    """POST ``text`` as it is: ``json=`` would refuse to encode a lone surrogate, a client need not."""
    return api.http.post(
        "/v1/approvals", content=text.encode("utf-8", "surrogatepass"), headers={"Content-Type": "application/json"}
    )


def test_wrong_types_are_refused_naming_the_field(bot: Bot) -> None:
    with api_caller(bot.services, bot.url) as api:
        before = sorted(every_key(bot.services.stores.redis))
        for field, value in WRONG_TYPES:
            answer = api.ask(**{field: value})
            assert 400 <= answer.status_code < 500, (field, value, answer.text)
            assert answer.json()["error"]["field"] == field, (field, value, answer.text)
        assert sorted(every_key(bot.services.stores.redis)) == before
    bot.drain()
    assert bot.approval_messages() == []


def test_huge_strings_unicode_controls_and_lone_surrogates_are_never_a_500(bot: Bot) -> None:
    with api_caller(bot.services, bot.url) as api:
        for field, value in HUGE_OR_ODD_STRINGS:
            body = {**DEPLOY, field: value}
            answer = _raw(api, json.dumps(body))
            _refused_or_asked(bot, answer, field)
            if (
                field in MUST_BE_REFUSED
                and isinstance(value, str)
                and (len(value) > 2000 or not (value.isascii() and value.isprintable()) or " " in value)
            ):
                assert answer.status_code == 422, (field, repr(value)[:80], answer.text)
            if answer.status_code == 201:
                shown = api.get(answer.json()["id"])
                assert shown.status_code == 200, shown.text
    bot.drain()


def test_json_that_is_not_an_object_is_refused_naming_the_body(bot: Bot) -> None:
    with api_caller(bot.services, bot.url) as api:
        for text in ("[]", "null", "1", "true", '"deploy"', "1.5", "[{}]", "", " ", "{}{}", '{"tool": "a",}'):
            answer = _raw(api, text)
            assert answer.status_code in (400, 422), (text, answer.text)
            assert answer.json()["error"]["field"] == "body", (text, answer.text)
        answer = _raw(api, '{"tool": "restart_service", "tool": 7}')  # a duplicate key: the last one wins
        assert (answer.status_code, answer.json()["error"]["field"]) == (422, "tool")


def test_bad_wait_values_are_400_naming_wait(bot: Bot) -> None:
    with api_caller(bot.services, bot.url) as api:
        asked = api.ask()
        assert asked.status_code == 201
        request_id = asked.json()["id"]
        for wait in (
            "",
            "-1",
            "-1s",
            "1.5s",
            "30 seconds",
            "1e3",
            "9" * 5000,
            "9" * 30 + "s",
            "\u00b2",
            "61s",
            "1d",
            "0x10",
            "inf",
            "nan",
            "30s\x00",
            "30s!",
        ):
            answer = api.http.get(f"/v1/approvals/{request_id}", params={"wait": wait})
            assert answer.status_code == 400, (wait[:20], answer.text)
            assert answer.json()["error"]["field"] == "wait"
        assert api.cancel(request_id).status_code == 200  # decided: a valid wait answers at once
        for wait in ("0", "0s", "1", "1s", "60s", "1m"):
            answer = api.http.get(f"/v1/approvals/{request_id}", params={"wait": wait}, timeout=70)
            assert answer.status_code == 200, (wait, answer.text)
        two = api.http.get(f"/v1/approvals/{request_id}?wait=1s&wait=forever")
        assert (two.status_code, two.json()["error"]["field"]) == (400, "wait")


def test_hostile_paths_and_headers_are_4xx(bot: Bot) -> None:
    issued = bot.services.stores.api_keys.create("ci-runner")
    assert issued is not None
    api_key = issued.key
    with closing(ApiCaller(bot.url, api_key)) as api:
        for path in (
            "/v1/approvals/%00",
            "/v1/approvals/" + "a" * 10_000,
            "/v1/approvals/%ff%fe",
            "/v1/approvals//cancel",
        ):
            answer = api.http.get(path)
            assert answer.status_code in (401, 404, 405), (path[:40], answer.text)
        for authorization in ("Bearer", "Basic dXNlcjpwYXNz", "Bearer sk_signoff_\u00e9", "bearer  x  y"):
            answer = httpx.post(
                f"{bot.url}/v1/approvals", json=DEPLOY, headers=[(b"Authorization", authorization.encode("utf-8"))]
            )
            assert (answer.status_code, answer.json()["error"]["field"]) == (401, "Authorization"), authorization
        for length in ("-1", "1e3", "12abc", "\u0661\u0662", str(10 * MiB)):
            status, body = _sent_with_length(bot.url, api_key, length)
            assert status in (400, 413), (length, body)
            assert json.loads(body)["error"]["field"] in ("Content-Length", "body"), body


def _sent_with_length(base_url: str, key: str, length: str) -> tuple[int, bytes]:
    """POST ``{}`` declaring ``length`` (http.client sends a header httpx would refuse to)."""
    connection = http.client.HTTPConnection(urlsplit(base_url).netloc, timeout=10)
    try:
        connection.putrequest("POST", "/v1/approvals")
        connection.putheader("Authorization", f"Bearer {key}")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", length.encode())
        connection.endheaders(b"{}")
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()
