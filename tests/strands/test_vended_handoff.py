"""Strands' ``handoff_to_user`` behind the bot: a question in the thread, answered in words by the person it asks.

Before, it was posted as "Approval needed: handoff_to_user" that only approvers could decide, a typed answer got no
response, and after an Approve the model received the whole decision record as the person's answer.
"""

import json
from pathlib import Path

import redis

from agent.approval import NO_ANSWER
from bot.domain.clock import ManualClock
from bot.render import action_ids as ids
from tests.bot.support.harness import Bot, home_click, is_decided, running_bot
from tests.bot.support.people import APPROVER, REQUESTER, SECOND_APPROVER
from tests.redis_targets import on_both
from tests.strands.native import completions
from tests.strands.vended import REGION_QUESTION, handoff_agent

pytest_generate_tests = on_both  # every case on one server and on a cluster


def _asked(bot: Bot) -> str:
    bot.mention("deploy checkout")
    bot.drain()
    [message] = bot.approval_messages()
    return json.dumps(message["blocks"])


def test_the_question_is_shown_as_a_question_asked_of_the_requester(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=handoff_agent) as bot:
        shown = _asked(bot)
        assert "Question from the agent" in shown
        assert REGION_QUESTION in shown
        assert "Approval needed" not in shown
        assert f"May answer: <@{REQUESTER}>" in shown
        buttons = [element["action_id"] for element in bot.approval_messages()[0]["blocks"][-1]["elements"]]
        assert buttons == [ids.ANSWER_ACTION, ids.DISCUSS_ACTION]
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.request.question is not None
        assert approval.request.question.text == REGION_QUESTION
        assert approval.request.response_shape == "answer"


def test_the_requesters_answer_is_the_tools_result_exactly(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=handoff_agent) as bot:
        _asked(bot)
        answer = "  eu-west-1, *not* us-east-1 <@U0EVIL>  "  # sent as written: spaces, markup and all
        assert bot.submit_answer(bot.approval_id(), user=REQUESTER, answer=answer).status == 200
        bot.drain()

        assert bot.texts_posted()[-1] == "deployed to '  eu-west-1, *not* us-east-1 &lt;@U0EVIL&gt;  '"
        assert completions(redis_client, "deploy") == 1
        [message] = bot.approval_messages()
        assert is_decided(message)
        shown = json.dumps(message["blocks"])
        assert f"Answered by <@{REQUESTER}>" in shown
        assert "&lt;@U0EVIL&gt;" in shown
        assert "<@U0EVIL>" not in shown
        assert any("was sent to the agent" in text for text in bot.ephemeral_texts(REQUESTER))
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.decision is not None
        assert (approval.decision.decision, approval.decision.answer) == ("answer", answer)
        audit = [entry for entry in bot.services.stores.audit.entries() if entry.event == "decision"]
        assert (audit[-1].details["decision"], audit[-1].details["answer"]) == ("answer", answer)


def test_someone_it_is_not_asked_of_cannot_answer(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=handoff_agent) as bot:
        _asked(bot)
        bot.click(ids.ANSWER_ACTION, bot.approval_id(), user=APPROVER)
        bot.wait_told(APPROVER, f"This question is not for you: only <@{REQUESTER}> may answer it.")
        bot.click(ids.APPROVE_ACTION, bot.approval_id(), user=REQUESTER)  # a forged Approve on a question
        bot.drain()
        assert not is_decided(bot.approval_messages()[0])
        assert completions(redis_client, "deploy") == 0


def test_a_reply_in_the_thread_from_the_requester_answers_and_anyone_elses_is_discussion(
    redis_client: redis.Redis,
) -> None:
    with running_bot(redis_client, agent_factory=handoff_agent) as bot:
        _asked(bot)
        thread_ts = str(bot.approval_messages()[0]["thread_ts"])
        bot.reply("I'd say us-east-2", user=APPROVER, thread_ts=thread_ts)
        bot.drain()
        assert not is_decided(bot.approval_messages()[0])

        bot.reply("eu-central-1", user=REQUESTER, thread_ts=thread_ts)
        bot.drain()

        assert bot.texts_posted()[-1] == "deployed to 'eu-central-1'"
        approval = bot.services.stores.approvals.find(bot.approval_id())
        assert approval is not None
        assert approval.decision is not None
        assert approval.decision.answer == "eu-central-1"
        assert [entry.text for entry in approval.decision.discussion] == ["I'd say us-east-2"]
        unauthorized = [entry for entry in bot.services.stores.audit.entries() if entry.event == "unauthorized"]
        assert unauthorized == []  # a colleague's reply is discussion, not a refused attempt


