"""Red team: a slash command that cannot be carried out tells the person why."""

from bot.render import action_ids as ids
from loopback_slack import slack_requests
from tests.bot.support.harness import Bot
from tests.bot.support.people import REQUESTER


def test_agent_command_in_a_channel_the_bot_is_not_in_says_so(bot: Bot) -> None:
    bot.slack.error_next("chat.postMessage", "not_in_channel")
    command = slack_requests.slash_command(
        command=ids.AGENT_COMMAND,
        user_id=REQUESTER,
        channel_id="C0NOTJOINED",
        text="restart checkout",
        response_url=bot.slack.response_url(channel="C0NOTJOINED"),
    )
    assert bot.poster.post_command(command).status == 200
    bot.drain()
    told = bot.slack.wait_for("response_url", timeout=5)
    assert told, "the person was never told their /agent request failed"
