"""The bot's real processes for a test: the Procfile's web command (gunicorn) and ``python -m bot worker``."""

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from bot.render import action_ids as ids
from loopback_slack import slack_requests
from loopback_slack.slack_requests import SignedPoster
from tests.bot.support.fake_slack import FakeSlack
from tests.bot.support.harness import SIGNING_SECRET
from tests.bot.support.people import APPROVER, CHANNEL, REQUESTER
from tests.bot.support.processes import ROOT, bot_environment


@contextmanager
def process(command: list[str], environment: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``command``; stop it (SIGTERM, then SIGKILL) on the way out if it still runs."""
    running = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        yield running
    finally:
        if running.poll() is None:
            running.send_signal(signal.SIGTERM)
            try:
                running.wait(15)
            except subprocess.TimeoutExpired:
                kill(running)


def kill(running: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process and everything it started (gunicorn's workers too), as a crash would end them."""
    with suppress(ProcessLookupError):
        os.killpg(running.pid, signal.SIGKILL)
    running.wait(10)


def web_command(port: int, *, workers: int | None = None, threads: int | None = None) -> list[str]:
    """The Procfile's ``web:`` line, on a loopback ``port`` (with gunicorn's ``--workers``/``--threads`` if given)."""
    procfile = (ROOT / "Procfile").read_text()
    web = next(line for line in procfile.splitlines() if line.startswith("web:")).removeprefix("web:").strip()
    for option, value in (("--workers", workers), ("--threads", threads)):
        if value is not None:
            web, replaced = re.subn(rf"{option} \d+", f"{option} {value}", web)
            assert replaced == 1, f"the Procfile's web line has no {option}"
    return ["/bin/sh", "-c", "exec " + web.replace("$PORT", str(port)).replace("0.0.0.0", "127.0.0.1")]


def environment(**values: str) -> dict[str, str]:
    """The bot's environment with ``values``, gunicorn on PATH."""
    return bot_environment(PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}", **values)


def bot_settings(slack: FakeSlack, redis_url: str, **values: str) -> dict[str, str]:
    """The environment of the bot's processes talking to ``slack`` and the Redis at ``redis_url`` (and ``values``)."""
    return environment(
        SLACK_BOT_TOKEN=slack.token,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=slack.url,
        REDIS_URL=redis_url,
        **values,
    )


def ask_then_approve(port: int, slack: FakeSlack) -> None:
    """The requester asks for a restart through the web process on ``port``; once it is posted, the approver
    approves it there."""
    event = slack_requests.app_mention(user=REQUESTER, channel=CHANNEL, text="<@U0BOT> restart checkout")
    with SignedPoster(f"http://127.0.0.1:{port}/", SIGNING_SECRET) as poster:
        assert poster.post_event(event).status == 200
    slack.wait_for("chat.postMessage", timeout=20)
    click_approve(port, slack)


def click_approve(port: int, slack: FakeSlack) -> None:
    """The approver clicks Approve on the restart_service approval message, through the web process on ``port``."""
    [message] = [m for m in slack.messages(CHANNEL) if "restart_service" in m.get("text", "")]
    approval_id = next(
        str(element["value"])
        for block in message["blocks"]
        if block["type"] == "actions"
        for element in block["elements"]
        if element["action_id"] == ids.APPROVE_ACTION
    )
    payload = slack_requests.block_actions(
        action_id=ids.APPROVE_ACTION,
        user_id=APPROVER,
        channel_id=CHANNEL,
        message_ts=message["ts"],
        thread_ts=message.get("thread_ts"),  # as Slack sends it: a click within moments of the post is placed by it
        value=approval_id,
        blocks=message["blocks"],
        response_url=slack.response_url(channel=CHANNEL, message_ts=message["ts"]),
    )
    with SignedPoster(f"http://127.0.0.1:{port}/", SIGNING_SECRET) as poster:
        assert poster.post_action(payload).status == 200
