"""Block Kit rendering: structure, escaping, and every limit, checked by a small Block Kit checker."""

import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from agent.approval import refusal_text
from bot.domain.records import (
    ApprovalRequest,
    Decision,
    DiscussionEntry,
    GuardedCall,
    PolicySummary,
    approval_id_for,
)
from bot.render import blocks
from bot.render.action_ids import (
    APPROVE_ACTION,
    DENY_ACTION,
    DENY_MODAL_CALLBACK,
    DENY_REASON_BLOCK,
    DENY_REASON_INPUT,
    DISCUSS_ACTION,
    parse_button_value,
)
from bot.render.texts import answers, approval_request, thread_posts, times
from loopback_slack import message_limit_error

AT = datetime(2026, 11, 30, 5, 0, tzinfo=UTC)
AT_TOKEN = "<!date^1796014800^{date_short_pretty} {time}|2026-11-30 05:00 UTC>"
APPROVAL_ID = approval_id_for("T1:C1:1700000000.000100", 1, "interrupt-1")
MARKER = re.compile(r"… \(truncated, (\d+) more characters\)")
HUGE_ARGS = {"payload": "x" * 100_000, "nested": {"a": [1, {"b": "<!channel>"}] * 50}}
EMOJI = "👩🏽‍💻🇫🇷é́😀" * 2_000

# ---------------------------------------------------------------- a small Block Kit checker

TEXT_MAX = 3000


def check_text(obj: Any, limit: int = TEXT_MAX, *, plain_only: bool = False) -> None:
    assert isinstance(obj, dict)
    assert obj["type"] in ({"plain_text"} if plain_only else {"plain_text", "mrkdwn"})
    assert isinstance(obj["text"], str)
    assert 1 <= len(obj["text"]) <= limit, len(obj["text"])
    assert obj["text"].strip()
    if "emoji" in obj:
        assert obj["type"] == "plain_text"
    assert set(obj) <= {"type", "text", "emoji", "verbatim"}


def check_button(button: dict[str, Any]) -> None:
    assert button["type"] == "button"
    check_text(button["text"], 75, plain_only=True)
    assert 1 <= len(button["action_id"]) <= 255
    assert len(button.get("value", "")) <= 2000
    assert button.get("style", "primary") in {"primary", "danger"}
    assert set(button) <= {"type", "text", "action_id", "value", "style", "url", "confirm", "accessibility_label"}


def check_block(block: dict[str, Any]) -> None:
    kind = block["type"]
    if "block_id" in block:
        assert 1 <= len(block["block_id"]) <= 255
    if kind == "header":
        check_text(block["text"], 150, plain_only=True)
    elif kind == "section":
        assert "text" in block or "fields" in block
        if "text" in block:
            check_text(block["text"])
    elif kind == "context":
        assert 1 <= len(block["elements"]) <= 10
        for element in block["elements"]:
            check_text(element)
    elif kind == "actions":
        assert 1 <= len(block["elements"]) <= 25
        for element in block["elements"]:
            check_button(element)
        action_ids = [element["action_id"] for element in block["elements"]]
        assert len(action_ids) == len(set(action_ids))
    elif kind == "input":
        check_text(block["label"], 2000, plain_only=True)
        element = block["element"]
        assert element["type"] == "plain_text_input"
        assert 1 <= len(element["action_id"]) <= 255
        assert 0 < element.get("max_length", 3000) <= 3000
        if "placeholder" in element:
            check_text(element["placeholder"], 150, plain_only=True)
        assert isinstance(block.get("optional", False), bool)
    else:
        raise AssertionError(f"unexpected block type {kind}")


def check_blocks(items: list[dict[str, Any]], max_blocks: int) -> None:
    assert 1 <= len(items) <= max_blocks
    for block in items:
        check_block(block)
        parsed = Block.parse(block)  # slack_sdk's own model accepts it, and round-trips it
        assert parsed is not None
        assert parsed.to_dict() == block
    block_ids = [block["block_id"] for block in items if "block_id" in block]
    assert len(block_ids) == len(set(block_ids))


def check_message(message: dict[str, Any]) -> None:
    assert set(message) == {"text", "blocks"}
    assert 1 <= len(message["text"]) <= 40_000
    check_blocks(message["blocks"], 50)
    assert message_limit_error(message) is None


def check_reply(text: str) -> list[dict[str, Any]]:
    replies = blocks.agent_reply_messages(text)
    assert 1 <= len(replies) <= blocks.MAX_REPLY_MESSAGES
    for message in replies:
        check_message(message)
    return replies


