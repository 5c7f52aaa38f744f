"""People in the loopback Slack who act on approval requests as soon as their messages are posted.

For clients that block while they wait (the MCP server, the recipes): the worker runs in a thread, and
each new request's message gets ``act(approval_id)`` once.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.bot.support.harness import Bot, is_decided


@contextmanager
def person_in_slack(bot: Bot, act: Callable[[str], Any]) -> Iterator[list[str]]:
    """Run the worker and ``act`` on each undecided request once; yield the approval ids acted on."""
    stop = threading.Event()
    acted: list[str] = []

    def work() -> None:
        while not stop.wait(0.05):
            bot.drain()
            for index, message in enumerate(bot.approval_messages()):
                approval_id = bot.approval_id(index)
                if approval_id not in acted and not is_decided(message):
                    acted.append(approval_id)
                    act(approval_id)

    thread = threading.Thread(target=work, name="person-in-slack", daemon=True)
    thread.start()
    try:
        yield acted
    finally:
        stop.set()
        thread.join(10)
