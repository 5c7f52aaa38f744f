"""``POST /v1/hooks/claude-code``, over real HTTP as Claude Code's http hook calls it: each call is asked in the
loopback Slack, held until decided, and answered as the hook's output; nobody deciding within ``wait`` withdraws
the request (its message says so, its buttons go) and answers ``deny`` or ``ask``."""

import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from bot.render import action_ids as ids
from tests.bot.support.api_client import ApiCaller, api_caller
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot, is_decided
from tests.bot.support.people import APPROVER, CHANNEL

HOOK = "/v1/hooks/claude-code"


def _input(**fields: Any) -> dict[str, Any]:
    """A ``PreToolUse`` hook input as the bundled CLI sends it (``prompt_id`` and ``effort`` are ignored)."""
    return {
        "session_id": "496b7d33-bcb1-42d9-ac20-379bd27678d6",
        "transcript_path": "/home/dev/.claude/projects/-src-checkout/496b7d33.jsonl",
        "cwd": "/src/checkout",
        "prompt_id": "9e8396b6-72be-42fc-a666-f6f9d8e0866f",
        "permission_mode": "default",
        "effort": {"level": "medium"},
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "kubectl rollout restart deploy/checkout", "description": "Restart checkout"},
        "tool_use_id": "toolu_01",
        **fields,
    }


def _hook(api: ApiCaller, body: Any, **query: str) -> httpx.Response:
    return api.http.post(HOOK, json=body, params={"channel": CHANNEL, **query})


@pytest.fixture
def api(bot: Bot) -> Iterator[ApiCaller]:
    with api_caller(bot.services, bot.url, name="claude-code") as caller:
        yield caller


def _decision(answer: httpx.Response) -> dict[str, Any]:
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["hookSpecificOutput"])


def test_an_approval_allows_and_a_denial_denies_with_the_reason(bot: Bot, api: ApiCaller) -> None:
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        allowed = _decision(_hook(api, _input()))
    assert allowed == {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": f"Approved in Slack by {APPROVER}.",
    }
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="not on a Friday")  # noqa: E731
    with person_in_slack(bot, deny):
        denied = _decision(_hook(api, _input(tool_use_id="toolu_02")))
    assert denied["permissionDecision"] == "deny"
    assert denied["permissionDecisionReason"] == (
        f"Denied in Slack by {APPROVER}: not on a Friday. Do not retry this call."
    )
    bot.drain()
    first, _second = bot.approval_messages()
    shown = json.dumps(first["blocks"])
    assert "Claude Code session 496b7d33-bcb1-42d9-ac20-379bd27678d6 in /src/checkout" in shown
    assert "kubectl rollout restart deploy/checkout" in shown


def test_a_permission_request_gets_its_own_output_shape(bot: Bot, api: ApiCaller) -> None:
    asked = _input(hook_event_name="PermissionRequest", permission_suggestions=[{"type": "addDirectories"}])
    del asked["tool_use_id"]  # the CLI sends none with PermissionRequest
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        assert _decision(_hook(api, asked)) == {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="no")  # noqa: E731
    with person_in_slack(bot, deny):
        denied = _decision(_hook(api, asked))  # no tool use id: a call asks anew, never an earlier decision
    assert denied["decision"] == {
        "behavior": "deny",
        "message": f"Denied in Slack by {APPROVER}: no. Do not retry this call.",
    }
    assert len(bot.approval_messages()) == 2


def test_an_edited_call_is_allowed_with_the_approvers_input(bot: Bot, api: ApiCaller) -> None:
    def edit(approval_id: str) -> None:
        view = bot.open_edit(approval_id, user=APPROVER)
        assert bot.submit_edit(view, user=APPROVER, changes={"command": "kubectl get pods"}).status == 200

    with person_in_slack(bot, edit):
        allowed = _decision(_hook(api, _input()))
    assert allowed["permissionDecision"] == "allow"
    assert allowed["updatedInput"] == {"command": "kubectl get pods", "description": "Restart checkout"}