def check_view(view: dict[str, Any]) -> None:
    assert view["type"] == "modal"
    for key in ("title", "submit", "close"):
        check_text(view[key], 24, plain_only=True)
    assert len(view["callback_id"]) <= 255
    assert len(view["private_metadata"]) <= 3000
    check_blocks(view["blocks"], 100)
    assert View(**view).to_dict() == view


def section_texts(message: dict[str, Any]) -> list[str]:
    return [block["text"]["text"] for block in message["blocks"] if block["type"] == "section"]


def all_texts(payload: dict[str, Any], kinds: frozenset[str] = frozenset({"mrkdwn", "plain_text"})) -> str:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") in kinds:
                found.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(payload)
    return "\n".join(found)


def request(**changes: Any) -> ApprovalRequest:
    fields: dict[str, Any] = {
        "approval_id": APPROVAL_ID,
        "session_id": "T1:C1:1700000000.000100",
        "interrupt_id": "interrupt-1",
        "interrupt_name": "approval",
        "team_id": "T1",
        "channel_id": "C1",
        "thread_ts": "1700000000.000100",
        "requested_by": "U_REQ",
        "tool": "restart_service",
        "tool_input": {"service": "checkout", "replicas": 3},
        "reason": {"tool": "restart_service", "input": {"service": "checkout", "replicas": 3}, "toolUseId": "t1"},
        "policy": PolicySummary(name="production", approver_users=("U_OPS",), approver_groups=("S_SRE",)),
        "created_at": AT,
        "expires_at": datetime(2026, 11, 30, 6, 0, tzinfo=UTC),
    }
    fields.update(changes)
    return ApprovalRequest(**fields)


def decision(kind: str, **changes: Any) -> Decision:
    fields: dict[str, Any] = {"decision": kind, "decided_by": "U_OPS", "decided_at": AT}
    fields.update(changes)
    return Decision(**fields)


# ---------------------------------------------------------------- structure


def test_undecided_message_has_the_three_buttons_carrying_the_approval_id() -> None:
    message = blocks.approval_message(request())
    check_message(message)
    actions = [block for block in message["blocks"] if block["type"] == "actions"]
    assert len(actions) == 1
    assert APPROVAL_ID in actions[0]["block_id"]
    assert actions[0]["block_id"] == blocks.actions_block_id(APPROVAL_ID)
    buttons = {button["action_id"]: button for button in actions[0]["elements"]}
    assert list(buttons) == [APPROVE_ACTION, DENY_ACTION, DISCUSS_ACTION]
    assert buttons[APPROVE_ACTION]["style"] == "primary"
    assert buttons[DENY_ACTION]["style"] == "danger"
    assert "style" not in buttons[DISCUSS_ACTION]
    # Each carries the approval and its session (a click's script needs the session's keys).
    expected = (APPROVAL_ID, request().session_id)
    assert all(parse_button_value(button["value"]) == expected for button in buttons.values())
    assert message["blocks"][0]["type"] == "header"
    assert "restart_service" in message["blocks"][0]["text"]["text"]


def test_undecided_message_shows_requester_arguments_policy_and_expiry() -> None:
    message = blocks.approval_message(request())
    text = all_texts(message)
    assert "<@U_REQ>" in text
    assert '```\n{\n  "service": "checkout",\n  "replicas": 3\n}\n```' in text
    assert "production" in text
    assert "<@U_OPS>" in text
    assert "<!subteam^S_SRE>" in text
    assert "<!date^1796018400^{date_short_pretty} {time}|2026-11-30 06:00 UTC>" in text
    assert "*Reason*" not in text  # the tool gate's reason only repeats the call


def test_policy_variants() -> None:
    anyone_but = blocks.approval_message(request(policy=PolicySummary(name="p")))
    assert "anyone except the requester" in all_texts(anyone_but)
    anyone = blocks.approval_message(request(policy=PolicySummary(name="p", allow_self_approval=True)))
    assert "May decide: anyone" in all_texts(anyone)
    assert "except" not in all_texts(anyone)
    strict = blocks.approval_message(request(policy=PolicySummary(name="p", reason_required_on_deny=True)))
    assert "reason is required to deny" in all_texts(strict)
    many = PolicySummary(name="p" * 5000, approver_users=tuple(f"U{i:09d}" for i in range(500)))
    check_message(blocks.approval_message(request(policy=many)))


