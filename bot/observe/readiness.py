"""Whether a web process can serve: Redis answers, the bot's Lua scripts are on the server, Slack takes the token.

``/readyz`` runs these checks on every probe; Slack's answer is kept for ``slack_cache_s`` so that
a probe every few seconds from every replica does not turn into a stream of ``auth.test`` calls.

Only a token Slack refuses makes the process not ready. A Slack that cannot be reached (refused, timed out, a 5xx
or 429) leaves it *degraded*: clicks, commands and the HTTP API need no Slack call (their Slack side waits in the
outbox), and every replica would fail alike, so taking them out of the load balancer would only refuse people.
"""

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from hashlib import sha1
from typing import Final

import redis
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

logger = logging.getLogger(__name__)

SLACK_CACHE_S: Final = 30.0
SLACK_TIMEOUT_S: Final = 2
"""How long the probe waits for ``auth.test``: under a probe's usual 3 s timeout, so that a Slack taking connections
and answering nothing reads as out of reach (degraded) rather than failing the probe."""
CHECKS: Final = ("redis", "scripts", "slack")
TOKEN_GONE: Final = frozenset({"invalid_auth", "token_revoked", "account_inactive", "not_authed"})
"""Slack's answers that the token will never work again (not an outage: an operator must act)."""


@dataclass(frozen=True)
class CheckResult:
    """One check's outcome: ``detail`` says what failed (or ``ok``); a check not run is neither ok nor failed.

    ``degraded``: it passed, but something the process leans on is out of reach (it serves what needs none of it).
    """

    name: str
    ok: bool
    detail: str = "ok"
    checked: bool = True
    degraded: bool = False

    @property
    def failed(self) -> bool:
        """Whether the check ran and did not pass."""
        return self.checked and not self.ok


class Readiness:
    """The checks behind ``/readyz`` (thread-safe: gunicorn's threads probe at once)."""

    def __init__(
        self,
        *,
        redis_client: redis.Redis,
        slack: WebClient | None,
        scripts: Sequence[str],
        slack_cache_s: float = SLACK_CACHE_S,
        slack_timeout_s: int = SLACK_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Keep the server and the client whose readiness is checked.

        ``scripts``: the Lua texts that must be loaded on the server (or loadable); ``slack``: the one token's client
        (``None`` in OAuth mode: each workspace's token is checked as it is used, not here), asked through a client of
        its own that waits ``slack_timeout_s`` at most.
        """
        self._redis = redis_client
        self._slack = (
            WebClient(token=slack.token, base_url=slack.base_url, timeout=slack_timeout_s)
            if slack is not None
            else None
        )
        self._scripts = {sha1(text.encode()).hexdigest(): text for text in scripts}
        self._slack_cache_s = slack_cache_s
        self._clock = clock
        self._slack_lock = threading.Lock()
        self._slack_answer: tuple[float, CheckResult] | None = None

    def check(self) -> list[CheckResult]:
        """Every check, in ``CHECKS`` order (the scripts are not asked about when Redis does not answer)."""
        reached = self._check_redis()
        unchecked = CheckResult("scripts", False, "not checked: Redis unreachable", checked=False)
        scripts = self._check_scripts() if reached.ok else unchecked
        return [reached, scripts, self._check_slack()]

    def _check_redis(self) -> CheckResult:
        try:
            self._redis.ping()
        except redis.RedisError as error:
            # The probe's answer may be public (the web process faces Slack): the error's text, which names
            # hosts and ports, goes to the log only.
            logger.warning("readiness: Redis does not answer: %s", error)
            return CheckResult("redis", False, type(error).__name__)
        return CheckResult("redis", True)

    def _check_scripts(self) -> CheckResult:
        shas = list(self._scripts)
        try:
            known = self._redis.script_exists(*shas)
            # A restarted or failed-over server has lost its scripts: loading them again is what the bot would do.
            for sha, loaded in zip(shas, known, strict=True):
                if not loaded:
                    self._redis.script_load(self._scripts[sha])
        except redis.RedisError as error:
            logger.warning("readiness: the scripts cannot be loaded: %s", error)
            return CheckResult("scripts", False, type(error).__name__)
        return CheckResult("scripts", True)

    def _check_slack(self) -> CheckResult:
        with self._slack_lock:  # held while asking: concurrent probes wait for one answer instead of each asking
            now = self._clock()
            if self._slack_answer is not None and now - self._slack_answer[0] < self._slack_cache_s:
                return self._slack_answer[1]
            answer = self._ask_slack()
            self._slack_answer = (now, answer)
            return answer

    def _ask_slack(self) -> CheckResult:
        if self._slack is None:
            return CheckResult("slack", True, "not checked: each installation's token is checked on use", checked=False)
        try:
            self._slack.auth_test()
        except SlackApiError as error:
            code = error.response.get("error") if isinstance(error.response.data, dict) else None
            if code in TOKEN_GONE:
                return CheckResult("slack", False, f"auth.test: {code}")
            logger.warning("readiness: Slack answered %s (%s)", error.response.status_code, code)
            return _degraded(f"auth.test: HTTP {error.response.status_code}: {code}")
        except (SlackClientError, OSError) as error:
            logger.warning("readiness: Slack unreachable: %s", error)
            return _degraded(type(error).__name__)
        return CheckResult("slack", True)


def _degraded(why: str) -> CheckResult:
    return CheckResult("slack", True, f"degraded: Slack unreachable ({why}), still serving", degraded=True)
