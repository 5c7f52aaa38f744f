"""Questions with options or a form, asked by an agent of Signoff's own runtime and answered in Slack.

Before, a question was text only: an interrupt whose reason offered options or a schema was posted as a question in
words, and the agent received whatever the person typed.
"""

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from agent import Agent, tool
from agent.approval import NO_ANSWER
from agent.models.scripted import ScriptedModel, text_turn, tool_turn
from agent.tools import ToolContext
from bot.domain.status import Status
from bot.flow.access import Origin
from bot.render import action_ids as ids
from bot.render import blocks
from loopback_slack.slack_requests import PostResult
from state.shapes import Message
from state.store import SessionStore
from tests.bot.support.choices import actions_of, click_option, send_chosen
from tests.bot.support.harness import Bot, is_decided, running_bot
from tests.bot.support.people import APPROVER, CHANNEL, OUTSIDER, REQUESTER, SECOND_APPROVER, TEAM

RECEIVED = "test:received"
"""Where the agent's tool keeps the response it received (JSON)."""

REGIONS = ["eu-west-1", "us-east-1", "ap-south-1"]
MANY = [f"region-{index:02d}" for index in range(12)]
FORM = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "enum": ["eu-west-1", "us-east-1"]},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 9},
        "canary": {"type": "boolean"},
        "note": {"type": "string", "maxLength": 40},
    },
    "required": ["region", "replicas"],
}


def asking(reason: dict[str, Any]) -> Callable[..., Agent]:
    """An agent whose one tool raises an interrupt whose reason is ``reason``; the response it receives is kept."""

    def build(*, session_id: str, store: SessionStore) -> Agent:
        client: redis.Redis = store.client

        @tool
        def ask_user(tool_context: ToolContext) -> str:
            """Ask the person."""
            response = tool_context.interrupt("ask-user", reason=reason)
            client.set(RECEIVED, json.dumps(response))
            return json.dumps(response)

        def respond(messages: list[Message]) -> Any:
            done = any("toolResult" in block for block in messages[-1]["content"])
            return text_turn("thanks") if done else tool_turn(("t1", "ask_user", {}))

        return Agent(ScriptedModel(respond), [ask_user], session_id=session_id, store=store)

    return build


def received(client: redis.Redis) -> Any:
    kept = client.get(RECEIVED)
    return None if kept is None else json.loads(kept)


def asked(bot: Bot) -> dict[str, Any]:
    bot.mention("set up the deploy")
    bot.drain()
    [message] = bot.approval_messages()
    return message


def answered_message(bot: Bot) -> str:
    [message] = bot.approval_messages()
    assert is_decided(message)
    assert not [block for block in message["blocks"] if block["type"] == "actions"]
    return json.dumps(message["blocks"], ensure_ascii=False)


def test_one_of_a_few_options_is_a_button_each_and_a_click_answers_with_its_label(redis_client: redis.Redis) -> None:
    reason = {"question": "Which region?", "options": [*REGIONS[:2], {"label": "<!here>", "description": "*all*"}]}
    with running_bot(redis_client, agent_factory=asking(reason)) as bot:
        message = asked(bot)
        shown = json.dumps(message["blocks"])
        assert "Question from the agent" in shown
        assert "Approval needed" not in shown
        elements = actions_of(message)
        assert [element["action_id"] for element in elements] == [
            *(f"{ids.CHOOSE_PREFIX}{index}" for index in range(3)),
            ids.DISCUSS_ACTION,
        ]
        assert [element["text"]["text"] for element in elements[:3]] == [*REGIONS[:2], "<!here>"]
        assert "&lt;!here&gt;" in shown
        assert "<!here>" not in shown.replace('"text": "<!here>"', "")
        assert click_option(bot, message, 1, user=REQUESTER).status == 200
        bot.drain()

        assert received(redis_client) == "us-east-1"
        shown = answered_message(bot)
        assert f"Answered by <@{REQUESTER}>" in shown
        assert "us-east-1" in shown
        bot.wait_told(REQUESTER, "Your answer to the question `Which region?` was sent to the agent.")
        audit = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
        assert (audit[-1].details["decision"], audit[-1].details["answer"]) == ("answer", "us-east-1")


