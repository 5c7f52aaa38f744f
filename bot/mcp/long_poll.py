"""The MCP tools' one waiting loop: long-poll the API until a request is settled, reporting progress meanwhile.

Every tool that waits for people (an approval's decision, a question's answer) waits here. A web process that
restarts while a tool waits, or refuses the wait for now (429: it holds its most long-polls; asked again after
``Retry-After``), is asked again until the wait's deadline; a deadline reached while still pending withdraws the
request (nobody answers what nobody waits for any more).
"""

import functools
import time
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
from mcp.server.mcpserver import Context

from bot.domain.api_requests import RequestKind
from bot.mcp.api_client import ApiError, SignoffApi
from bot.render.texts import waiting

_POLL_S: Final = 20
_WITHDRAW_ON_CANCEL_S: Final = 10
_RETRYABLE: Final = (0, 429, 502, 503, 504)  # unreachable, restarting, or holding its most waits: ask again


@dataclass
class LongPoll:
    """Waits on requests of one tool call, all against one deadline: ``timeout_s`` from when it was made."""

    api: SignoffApi
    ctx: Context
    timeout_s: int
    started: float = field(default_factory=time.monotonic)

    async def settled(self, request: dict[str, Any], *, kind: RequestKind) -> dict[str, Any]:
        """``request`` (as the API showed it) once no longer pending: decided, answered, expired or withdrawn.

        A call its client abandons (cancelled: Claude Code's tool timeout, Esc) withdraws the request too: nobody
        waits for its decision any more, and a person's click must not seem to decide anything.

        Raises:
            ApiError: The API refused the wait for good (not a restart, not a 429).
        """
        try:
            return await self._waited(request, kind=kind)
        except anyio.get_cancelled_exc_class():
            # Decided meanwhile (409), or unreachable: its expiry ends it.
            with anyio.CancelScope(shield=True), anyio.move_on_after(_WITHDRAW_ON_CANCEL_S), suppress(ApiError):
                await self.withdraw(request["id"], kind=kind, abandon_on_cancel=True)
            raise

    async def _waited(self, request: dict[str, Any], *, kind: RequestKind) -> dict[str, Any]:
        while request["status"] == "pending":
            waited = time.monotonic() - self.started
            if waited >= self.timeout_s:
                return await self.withdraw(request["id"], kind=kind)
            await self.ctx.report_progress(waited, self.timeout_s, waiting.progress_note(request))
            wait_s = max(1, min(_POLL_S, int(self.timeout_s - waited)))
            try:
                wait = functools.partial(self.api.wait, request["id"], wait_s=wait_s, kind=kind)
                request = await anyio.to_thread.run_sync(wait, abandon_on_cancel=True)
            except ApiError as error:
                if error.status not in _RETRYABLE:
                    raise
                # A 429 says when (Retry-After): the web process is not failing, only full of other waits.
                await anyio.sleep(error.retry_after_s or 1)
        return request

    async def withdraw(self, request_id: str, *, kind: RequestKind, abandon_on_cancel: bool = False) -> dict[str, Any]:
        """Cancel the request; one settled meanwhile is returned as it is."""
        cancel = functools.partial(self.api.cancel, request_id, kind=kind)
        return await anyio.to_thread.run_sync(cancel, abandon_on_cancel=abandon_on_cancel)
