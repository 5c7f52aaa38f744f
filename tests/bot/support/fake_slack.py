"""The tests' fake Slack: ``bot.sandbox.slack_api.FakeSlack`` (the sandbox's stand-in) plus a Socket Mode server.

The implementation lives in the product (the sandbox serves it to the bot); this module keeps the tests' imports and
adds what only the tests use: ``apps.connections.open`` answers with a ``ws://`` URL on a ``FakeSocketModeServer``
started on first use (``fake.socket_mode``); push envelopes to the connected app and read its acks there.
"""

from __future__ import annotations

from bot.sandbox.slack_api import RESPONSE_URL_METHOD, Call, JsonDict, parse_request_args, ts_key
from bot.sandbox.slack_api import FakeSlack as _WebApi
from tests.bot.support.fake_socket_mode import FakeSocketModeServer

__all__ = ["RESPONSE_URL_METHOD", "Call", "FakeSlack", "JsonDict", "parse_request_args", "ts_key"]


class FakeSlack(_WebApi):
    """``bot.sandbox.slack_api.FakeSlack`` with Socket Mode (``socket_mode``), closed with the fake."""

    _socket_mode: FakeSocketModeServer | None = None

    @property
    def socket_mode(self) -> FakeSocketModeServer:
        """The Socket Mode server ``apps.connections.open`` points at, started on first use; closed with the fake."""
        with self.lock:
            if self._socket_mode is None:
                self._socket_mode = FakeSocketModeServer(app_id=self.app_id).start()
            return self._socket_mode

    def socket_mode_url(self) -> str:
        return self.socket_mode.issue_url()

    def close(self) -> None:
        with self.lock:
            socket_mode, self._socket_mode = self._socket_mode, None
        if socket_mode is not None:
            socket_mode.close()
        super().close()