def test_no_expiry_and_no_tool() -> None:
    message = blocks.approval_message(
        request(tool=None, tool_input=None, reason="Pick a region", interrupt_name="choose", expires_at=None)
    )
    check_message(message)
    text = all_texts(message)
    assert "Expires" not in text
    assert "`choose`" in text
    assert "*Reason*\nPick a region" in text


def test_json_reason_is_shown_in_a_code_block() -> None:
    message = blocks.approval_message(request(reason={"why": "risky", "score": [1, 2]}))
    check_message(message)
    assert any(text.startswith("*Reason*\n```\n{") and text.endswith("\n```") for text in section_texts(message))


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        (decision("approve"), f"✅ Approved by <@U_OPS> at {AT_TOKEN}"),
        (decision("deny", reason="freeze & <!here>"), "❌ Denied by <@U_OPS> at "),
        (decision("deny"), "(no reason given)"),
        (decision("expired", decided_by=None), "⌛ Expired without a decision at <!date^1796014800^"),
    ],
)
def test_decided_message_replaces_the_buttons_with_the_outcome(outcome: Decision, expected: str) -> None:
    message = blocks.approval_message(request(), decision=outcome)
    check_message(message)
    assert not [block for block in message["blocks"] if block["type"] == "actions"]
    text = all_texts(message)
    assert expected in text
    assert "No discussion replies travelled with it." in text
    assert "Expires" not in text
    if outcome.reason:
        assert ": freeze &amp; &lt;!here&gt;" in text


def test_decided_message_counts_discussion_replies() -> None:
    entries = tuple(DiscussionEntry(user=f"U{i}", text="<!channel> hm", at=AT) for i in range(3))
    message = blocks.approval_message(request(), decision=decision("approve", discussion=entries))
    assert "3 discussion replies travelled with it." in all_texts(message)
    one = blocks.approval_message(request(), decision=decision("approve", discussion=entries[:1]))
    assert "1 discussion reply travelled with it." in all_texts(one)


def test_naive_times_are_taken_as_utc() -> None:
    assert times.slack_date(datetime(2026, 11, 30, 5, 0)) == times.slack_date(AT)


def test_bad_approval_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="approval id"):
        blocks.approval_message(request(approval_id=""))
    with pytest.raises(ValueError, match="approval id"):
        blocks.deny_modal(request(approval_id="x" * 201), reason_required=False)


# ---------------------------------------------------------------- escaping


HOSTILE = "<!channel> <!here> <@U_VICTIM> <https://evil.example|click> & <!subteam^S1>"


def test_user_controlled_text_is_escaped_everywhere() -> None:
    hostile = request(
        requested_by="U1><!channel",
        tool="tool<!everyone>",
        tool_input={"command": HOSTILE},
        reason=HOSTILE,
        interrupt_name=HOSTILE,
        policy=PolicySummary(name=HOSTILE, approver_users=("U<!here>",)),
    )
    outcome = decision("deny", decided_by="U2><!channel", reason=HOSTILE)
    for message in (blocks.approval_message(hostile), blocks.approval_message(hostile, decision=outcome)):
        check_message(message)
        # plain_text is never parsed for mentions or links; mrkdwn and the fallback text are.
        for text in (all_texts(message, frozenset({"mrkdwn"})), message["text"]):
            for token in ("<!channel>", "<!here>", "<!everyone>", "<@U_VICTIM>", "<https://", "<!subteam^S1>"):
                assert token not in text
        assert "&lt;!channel&gt;" in all_texts(message)
    modal_text = all_texts(blocks.deny_modal(hostile, reason_required=True), frozenset({"mrkdwn"}))
    assert "<!channel>" not in modal_text
    assert "<!everyone>" not in modal_text


def test_messages_escape_their_arguments() -> None:
    assert "<!channel>" not in answers.click_failed("<!channel>")
    assert "<!channel>" not in thread_posts.agent_reply("hi <!channel>")
    assert "<!channel>" not in thread_posts.discussion_prompt("U1><!channel")
    assert answers.click_failed("boom") == "Your click was not recorded: boom — try again."
    already = answers.already_decided(decision("approve", decided_by="U1"))
    assert already == f"Already approved by <@U1> at {AT_TOKEN}"