def test_a_rule_naming_deciders_asks_them_and_one_answer_wins(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - name: regions\n    match: {tools: [handoff_to_user]}\n"
        f"    approvers: {{users: [{APPROVER}, {SECOND_APPROVER}]}}\n"
    )
    with running_bot(redis_client, agent_factory=handoff_agent, policy_path=policy) as bot:
        _asked(bot)
        approval_id = bot.approval_id()
        first = bot.open_answer(approval_id, user=APPROVER)
        second = bot.open_answer(approval_id, user=SECOND_APPROVER)
        assert bot.submit_answer(approval_id, user=APPROVER, answer="ap-south-1", view=first).status == 200
        late = bot.submit_answer(approval_id, user=SECOND_APPROVER, answer="sa-east-1", view=second)
        bot.drain()

        assert "Already answered by <@U0APPROVER>" in late.body
        assert bot.texts_posted()[-1] == "deployed to 'ap-south-1'"
        assert completions(redis_client, "deploy") == 1


def test_an_unanswered_question_expires_and_the_tool_sees_there_is_no_answer(
    redis_client: redis.Redis, tmp_path: Path
) -> None:
    policy = tmp_path / "policy.yml"
    # Even a rule that approves on expiry answers nobody's question for them.
    policy.write_text(
        "rules:\n  - name: regions\n    match: {tools: [handoff_to_user]}\n"
        "    low_risk: true\n    expiry: {after: 30m, outcome: approve}\n"
    )
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=handoff_agent, policy_path=policy, clock=clock) as bot:
        _asked(bot)
        clock.advance(31 * 60)
        bot.drain()

        assert bot.texts_posted()[-1] == f"deployed to {NO_ANSWER!r}"  # the scripted model deploys whatever it reads
        shown = json.dumps(bot.approval_messages()[0]["blocks"])
        assert "Nobody answered in time" in shown


def test_app_home_lists_the_question_for_whom_it_asks_and_answers_from_there(redis_client: redis.Redis) -> None:
    with running_bot(redis_client, agent_factory=handoff_agent) as bot:
        _asked(bot)
        assert REGION_QUESTION not in json.dumps(bot.open_home(APPROVER)["blocks"])
        home = bot.open_home(REQUESTER)
        assert REGION_QUESTION in json.dumps(home["blocks"])
        [answer_button] = [
            element
            for block in home["blocks"]
            if block["type"] == "actions"
            for element in block["elements"]
            if element["action_id"] == ids.ANSWER_ACTION
        ]
        opened = len(bot.slack.calls("views.open"))
        click = home_click(ids.ANSWER_ACTION, answer_button["value"], user=REQUESTER)
        assert bot.poster.post_action(click).status == 200
        view = dict(bot.slack.wait_for("views.open", count=opened + 1)[-1].response["view"])
        assert bot.submit_answer(bot.approval_id(), user=REQUESTER, answer="us-west-2", view=view).status == 200
        bot.drain()

        assert bot.texts_posted()[-1] == "deployed to 'us-west-2'"
        assert "Answered by" in json.dumps(bot.open_home(REQUESTER)["blocks"])  # among the recent decisions


def test_reminders_and_escalation_speak_of_the_question(redis_client: redis.Redis, tmp_path: Path) -> None:
    policy = tmp_path / "policy.yml"
    policy.write_text(
        "rules:\n  - name: regions\n    match: {tools: [handoff_to_user]}\n    reminders: {every: 10m}\n"
        f"    escalation: {{levels: [{{after: 15m, targets: {{users: [{APPROVER}]}}}}]}}\n"
    )
    clock = ManualClock()
    with running_bot(redis_client, agent_factory=handoff_agent, policy_path=policy, clock=clock) as bot:
        _asked(bot)
        clock.advance(11 * 60)
        bot.drain()
        assert f"Still waiting for an answer to the question `{REGION_QUESTION}`" in bot.texts_posted()[-1]
        clock.advance(5 * 60)
        bot.drain()
        assert any(
            f"<@{APPROVER}>" in text and "has waited 16 min for an answer" in text for text in bot.texts_posted()
        ), bot.texts_posted()
