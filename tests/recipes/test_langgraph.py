"""The LangGraph recipe with the real library: ``interrupt()`` in a node, the sign-off asked through the HTTP
API and decided in the loopback Slack, the graph resumed with ``Command(resume=decision)``."""

from bot.render import action_ids as ids
from recipes.langgraph_interrupt import build_graph, run_with_signoff
from tests.bot.support.deciders import person_in_slack
from tests.bot.support.harness import Bot
from tests.bot.support.people import APPROVER, CHANNEL


def test_an_approval_resumes_the_node_which_deploys(bot: Bot, api_key: str) -> None:
    with person_in_slack(bot, lambda approval_id: bot.click(ids.APPROVE_ACTION, approval_id, user=APPROVER)):
        result = run_with_signoff(
            build_graph(), {"service": "checkout"}, thread_id="t1", api_url=bot.url, api_key=api_key, channel=CHANNEL
        )
    assert result["outcome"] == "deployed checkout"
    [message] = bot.approval_messages()
    assert "deploy" in message["text"]


def test_a_denial_resumes_the_node_which_does_not_deploy_and_says_why(bot: Bot, api_key: str) -> None:
    deny = lambda approval_id: bot.submit_deny(approval_id, user=APPROVER, reason="freeze week")  # noqa: E731
    with person_in_slack(bot, deny):
        result = run_with_signoff(
            build_graph(), {"service": "checkout"}, thread_id="t2", api_url=bot.url, api_key=api_key, channel=CHANNEL
        )
    assert result["outcome"] == "not deployed (denied: freeze week)"
