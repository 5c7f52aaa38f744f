"""Edit, then approve, end to end over real HTTP against the loopback Slack: the Edit button opens a form made from
the tool's schema; saving records the edit and approves it; the agent runs exactly the edited input, the message
shows what changed, the decision and the audit name the input's digest. An Approve of the input as it was before an
edit approves nothing; a rule can forbid edits or want someone other than the editor to approve."""

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import pytest
import redis

from agent import Agent, ApprovalGate, ScriptedModel
from agent.approval import EDIT_NOTE_PREFIX, input_digest
from agent.models.base import ModelTurn
from agent.models.scripted import text_turn, tool_turn
from agent.tools import tool
from bot.domain.clock import epoch_ms
from bot.render import action_ids as ids
from bot.render.texts import answers, editing, standing_approvals
from bot.store import keys
from bot.store.approvals.approval_record import Approval
from state.shapes import Message
from tests.bot.render.test_blocks import all_texts
from tests.bot.support.grant_clicks import approve_and_allow
from tests.bot.support.harness import Bot, demo_factory, is_decided, running_bot
from tests.bot.support.people import APPROVER, REQUESTER, SECOND_APPROVER


def _policy(tmp_path: Path, settings: str) -> Path:
    policy = tmp_path / "policy.yml"
    policy.write_text(f"rules:\n  - name: changes\n    match: {{tools: [restart_service, scale_service]}}\n{settings}")
    return policy


@pytest.fixture
def bot(redis_client: redis.Redis) -> Iterator[Bot]:
    with running_bot(redis_client, agent_factory=demo_factory) as running:
        yield running


def _approval(bot: Bot, session_id: str, approval_id: str) -> Approval:
    approval = bot.services.stores.approvals.get(session_id, approval_id)
    assert approval is not None
    return approval