def test_several_options_are_a_multi_select_and_send_answers_with_the_labels_in_the_questions_order(
    redis_client: redis.Redis,
) -> None:
    reason = {"question": "Where?", "options": REGIONS, "multiple": True}
    with running_bot(redis_client, agent_factory=asking(reason)) as bot:
        message = asked(bot)
        kinds = [element["type"] for element in actions_of(message)]
        assert kinds == ["multi_static_select", "button", "button"]
        assert send_chosen(bot, message, [], user=REQUESTER).status == 200
        bot.wait_told(REQUESTER, "Choose an option first, then send your answer. Nothing was sent.")
        assert send_chosen(bot, message, ["2", "0"], user=REQUESTER).status == 200
        bot.drain()

        assert received(redis_client) == ["eu-west-1", "ap-south-1"]
        assert "• ap-south-1" in answered_message(bot)


def test_many_options_are_a_select_and_send_answers_with_the_one_chosen(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "Which?", "options": MANY})) as bot:
        message = asked(bot)
        [select, send, _discuss] = actions_of(message)
        assert select["type"] == "static_select"
        assert len(select["options"]) == len(MANY)
        assert send["action_id"] == ids.SEND_CHOICE_ACTION
        assert send_chosen(bot, message, ["11"], user=REQUESTER).status == 200
        bot.drain()
        assert received(redis_client) == "region-11"


def test_forged_options_and_answers_of_another_kind_are_refused_and_change_nothing(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "Which?", "options": REGIONS})) as bot:
        message = asked(bot)
        approval_id = bot.approval_id()
        session_id = bot.services.stores.approvals.session_of(approval_id)
        assert session_id is not None
        for index in (3, 99):  # options the question does not offer
            forged = ids.choice_button_value(index, approval_id, session_id)
            assert click_option(bot, message, 0, user=REQUESTER, value=forged).status == 200
        assert send_chosen(bot, message, ["0", "1"], user=REQUESTER).status == 200  # two, where one is asked
        assert send_chosen(bot, message, ["x"], user=REQUESTER).status == 200
        bot.click(ids.ANSWER_ACTION, approval_id, user=REQUESTER)  # words, for a question of options
        bot.click(ids.APPROVE_ACTION, approval_id, user=REQUESTER)
        bot.reply("eu-west-1", user=REQUESTER, thread_ts=message["thread_ts"])  # discussion, not the answer
        bot.drain()
        assert click_option(bot, message, 0, user=OUTSIDER).status == 200  # not asked of them
        bot.drain()

        assert not is_decided(bot.approval_messages()[0])
        assert received(redis_client) is None
        refused = [text for text in bot.ephemeral_texts(REQUESTER) if text.startswith("That does not fit")]
        assert len(refused) == 6
        bot.wait_told(OUTSIDER, f"This question is not for you: only <@{REQUESTER}> may answer it.")
        assert bot.slack.calls("views.open") == []

        assert click_option(bot, message, 2, user=REQUESTER).status == 200  # the real one still answers
        bot.drain()
        assert received(redis_client) == "ap-south-1"


def test_the_decide_script_refuses_an_answer_of_another_kind_than_the_questions(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "Which?", "options": REGIONS})) as bot:
        message = asked(bot)
        origin = Origin("message", TEAM, TEAM, CHANNEL, message["ts"], message["thread_ts"])
        attempts: list[dict[str, Any]] = [
            {"reason": "eu-west-1"},  # words
            {"reason": None, "filled_in": {"region": "eu-west-1"}},  # a form's object
            {"reason": None, "choices": (0, 0)},  # one option twice
            {"reason": None, "choices": (-1,)},
        ]
        for given in attempts:
            outcome = bot.services.decisions.decide(
                bot.approval_id(), user_id=REQUESTER, kind="answer", source="button", origin=origin, **given
            )
            assert outcome.status is Status.WRONG_ACTION, given
        chosen = bot.services.decisions.decide(
            bot.approval_id(), user_id=REQUESTER, kind="answer", reason=None, source="button", origin=origin, choices=()
        )
        assert chosen.status is Status.INVALID
        bot.drain()
        assert received(redis_client) is None


def test_two_people_answering_at_once_one_answer_wins_and_the_other_is_told(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n"
        "  - name: release-questions\n"
        "    match: {interrupts: [ask-user]}\n"
        f"    approvers: {{users: [{APPROVER}, {SECOND_APPROVER}]}}\n"
    )
    with running_bot(
        redis_client, agent_factory=asking({"question": "Which?", "options": REGIONS}), policy_path=policy
    ) as bot:
        message = asked(bot)
        results: list[PostResult] = []
        clicks = [
            threading.Thread(
                target=lambda who=who, index=index: results.append(click_option(bot, message, index, user=who))
            )
            for who, index in ((APPROVER, 0), (SECOND_APPROVER, 1))
        ]
        for each in clicks:
            each.start()
        for each in clicks:
            each.join()
        bot.drain()

        assert [result.status for result in results] == [200, 200]
        answer = received(redis_client)
        winner, loser = (APPROVER, SECOND_APPROVER) if answer == "eu-west-1" else (SECOND_APPROVER, APPROVER)
        assert answer == {APPROVER: "eu-west-1", SECOND_APPROVER: "us-east-1"}[winner]
        assert f"Answered by <@{winner}>" in answered_message(bot)
        bot.drain()
        assert [text for text in bot.ephemeral_texts(loser) if text.startswith(f"Already answered by <@{winner}>")]
        decisions = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
        assert len(decisions) == 1


