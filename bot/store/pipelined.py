"""One Lua script run many times (each call atomic) in one round trip.

redis-py's registered scripts check that the server knows them (``SCRIPT EXISTS``) before every
pipeline: a round trip more. Here each call is an ``EVALSHA`` straight in the pipeline; if the
server lost its scripts (a restart, a failover), the script is loaded once and only the calls it
refused run again (they did nothing).
"""

from collections.abc import Sequence
from typing import Any

import redis
from redis.commands.core import Script
from redis.exceptions import NoScriptError


def run_each(client: redis.Redis, script: Script, calls: Sequence[tuple[Sequence[str], Sequence[Any]]]) -> list[Any]:
    """Run ``script`` once per ``(keys, args)``; return each call's answer, or the error it raised (not raised)."""
    results = _run(client, script, calls)
    missing = [index for index, result in enumerate(results) if isinstance(result, NoScriptError)]
    if missing:
        client.script_load(script.script)
        for index, result in zip(missing, _run(client, script, [calls[index] for index in missing]), strict=True):
            results[index] = result
    return results


def _run(client: redis.Redis, script: Script, calls: Sequence[tuple[Sequence[str], Sequence[Any]]]) -> list[Any]:
    pipeline = client.pipeline(transaction=False)
    for keys, args in calls:
        # Through execute_command: a cluster pipeline refuses its evalsha() method, not the command.
        pipeline.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)  # type: ignore[no-untyped-call]
    return list(pipeline.execute(raise_on_error=False))