def _fields(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {block["label"]["text"]: block for block in view["blocks"] if block["type"] == "input"}


def _message_text(message: dict[str, Any]) -> str:
    return "\n".join(str((block.get("text") or {}).get("text", "")) for block in message["blocks"])


def _buttons(message: dict[str, Any]) -> list[str]:
    return [
        element["action_id"]
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
    ]


def test_an_edited_call_runs_with_the_edited_input_named_by_the_decision_and_the_audit(bot: Bot) -> None:
    approval_id, session_id = bot.ask("scale checkout to 5")
    assert ids.EDIT_ACTION in _buttons(bot.approval_messages()[-1])

    view = bot.open_edit(approval_id, user=APPROVER)
    fields = _fields(view)
    assert fields["service"]["element"]["type"] == "plain_text_input"
    assert fields["service"]["element"]["initial_value"] == "checkout"
    assert fields["replicas"]["element"]["type"] == "number_input"  # an integer in the tool's schema
    assert fields["replicas"]["element"]["is_decimal_allowed"] is False
    assert view["submit"]["text"] == editing.SUBMIT_AND_APPROVE

    assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
    bot.drain()

    posted = "\n".join(bot.texts_posted())
    assert "checkout: scaled from 3 to 2 replicas" in posted
    assert "scaled from 3 to 5" not in posted
    assert "(An approver edited this call before it ran.)" in posted  # people read a sentence, not the model's note
    assert EDIT_NOTE_PREFIX not in posted
    message = bot.approval_messages()[-1]
    assert is_decided(message)
    shown = _message_text(message)
    assert "Edited by <@U0APPROVER>" in shown
    assert "- replicas: 5\n+ replicas: 2" in shown
    approval = _approval(bot, session_id, approval_id)
    assert approval.decision is not None
    edited = {"service": "checkout", "replicas": 2}
    assert approval.decision.updated_input == edited
    assert approval.decision.input_digest == input_digest(edited)
    assert approval.decision.edited_by == APPROVER
    events = {entry.event: entry for entry in bot.services.stores.audit.entries()}
    assert events["edit"].actor == APPROVER
    assert json.loads(events["edit"].details["changes"]) == [
        {"path": "replicas", "kind": "changed", "before": 5, "after": 2}
    ]
    assert events["edit"].details["input_digest"] == input_digest(edited)
    assert events["edit"].details["original_digest"] == input_digest({"service": "checkout", "replicas": 5})
    assert events["decision"].details["input_digest"] == input_digest(edited)
    assert events["decision"].details["edited_by"] == APPROVER
    assert events["decision"].details["source"] == "edit"


def test_an_unedited_approval_names_the_input_it_approved(bot: Bot) -> None:
    approval_id, session_id = bot.ask("restart checkout")
    bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
    bot.drain()

    approval = _approval(bot, session_id, approval_id)
    assert approval.decision is not None
    assert approval.decision.input_digest == input_digest({"service": "checkout"})
    assert approval.decision.updated_input is None
    [decision] = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
    assert decision.details["input_digest"] == input_digest({"service": "checkout"})
    assert decision.details["edited_by"] is None
    assert "checkout: 3 replicas restarted" in "\n".join(bot.texts_posted())


def test_a_field_that_is_not_valid_is_refused_under_that_field_and_nothing_is_saved(bot: Bot) -> None:
    approval_id, session_id = bot.ask("scale checkout to 5")
    view = bot.open_edit(approval_id, user=APPROVER)
    block_id = _fields(view)["replicas"]["block_id"]

    answer = bot.submit_edit(view, user=APPROVER, changes={"replicas": "many"})

    assert answer.status == 200
    assert answer.json() == {"response_action": "errors", "errors": {block_id: "Enter a whole number."}}
    assert bot.services.stores.redis.exists(keys.approval_edit(session_id, approval_id)) == 0
    approval = _approval(bot, session_id, approval_id)
    assert approval.decision is None


def test_an_approve_of_the_input_as_it_was_before_an_edit_approves_nothing(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = _policy(tmp_path, "    quorum: 2\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("scale checkout to 5")
        stale = bot.click_payload(ids.APPROVE_ACTION, approval_id, user="U0THIRD")  # the message as it was
        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)  # a vote for 5 replicas
        bot.drain()
        view = bot.open_edit(approval_id, user=SECOND_APPROVER)
        assert bot.submit_edit(view, user=SECOND_APPROVER, changes={"replicas": "2"}).status == 200
        bot.drain()

        approval = _approval(bot, session_id, approval_id)
        assert approval.decision is None
        assert approval.votes == frozenset({SECOND_APPROVER})  # the vote for 5 replicas is gone; the editor's counts

        assert bot.poster.post_action(stale).status == 200
        bot.drain()
        assert editing.CHANGED_TEXT in bot.ephemeral_texts("U0THIRD")
        approval = _approval(bot, session_id, approval_id)
        assert approval.decision is None
        assert "U0THIRD" not in approval.votes

        bot.click(ids.APPROVE_ACTION, approval_id, user="U0THIRD")  # the message as it is now
        bot.drain()
        assert "checkout: scaled from 3 to 2 replicas" in "\n".join(bot.texts_posted())


def test_a_typed_approval_of_an_edited_call_is_refused(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "    edits: other_approver\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("scale checkout to 5")
        view = bot.open_edit(approval_id, user=APPROVER)
        bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"})
        bot.drain()
        thread_ts = str(bot.approval_messages()[-1]["thread_ts"])

        bot.reply("approve: looks right", user=SECOND_APPROVER, thread_ts=thread_ts)
        bot.drain()

        assert editing.CHANGED_TEXT in bot.ephemeral_texts(SECOND_APPROVER)
        approval = _approval(bot, session_id, approval_id)
        assert approval.decision is None


def test_a_rule_can_want_someone_other_than_the_editor_to_approve(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "    edits: other_approver\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("scale checkout to 5")
        view = bot.open_edit(approval_id, user=APPROVER)
        assert view["submit"]["text"] == editing.SUBMIT_ONLY
        assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
        bot.drain()
        assert editing.EDITED_TEXT in bot.ephemeral_texts(APPROVER)
        message = bot.approval_messages()[-1]
        assert not is_decided(message)
        assert "+ replicas: 2" in _message_text(message)
        assert ids.APPROVE_AND_ALLOW_ACTION not in _buttons(message)

        bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        bot.drain()
        assert editing.EDITOR_APPROVAL_TEXT in bot.ephemeral_texts(APPROVER)
        approval = _approval(bot, session_id, approval_id)
        assert approval.decision is None

        bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)
        bot.drain()
        approval = _approval(bot, session_id, approval_id)
        assert approval.decision is not None
        assert (approval.decision.decided_by, approval.decision.edited_by) == (SECOND_APPROVER, APPROVER)
        assert "checkout: scaled from 3 to 2 replicas" in "\n".join(bot.texts_posted())


def test_a_forged_approve_and_allow_of_an_edited_call_grants_nothing(redis_client: redis.Redis, tmp_path: Path) -> None:
    """Hostile: the edited message offers no "Approve + allow"; a click crafted with the edited input's digest
    approves nothing and grants nothing (a grant would cover the original input, which nobody approved)."""
    policy = _policy(tmp_path, "    edits: other_approver\n    grants: {durations: [1h]}\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("scale checkout to 5")
        assert ids.APPROVE_AND_ALLOW_ACTION in _buttons(bot.approval_messages()[-1])
        view = bot.open_edit(approval_id, user=APPROVER)
        assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
        bot.drain()

        edited = input_digest({"service": "checkout", "replicas": 2})
        approve_and_allow(bot, ids.grant_button_value(3600, approval_id, session_id, edited), user=SECOND_APPROVER)
        bot.drain()

        assert standing_approvals.grant_not_for_edited() in bot.ephemeral_texts(SECOND_APPROVER)
        assert _approval(bot, session_id, approval_id).decision is None
        assert bot.services.stores.grants.live(now_ms=epoch_ms(bot.services.clock())) == []

        bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)  # what the message offers still works
        bot.drain()
        assert "checkout: scaled from 3 to 2 replicas" in "\n".join(bot.texts_posted())
        bot.ask("scale checkout to 5")  # the original call, which nobody approved, is asked again
        assert not is_decided(bot.approval_messages()[-1])


def test_a_forged_allow_similar_click_on_an_edited_call_opens_no_form(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    """Hostile: the edited message offers no "Approve + allow similar…"; a crafted click opens nothing and says why."""
    policy = _policy(tmp_path, "    edits: other_approver\n    grants: {durations: [1h]}\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, _session_id = bot.ask("scale checkout to 5")
        assert ids.ALLOW_SIMILAR_ACTION in _buttons(bot.approval_messages()[-1])
        view = bot.open_edit(approval_id, user=APPROVER)
        assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
        bot.drain()
        assert ids.ALLOW_SIMILAR_ACTION not in _buttons(bot.approval_messages()[-1])

        opened = len(bot.slack.calls("views.open"))
        payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)
        payload["actions"][0]["action_id"] = ids.ALLOW_SIMILAR_ACTION
        assert bot.poster.post_action(payload).status == 200
        bot.wait_told(SECOND_APPROVER, standing_approvals.grant_not_for_edited())
        assert len(bot.slack.calls("views.open")) == opened


def test_app_home_shows_an_edited_call_as_the_message_does_and_its_decision_names_the_input_that_ran(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = _policy(tmp_path, "    edits: other_approver\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, _session_id = bot.ask("scale checkout to 5")
        view = bot.open_edit(approval_id, user=APPROVER)
        assert bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status == 200
        bot.drain()
        [edited] = [text for text in _message_text(bot.approval_messages()[-1]).split("\n") if "Edited by" in text]

        home = all_texts(bot.open_home(SECOND_APPROVER))
        assert approval_id in json.dumps(bot.slack.home_view(SECOND_APPROVER))
        assert edited in home  # the message's own "Edited by" and diff
        assert "Edited by <@U0APPROVER>" in home
        assert "- replicas: 5\n+ replicas: 2" in home

        bot.click(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)
        bot.drain()
        recent = all_texts(bot.open_home(SECOND_APPROVER))
        ran = '`{"service":"checkout","replicas":2}`'
        line = f"`scale_service` {ran} (✏️ edited by <@U0APPROVER>): ✅ Approved by <@U0SECOND>"
        assert line in recent
        assert '"replicas":5' not in recent  # what ran, not what the agent asked


def test_a_rule_can_forbid_edits(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "    edits: forbidden\n")
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, _session_id = bot.ask("scale checkout to 5")
        message = bot.approval_messages()[-1]
        assert ids.EDIT_ACTION not in _buttons(message)
        opened = len(bot.slack.calls("views.open"))

        # A forged Edit click (the button is not on the message): refused, no form.
        payload = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=APPROVER)
        payload["actions"][0]["action_id"] = ids.EDIT_ACTION
        assert bot.poster.post_action(payload).status == 200

        bot.wait_told(APPROVER, editing.FORBIDDEN_TEXT)
        assert len(bot.slack.calls("views.open")) == opened


def test_a_form_opened_before_another_edit_saves_nothing(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = _policy(tmp_path, "    edits: other_approver\n")  # saving does not decide: the call still waits
    with running_bot(redis_client, agent_factory=demo_factory, policy_path=policy) as bot:
        approval_id, session_id = bot.ask("scale checkout to 5")
        first = bot.open_edit(approval_id, user=APPROVER)
        second = bot.open_edit(approval_id, user=SECOND_APPROVER)
        assert bot.submit_edit(first, user=APPROVER, changes={"replicas": "2"}).status == 200

        answer = bot.submit_edit(second, user=SECOND_APPROVER, changes={"replicas": "9"})

        assert answer.status == 200
        [problem] = answer.json()["errors"].values()
        assert problem == editing.CHANGED_TEXT[: len(problem)]
        approval = _approval(bot, session_id, approval_id)
        assert approval.edit is not None
        assert approval.decision is None
        assert approval.edit.input == {"service": "checkout", "replicas": 2}


def test_the_requester_may_not_edit_their_own_call(bot: Bot) -> None:
    approval_id, session_id = bot.ask("scale checkout to 5")
    opened = len(bot.slack.calls("views.open"))
    bot.click(ids.EDIT_ACTION, approval_id, user=REQUESTER)
    bot.wait_told(REQUESTER, answers.self_approval_refused())
    assert len(bot.slack.calls("views.open")) == opened
    assert bot.services.stores.redis.exists(keys.approval_edit(session_id, approval_id)) == 0


DEPLOY = {"env": "staging", "replicas": 3, "dry_run": False, "notes": "after the fix", "labels": {"team": "web"}}
RAN: list[dict[str, Any]] = []


def _deploy_agent(*, session_id: str, store: Any) -> Agent:
    """An agent whose one tool has every kind of field: a choice, a number, a tick, a text, an object."""

    @tool
    def deploy(
        env: Literal["staging", "prod"], replicas: int, dry_run: bool, notes: str, labels: dict[str, str]
    ) -> str:
        """Deploy the service.

        Args:
            env: Where to deploy.
            replicas: How many replicas.
            dry_run: Only plan it.
            notes: Anything to add.
            labels: Tags to put on it.
        """
        RAN.append({"env": env, "replicas": replicas, "dry_run": dry_run, "notes": notes, "labels": labels})
        return f"deployed to {env}"

    def respond(messages: list[Message]) -> ModelTurn:
        if any("toolResult" in block for block in messages[-1]["content"]):
            return text_turn("done")
        return tool_turn(("tooluse_deploy", "deploy", DEPLOY))

    model = ScriptedModel(respond)
    return Agent(model, [deploy], hooks=[ApprovalGate(["deploy"])], session_id=session_id, store=store)


def test_the_form_has_a_field_of_each_kind_and_the_tool_runs_what_they_were_set_to(redis_client: redis.Redis) -> None:
    RAN.clear()
    with running_bot(redis_client, agent_factory=_deploy_agent) as bot:
        approval_id, _session_id = bot.ask("deploy")
        view = bot.open_edit(approval_id, user=APPROVER)  # the loopback Slack checks it as views.open does
        fields = _fields(view)
        kinds = {name: block["element"]["type"] for name, block in fields.items()}
        assert kinds == {
            "env": "static_select",
            "replicas": "number_input",
            "dry_run": "checkboxes",
            "notes": "plain_text_input",
            "labels": "plain_text_input",
        }
        assert fields["env"]["element"]["initial_option"]["value"] == "staging"
        assert fields["env"]["hint"]["text"] == "Where to deploy."
        assert json.loads(fields["labels"]["element"]["initial_value"]) == {"team": "web"}

        refused = bot.submit_edit(view, user=APPROVER, changes={"labels": '{"team": 5}'})
        assert refused.json()["errors"] == {fields["labels"]["block_id"]: "labels.team: 5 is not of type 'string'"}
        assert RAN == []

        changes = {"env": "prod", "dry_run": True, "labels": '{"team": "ops"}', "replicas": "4"}
        assert bot.submit_edit(view, user=APPROVER, changes=changes).status == 200
        bot.drain()

    assert RAN == [{"env": "prod", "replicas": 4, "dry_run": True, "notes": "after the fix", "labels": {"team": "ops"}}]


def test_an_edit_and_an_approve_at_once_run_one_input_once_and_the_decision_names_it(bot: Bot) -> None:
    for round_number in range(4):
        approval_id, session_id = bot.ask(f"scale checkout to {5 + round_number}")
        view = bot.open_edit(approval_id, user=APPROVER)
        stale = bot.click_payload(ids.APPROVE_ACTION, approval_id, user=SECOND_APPROVER)
        start = threading.Barrier(2)

        def edit(view: dict[str, Any] = view, start: threading.Barrier = start) -> int:
            start.wait()
            return bot.submit_edit(view, user=APPROVER, changes={"replicas": "2"}).status

        def approve(stale: dict[str, Any] = stale, start: threading.Barrier = start) -> int:
            start.wait()
            return bot.poster.post_action(stale).status

        with ThreadPoolExecutor(2) as pool:
            assert [future.result() for future in [pool.submit(edit), pool.submit(approve)]] == [200, 200]
        bot.drain()

        decision = _approval(bot, session_id, approval_id).decision
        assert decision is not None
        ran = decision.updated_input or {"service": "checkout", "replicas": 5 + round_number}
        assert decision.input_digest == input_digest(ran)
        replies = [text for text in bot.texts_posted() if "checkout: scaled" in text]
        assert len(replies) == round_number + 1  # one run per round
        assert f"to {ran['replicas']} replicas" in replies[-1]
