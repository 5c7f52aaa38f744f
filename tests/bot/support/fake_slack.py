"""The tests' fake Slack: ``loopback_slack.LoopbackSlack`` (the sandbox's stand-in) plus what only the tests use.

The Web API lives in the product (the sandbox serves it to the bot); this module adds, through the loopback's
extension points: a Socket Mode server (``socket_mode_url``: ``apps.connections.open`` answers with a ``ws://`` URL on
a ``FakeSocketModeServer`` started on first use, ``fake.socket_mode``; push envelopes to the connected app and read its
acks there), failures (``tests.bot.support.slack_faults``) and ``wait_for``, which blocks until the bot made a call.
"""

from __future__ import annotations

from collections.abc import Callable

from loopback_slack import Call, ts_key
from tests.bot.support.fake_socket_mode import FakeSocketModeServer
from tests.bot.support.slack_faults import FaultySlack

__all__ = ["Call", "FakeSlack", "ts_key"]


class FakeSlack(FaultySlack):
    """``loopback_slack.LoopbackSlack`` with failures, ``wait_for`` and Socket Mode (``socket_mode``)."""

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

    def wait_for(
        self,
        method: str,
        predicate: Callable[[Call], bool] | None = None,
        count: int = 1,
        timeout: float = 5,
    ) -> list[Call]:
        """Block until at least ``count`` calls of ``method`` (matching ``predicate``) were received; return them all.

        Raises ``AssertionError`` after ``timeout`` seconds, listing what did arrive.
        """

        def matching() -> list[Call]:
            return [call for call in self.calls(method) if predicate is None or predicate(call)]

        with self.lock:  # every recorded call notifies it
            satisfied = self.lock.wait_for(lambda: len(matching()) >= count, timeout=timeout)
            found = matching()
            received = [f"{call.method}:{call.status}:{call.error or 'ok'}" for call in self.calls()]
        if not satisfied:
            raise AssertionError(
                f"timed out after {timeout}s waiting for {count} matching {method} call(s); "
                f"{len(found)} matched; received: {received}"
            )
        return found

    def close(self) -> None:
        with self.lock:
            socket_mode, self._socket_mode = self._socket_mode, None
        if socket_mode is not None:
            socket_mode.close()
        super().close()