def test_agent_reply_is_escaped() -> None:
    (block,) = blocks.agent_reply_blocks("Done <!channel> & <@U1>")
    assert block["text"]["text"] == "Done &lt;!channel&gt; &amp; &lt;@U1&gt;"
    assert blocks.agent_reply_blocks("   ")[0]["text"]["text"] == thread_posts.agent_reply("")


def test_a_reply_repeating_a_refusal_shows_people_who_refused_and_why() -> None:
    denied = decision("deny", decided_by="U1", reason="not <!channel> today")
    expired = decision("expired", decided_by=None)
    accounts = blocks.refusal_accounts([denied, expired, decision("approve", decided_by="U2")])
    said = f"<@U9> {refusal_text(denied)}\n{refusal_text(expired)}"

    (block,) = blocks.agent_reply_blocks(said, accounts)

    assert block["text"]["text"] == (
        "&lt;@U9&gt; Not run: <@U1> denied it: not &lt;!channel&gt; today\nNot run: nobody decided in time."
    )
    assert len(accounts) == 2


# ---------------------------------------------------------------- limits


def test_huge_arguments_are_truncated_with_a_marker_inside_a_closed_fence() -> None:
    message = blocks.approval_message(request(tool_input=HUGE_ARGS))
    check_message(message)
    (arguments,) = [text for text in section_texts(message) if text.startswith(approval_request.ARGUMENTS_LABEL)]
    assert len(arguments) <= 3000
    assert arguments.count("```") == 2
    body, marker = arguments.rsplit("\n```\n", 1)
    match = MARKER.fullmatch(marker)
    assert match is not None
    shown = body.split("```\n", 1)[1]
    assert len(shown) + int(match.group(1)) == len(json.dumps(HUGE_ARGS, indent=2, ensure_ascii=False))


def test_backticks_in_arguments_cannot_close_the_fence() -> None:
    for value in ("```", "a````b", "`" * 5000, "x" * 2950 + "```<!channel>```"):
        message = blocks.approval_message(request(tool_input={"code": value}))
        check_message(message)
        (arguments,) = [text for text in section_texts(message) if text.startswith(approval_request.ARGUMENTS_LABEL)]
        assert arguments.count("```") == 2


def test_escapes_are_never_cut_in_half() -> None:
    for size in range(2960, 3000):
        message = blocks.approval_message(request(tool_input="<" * size, reason="&" * (size + 3)))
        check_message(message)
        for text in section_texts(message):
            assert not re.search(r"&(?!amp;|lt;|gt;)", text)


def test_huge_reason_tool_name_and_ids() -> None:
    message = blocks.approval_message(
        request(reason="r" * 10_000, tool="t" * 10_000, requested_by="U" * 10_000, interrupt_name="n" * 10_000)
    )
    check_message(message)
    (reason,) = [text for text in section_texts(message) if text.startswith(approval_request.REASON_LABEL)]
    assert MARKER.search(reason)
    assert len(message["blocks"][0]["text"]["text"]) <= 150


def test_unicode_and_emoji_are_cut_cleanly() -> None:
    message = blocks.approval_message(request(tool_input={"e": EMOJI}, reason=EMOJI, tool=EMOJI))
    check_message(message)
    decided = blocks.approval_message(request(), decision=decision("deny", reason=EMOJI))
    check_message(decided)
    for text in section_texts(message):
        head = MARKER.split(text)[0].rstrip("\n`")
        assert not head.endswith("\u200d")


def test_deeply_nested_and_odd_json() -> None:
    nested: Any = "leaf"
    for _ in range(5_000):
        nested = [nested]
    message = blocks.approval_message(request().model_copy(update={"tool_input": nested}))
    check_message(message)
    assert approval_request.UNDISPLAYABLE in all_texts(message)
    odd = blocks.approval_message(request(tool_input={"when": AT, "set": {1}, "text": "ünï"}))
    check_message(odd)


def test_decision_with_huge_reason_fits() -> None:
    message = blocks.approval_message(request(), decision=decision("deny", reason="<" * 10_000))
    check_message(message)


# ---------------------------------------------------------------- modal


@pytest.mark.parametrize("required", [True, False])
def test_deny_modal_shape(required: bool) -> None:
    view = blocks.deny_modal(request(), reason_required=required)
    check_view(view)
    assert view["callback_id"] == DENY_MODAL_CALLBACK
    assert view["private_metadata"] == APPROVAL_ID
    (field,) = [block for block in view["blocks"] if block["type"] == "input"]
    assert field["block_id"] == DENY_REASON_BLOCK
    assert field["optional"] is (not required)
    assert field["element"]["action_id"] == DENY_REASON_INPUT
    assert field["element"]["multiline"] is True
    assert field["element"]["max_length"] == 2000


