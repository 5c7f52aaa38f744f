"""Claude Code's ``"type": "http"`` hooks: what the CLI POSTs for a tool call, and how long the bot may hold it.

Claude Code (2.1.x) POSTs the hook input as JSON: ``session_id``, ``transcript_path``, ``cwd``,
``permission_mode``, ``hook_event_name``, ``tool_name``, ``tool_input`` and, for ``PreToolUse`` only,
``tool_use_id`` (``PermissionRequest`` carries ``permission_suggestions`` instead). Fields this model does
not name are ignored: each CLI version adds some (``prompt_id``, ``effort``), and none changes what is asked.
"""

import re
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from bot.domain.api_requests import AskedTool, ToolInput, UnicodeText

HookEvent = Literal["PreToolUse", "PermissionRequest"]
OnTimeout = Literal["deny", "ask"]

MAX_WAIT_S: Final = 590
"""The longest a hook call is held: 10 s under the CLI's default hook timeout (600 s), for the withdrawal and the
answer to reach it first."""
DEFAULT_WAIT_S: Final = 290
"""How long a hook call is held when its URL names no ``wait``: under a ``"timeout": 300`` (the documented
snippet) and under the CLI's default."""
WAIT_PATTERN: Final = "^(?:[1-9][0-9]?|[1-4][0-9]{2}|5[0-8][0-9]|590)s?$"
"""``wait``: whole seconds from 1 to ``MAX_WAIT_S``, with or without ``s``."""
_WAIT: Final = re.compile(WAIT_PATTERN)


def wait_seconds(value: str) -> int | None:
    """The seconds ``value`` names as a hook's ``wait``, or ``None`` when it is not one."""
    return int(value.removesuffix("s")) if _WAIT.fullmatch(value) else None


class ClaudeHookInput(BaseModel):
    """The body of ``POST /v1/hooks/claude-code``: a Claude Code hook's input for one tool call."""

    model_config = ConfigDict(extra="ignore", frozen=True, use_attribute_docstrings=True)

    hook_event_name: HookEvent
    """The hook's event: `PreToolUse` (every matching call) or `PermissionRequest` (the calls Claude Code would
    ask a person about)."""
    session_id: Annotated[UnicodeText, Field(min_length=1, max_length=100)]
    """The Claude Code session (named on the request in Slack)."""
    cwd: Annotated[UnicodeText, Field(min_length=1, max_length=4096)]
    """The session's working directory (named on the request in Slack)."""
    tool_name: AskedTool
    """The tool Claude Code wants to run (policy rules match it)."""
    tool_input: ToolInput
    """Its input, shown in Slack; an approver may edit it."""
    tool_use_id: Annotated[UnicodeText, Field(min_length=1, max_length=100)] | None = None
    """The tool use (sent with `PreToolUse`): the same session and tool use ask once, however often they call."""
    permission_mode: Annotated[UnicodeText, Field(max_length=100)] | None = None
    """The session's permission mode (`default`, `plan`, `acceptEdits`...)."""

    def idempotency_key(self) -> str | None:
        """The one request this tool use maps to (``None`` without a tool use id: each call asks anew)."""
        if self.tool_use_id is None:
            return None
        return f"claude-code:{self.session_id}:{self.tool_use_id}"