def test_a_form_opens_from_the_schema_refuses_under_the_field_then_answers_with_the_object(
    redis_client: redis.Redis,
) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "How to deploy?", "schema": FORM})) as bot:
        message = asked(bot)
        [fill, _discuss] = actions_of(message)
        assert (fill["action_id"], fill["text"]["text"]) == (ids.ANSWER_ACTION, "Fill in")
        view = bot.open_answer(bot.approval_id(), user=REQUESTER)
        labels = [block["label"]["text"] for block in view["blocks"] if block["type"] == "input"]
        assert labels == ["region", "replicas", "canary", "note"]

        refused = bot.submit_answer_form(
            view, user=REQUESTER, changes={"region": "eu-west-1", "replicas": "12", "note": "x" * 41}
        )
        assert refused.status == 200
        errors = refused.json()["errors"]
        assert set(errors) == {view["blocks"][2]["block_id"]}  # replicas: the first problem, under its field
        assert errors[view["blocks"][2]["block_id"]] == "At most 9."
        assert received(redis_client) is None
        assert not is_decided(bot.approval_messages()[0])

        changes = {"region": "us-east-1", "replicas": "3", "canary": True, "note": "<@U0EVIL>"}
        accepted = bot.submit_answer_form(view, user=REQUESTER, changes=changes)
        assert accepted.status == 200
        assert accepted.json_object() in (None, {})
        bot.drain()

        expected = {"region": "us-east-1", "replicas": 3, "canary": True, "note": "<@U0EVIL>"}
        assert received(redis_client) == expected
        shown = answered_message(bot)
        assert "&lt;@U0EVIL&gt;" in shown
        assert "<@U0EVIL>" not in shown


def test_a_question_the_bot_cannot_offer_as_asked_is_asked_in_words_and_says_why(redis_client: redis.Redis) -> None:
    reason = {"question": "Which?", "options": ["ok", "x" * 80]}
    with running_bot(redis_client, agent_factory=asking(reason)) as bot:
        message = asked(bot)
        assert "options[1].label: at most 75 characters" in json.dumps(message["blocks"])
        assert [element["action_id"] for element in actions_of(message)] == [ids.ANSWER_ACTION, ids.DISCUSS_ACTION]
        assert bot.submit_answer(bot.approval_id(), user=REQUESTER, answer="ok then").status == 200
        bot.drain()
        assert received(redis_client) == "ok then"


def test_an_unanswered_question_of_options_expires_into_no_answer(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - name: quick\n    match: {interrupts: [ask-user]}\n    expiry: {after: 1s, outcome: deny}\n"
    )
    with running_bot(
        redis_client, agent_factory=asking({"question": "Which?", "options": MANY}), policy_path=policy
    ) as bot:
        asked(bot)
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert bot.services.decisions.expire(approval, outcome="deny").status == "decided"
        bot.drain()
        assert received(redis_client) == NO_ANSWER
        assert "Nobody answered in time" in answered_message(bot)


def test_app_home_lists_a_question_of_options_with_its_buttons(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "Which?", "options": REGIONS})) as bot:
        asked(bot)
        home = bot.open_home(REQUESTER)
        buttons = [
            element["action_id"]
            for block in home["blocks"]
            if block["type"] == "actions"
            for element in block["elements"]
        ]
        assert f"{ids.CHOOSE_PREFIX}0" in buttons
        assert blocks.approval_id_shown(bot.approval_messages()[0]) == bot.approval_id()


def test_a_question_answered_by_a_typed_reply_is_not_posted_again_in_its_thread(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=asking({"question": "Anything to add?"})) as bot:
        message = asked(bot)
        bot.reply("ship it after lunch", user=REQUESTER, thread_ts=message["thread_ts"])
        bot.drain()
        bot.drain()
        assert received(redis_client) == "ship it after lunch"
        posted = [str(each.get("text", "")) for each in bot.slack.messages(CHANNEL, message["thread_ts"])]
        assert len(posted) > 1, "the bot's thread holds the question and its answered notice"
        assert not any("ship it after lunch" in text for text in posted), "the person's reply shows it already"
