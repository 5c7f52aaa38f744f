"""A tiny client for the sandbox page's own endpoints (what the page's JavaScript calls)."""

import json
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from bot.sandbox.people import CHANNEL

JsonDict = dict[str, Any]

REQUESTER = "USBXREQ"
APPROVER = "USBXAPPR"
OUTSIDER = "USBXOUTSIDE"
ONCALL = "USBXONCALL"


class PageClient:
    """Calls ``/sandbox/*`` on a running sandbox as the page does."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")

    def get(self, path: str) -> tuple[int, bytes]:
        with urllib.request.urlopen(self.base_url + path, timeout=20) as response:
            return response.status, response.read()

    def post(self, name: str, **body: Any) -> JsonDict:
        request = urllib.request.Request(
            f"{self.base_url}/sandbox/{name}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=20) as response:
            answer: JsonDict = json.loads(response.read())
        assert answer["ok"], answer
        return answer

    def state(self, user: str) -> JsonDict:
        status, body = self.get(f"/sandbox/state?user={user}")
        assert status == 200
        answer: JsonDict = json.loads(body)
        return answer

    def channel_messages(self, user: str = REQUESTER) -> list[JsonDict]:
        state = self.state(user)
        return next(c["messages"] for c in state["channels"] if c["id"] == CHANNEL)

    def wait_for(self, check: Callable[[], Any], timeout: float = 20) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            found = check()
            if found:
                return found
            assert time.monotonic() < deadline, "timed out waiting for the sandbox"
            time.sleep(0.1)


def buttons(message: JsonDict) -> list[str]:
    """The action ids of a message's buttons."""
    return [
        element.get("action_id", "")
        for block in message.get("blocks") or []
        if block.get("type") == "actions"
        for element in block.get("elements") or []
    ]
