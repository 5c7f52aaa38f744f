"""A Web API client that stalls one method until the test lets it go (a worker paused mid-delivery)."""

import threading
from typing import Any

from slack_sdk import WebClient


class HeldClient(WebClient):
    """``WebClient`` whose next call of ``held`` (``"chat_postMessage"``, ``"chat_update"``) waits for ``release``.

    ``waiting`` is set when the call has been made and is held, before it reaches Slack. Later calls pass.
    """

    def __init__(self, held: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.held = held
        self.waiting = threading.Event()
        self.release = threading.Event()

    def api_call(self, api_method: str, **kwargs: Any) -> Any:
        if api_method.replace(".", "_") == self.held and not self.waiting.is_set():
            self.waiting.set()
            assert self.release.wait(10), "never released"
        return super().api_call(api_method, **kwargs)
