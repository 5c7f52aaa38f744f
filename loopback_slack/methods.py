"""The shape of a Web API method: the fake's workspace and the call's arguments in, the answer's fields out.

And of what runs around every method's answer (``LoopbackSlack.around_method``).
"""

from collections.abc import Callable, Mapping
from typing import Any

from loopback_slack.calls import Answer
from loopback_slack.state import WorkspaceState

JsonDict = dict[str, Any]

# Runs with the fake's lock held; raises ``SlackError`` for an ``ok: false`` answer.
Method = Callable[[WorkspaceState, JsonDict], JsonDict]
MethodTable = Mapping[str, Method]

# Around every method's answer, with the fake's lock held: the method's name, the call's arguments and a function
# giving the method's own answer in; that answer, held back (``Answer.delay``) or not, or another one instead, out.
AroundMethod = Callable[[str, JsonDict, Callable[[], Answer]], Answer]
