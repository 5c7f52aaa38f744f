"""The tests' fake Slack: ``bot.loopback_slack.LoopbackSlack`` (the sandbox's stand-in) plus a Socket Mode server.

The Web API lives in the product (the sandbox serves it to the bot); this module adds what only the tests use, through
the extension point ``LoopbackSlack.socket_mode_url``: ``apps.connections.open`` answers with a ``ws://`` URL on a
``FakeSocketModeServer`` started on first use (``fake.socket_mode``); push envelopes to the connected app and read
its acks there.
"""

from __future__ import annotations

from bot.loopback_slack import Call, LoopbackSlack, ts_key
from tests.bot.support.fake_socket_mode import FakeSocketModeServer

__all__ = ["Call", "FakeSlack", "ts_key"]


class FakeSlack(LoopbackSlack):
    """``bot.loopback_slack.LoopbackSlack`` with Socket Mode (``socket_mode``), closed with the fake."""

    _socket_mode: FakeSocketModeServer | None = None

    @property
    def socket_mode(self) -> FakeSocketModeServer:
        """The Socket Mode server ``apps.connections.open`` points at, started on first use; closed with the fake."""
        with self.lock:
            if self._socket_mode is None:
                self._socket_mode = FakeSocketModeServer(app_id=self.identity.app_id).start()
            return self._socket_mode

    def socket_mode_url(self) -> str:
        return self.socket_mode.issue_url()

    def close(self) -> None:
        with self.lock:
            socket_mode, self._socket_mode = self._socket_mode, None
        if socket_mode is not None:
            socket_mode.close()
        super().close()
