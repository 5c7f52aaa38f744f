"""The shape of a Web API method: the fake's workspace and the call's arguments in, the answer's fields out."""

from collections.abc import Callable, Mapping
from typing import Any

from bot.loopback_slack.state import WorkspaceState

JsonDict = dict[str, Any]

# Runs with the fake's lock held; raises ``SlackError`` for an ``ok: false`` answer.
Method = Callable[[WorkspaceState, JsonDict], JsonDict]
MethodTable = Mapping[str, Method]