def test_deny_modal_with_huge_inputs() -> None:
    check_view(blocks.deny_modal(request(tool=EMOJI, requested_by="U" * 9_000), reason_required=True))


def test_modal_errors() -> None:
    assert blocks.modal_errors(answers.reason_required()) == {
        "response_action": "errors",
        "errors": {DENY_REASON_BLOCK: answers.reason_required()},
    }
    assert len(blocks.modal_errors("e" * 10_000)["errors"][DENY_REASON_BLOCK]) <= 300


# ---------------------------------------------------------------- replies


def test_long_agent_text_is_split_into_sections_and_messages() -> None:
    paragraph = "word " * 150 + "\n"
    replies = check_reply(paragraph * 60)
    assert len(replies) > 1
    joined = "".join(block["text"]["text"] for message in replies for block in message["blocks"])
    assert joined.replace("\n", "").replace(" ", "") == (paragraph * 60).replace("\n", "").replace(" ", "")


def test_enormous_agent_text_stops_at_the_last_message_with_a_marker() -> None:
    replies = check_reply("<a> & b " * 100_000)
    assert len(replies) == blocks.MAX_REPLY_MESSAGES
    assert MARKER.search(replies[-1]["blocks"][-1]["text"]["text"])
    for message in replies:
        for block in message["blocks"]:
            assert not re.search(r"&(?!amp;|lt;|gt;)", block["text"]["text"])


def test_code_fences_survive_splitting() -> None:
    text = "Here:\n```\n" + "line of code\n" * 1_000 + "```\nDone."
    pieces = [block["text"]["text"] for block in blocks.agent_reply_blocks(text)]
    assert len(pieces) > 1
    for piece in pieces:
        assert len(piece) <= 3000
        assert piece.count("```") % 2 == 0
    assert pieces[-1].endswith("Done.")


def test_unbroken_and_emoji_agent_text() -> None:
    for text in ("x" * 200_000, EMOJI * 10, "`" * 10_000):
        check_reply(text)


# ---------------------------------------------------------------- the tool call(s) an interrupt guards

GUARDED_SID = "T1:C1:1700000000.000100"


def _guarding(calls: tuple[GuardedCall, ...], *, interrupt_name: str = "batch-approval") -> ApprovalRequest:
    single = calls[0] if len(calls) == 1 else None
    return ApprovalRequest(
        approval_id=approval_id_for(GUARDED_SID, 3, "v1:before_tools:x"),
        session_id=GUARDED_SID,
        interrupt_id="v1:before_tools:x",
        interrupt_name=interrupt_name,
        team_id="T1",
        channel_id="C1",
        thread_ts="1700000000.000100",
        requested_by="U0REQUESTER",
        tool=single.tool if single else None,
        tool_input=single.input if single else None,
        tool_use_id=single.tool_use_id if single else None,
        calls=calls,
        reason="Run this batch?",
        policy=PolicySummary(name="deletions"),
        created_at=datetime(2026, 11, 30, 5, 0, tzinfo=UTC),
    )


def _message_text(request: ApprovalRequest) -> str:
    return json.dumps(blocks.approval_message(request)["blocks"])


DELETE = GuardedCall(tool="delete_files", input={"paths": ["/tmp/a"]}, tool_use_id="t1")
INSPECT = GuardedCall(tool="inspect_files", input={"paths": ["/tmp/b"]}, tool_use_id="t2")


def test_one_guarded_call_is_named_with_its_arguments() -> None:
    text = _message_text(_guarding((DELETE,)))
    assert "Approval needed: delete_files" in text
    assert "/tmp/a" in text
    assert "could not be determined" not in text


def test_a_batch_names_every_call_and_its_arguments() -> None:
    text = _message_text(_guarding((DELETE, INSPECT)))
    assert "Approval needed: delete_files, inspect_files" in text
    assert "/tmp/a" in text
    assert "/tmp/b" in text
    assert json.dumps(approval_request.CALLS_LABEL)[1:-1] in text


def test_an_interrupt_guarding_no_known_call_says_so() -> None:
    text = _message_text(_guarding((), interrupt_name="run-approval"))
    assert 'Approval needed"' in text
    assert "could not be determined" in text
    assert "`run-approval`" in text