def test_nobody_deciding_within_the_wait_withdraws_the_request_and_denies(bot: Bot, api: ApiCaller) -> None:
    with person_in_slack(bot, lambda _approval_id: None):
        denied = _decision(_hook(api, _input(), wait="1"))
    assert denied["permissionDecision"] == "deny"
    assert denied["permissionDecisionReason"].startswith("Nobody decided in Slack within 1 s;")
    assert "not a denial by a person" in denied["permissionDecisionReason"]
    bot.drain()
    [message] = bot.approval_messages()
    assert is_decided(message)  # no button left to press
    assert "Claude Code stopped waiting after 1 s; a decision now would have no effect" in json.dumps(message["blocks"])
    # A late click (a copy still on someone's screen) changes nothing, and asking again about the same tool use
    # finds the withdrawn request: nothing new is asked, nothing runs.
    bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=APPROVER)
    again = _decision(_hook(api, _input(), wait="1"))
    assert again["permissionDecision"] == "deny"
    assert len(bot.approval_messages()) == 1


def test_on_timeout_ask_leaves_the_call_to_claude_codes_own_prompt(bot: Bot, api: ApiCaller) -> None:
    with person_in_slack(bot, lambda _approval_id: None):
        asked = _decision(_hook(api, _input(), wait="1", on_timeout="ask"))
        permission = _hook(
            api, _input(hook_event_name="PermissionRequest", tool_use_id=None), wait="1", on_timeout="ask"
        )
    assert asked["permissionDecision"] == "ask"
    assert asked["permissionDecisionReason"].endswith("Claude Code asks its own user instead.")
    assert permission.status_code == 200
    assert permission.json() == {"systemMessage": asked["permissionDecisionReason"]}  # no decision: the CLI prompts


def test_the_same_tool_use_twice_is_one_request(bot: Bot, api: ApiCaller) -> None:
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)) as acted:
        first = _decision(_hook(api, _input()))
        second = _decision(_hook(api, _input()))
    assert first == second
    assert len(acted) == 1
    assert len(bot.approval_messages()) == 1
    other = _hook(api, _input(tool_input={"command": "rm -rf /"}))  # same tool use, another input: refused
    assert other.status_code == 409
    assert other.json()["error"]["field"] == "idempotency_key"


def test_a_hook_call_over_the_wait_bound_is_answered_at_once_and_asks_nothing(bot: Bot, api: ApiCaller) -> None:
    with ExitStack() as held:
        for _ in range(bot.services.api_waits.limit):
            assert held.enter_context(bot.services.api_waits.held())
        denied = _decision(_hook(api, _input()))
    assert denied["permissionDecision"] == "deny"
    assert denied["permissionDecisionReason"].startswith("Signoff holds its most waits")
    bot.drain()
    assert bot.approval_messages() == []


def test_the_hook_needs_a_valid_api_key(bot: Bot) -> None:
    for caller in (ApiCaller(bot.url, None), ApiCaller(bot.url, "sk_signoff_not-a-key")):
        refused = _hook(caller, _input())
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"] == "Bearer"
        assert refused.json()["error"]["field"] == "Authorization"
    bot.drain()
    assert bot.approval_messages() == []


BAD_INPUT = [
    ({"tool_name": None}, {}, (422, "tool_name")),
    ({"tool_input": "ls"}, {}, (422, "tool_input")),
    ({"cwd": ""}, {}, (422, "cwd")),
    ({"session_id": None}, {}, (422, "session_id")),
    ({"hook_event_name": "PostToolUse"}, {}, (422, "hook_event_name")),
    ({}, {"wait": "600"}, (400, "wait")),
    ({}, {"on_timeout": "allow"}, (400, "on_timeout")),
    ({}, {"channel": "general"}, (400, "channel")),
    ({}, {"timeout": "30"}, (400, "timeout")),
]
"""A field of the hook input, or of the URL's query, set wrong (``None``: left out); the status and field named."""


@pytest.mark.parametrize(("body", "query", "refusal"), BAD_INPUT)
def test_bad_input_is_refused_naming_the_field(
    bot: Bot, api: ApiCaller, body: dict[str, Any], query: dict[str, str], refusal: tuple[int, str]
) -> None:
    sent = {name: value for name, value in _input(**body).items() if value is not None}
    refused = _hook(api, sent, **query)
    assert (refused.status_code, refused.json()["error"]["field"]) == refusal, refused.text
    bot.drain()
    assert bot.approval_messages() == []


def test_hidden_characters_and_mentions_in_the_session_are_shown_as_data(bot: Bot, api: ApiCaller) -> None:
    with person_in_slack(bot, lambda _approval_id: None):
        _hook(api, _input(cwd="/src/<!channel>/\u202echeckout"), wait="1")
    bot.drain()
    [message] = bot.approval_messages()
    shown = json.dumps(message["blocks"], ensure_ascii=False)
    assert "<!channel>" not in shown
    assert "&lt;!channel&gt;" in shown
    assert "⟨U+202E⟩" in shown
