"""Who is in a Slack user group or channel: ``usergroups.users.list`` and ``conversations.members``, cached in Redis.

Group members are kept for a few minutes; channel members for one minute, so that someone who
leaves a private channel stops seeing and deciding its requests soon after.

A click never waits for Slack to be up: what Slack last listed is also kept for a day (``KNOWN_SECONDS``). When Slack
cannot be asked (it refuses, times out, errs, limits the rate), that last list stands in for ``STALE_SECONDS`` (then
Slack is asked again); only with no list at all does the call fail (the caller refuses the click and says so). A
Slack that takes the request and never answers is given ``LOOKUP_TIMEOUT_S``, not the client's 30 s: a click waits
for the lookup, and Slack gives the click 3 s.

A cached group record that cannot be read (not JSON, not a list of user ids) is dropped and the
group asked of Slack again: one bad record never refuses every click nor blinds App Home.
"""

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Final

import redis
from slack_sdk import WebClient

from bot.domain.call_errors import SLACK_CALL_ERRORS
from bot.domain.workspaces import SlackClients
from bot.store import keys
from state.text import as_text

logger = logging.getLogger(__name__)

_CACHE_SECONDS: Final = 300
_CHANNEL_CACHE_SECONDS: Final = 60
KNOWN_SECONDS: Final = 86_400
STALE_SECONDS: Final = 10
_MEMBERS_PAGE: Final = 1000
LOOKUP_TIMEOUT_S: Final = 2
"""How long one lookup waits for Slack's answer (then the last list stands in, or the click is refused)."""


class Directory:
    """Resolves user groups and channels to members; a cold cache costs one Web API call per group or page."""

    def __init__(self, *, clients: SlackClients, redis_client: redis.Redis) -> None:
        """Keep the clients (``clients``: each workspace's Web API client)."""
        self._clients = clients
        self._redis = redis_client

    def members(
        self, team_id: str, group_ids: Iterable[str], *, shard: int | None = None
    ) -> Mapping[str, frozenset[str]]:
        """Members of each group of ``team_id`` (cached on ``shard``, for a script of that shard's slot, if given).

        A shard's copy is made from the shared copy and expires with it: a person removed from a group
        stops deciding when the shared copy expires, whichever shard's requests they click.

        Raises:
            SLACK_CALL_ERRORS: Slack could not list a group it never listed before (the caller reports it).
            NotInstalled: The app is not installed in ``team_id``.
        """
        resolved: dict[str, frozenset[str]] = {}
        for group_id in group_ids:
            cached = self._cached(team_id, group_id, shard)
            if cached is not None:
                resolved[group_id] = cached[0]
                continue
            shared = (
                self._cached(team_id, group_id, None) if shard is not None else None
            )  # the shared copy saves a call
            if shared is None:
                shared = self._group_from_slack(team_id, group_id)
                if shard is not None:
                    self._redis.set(keys.usergroup(team_id, group_id), json.dumps(sorted(shared[0])), px=shared[1])
            known, ttl_ms = shared
            self._redis.set(keys.usergroup(team_id, group_id, shard=shard), json.dumps(sorted(known)), px=ttl_ms)
            resolved[group_id] = known
        return resolved

    def in_channel(self, team_id: str, channel_id: str, user_id: str, *, shard: int | None = None) -> bool:
        """Whether ``user_id`` is a member of ``channel_id`` of ``team_id``.

        One Redis round trip when cached; on ``shard``, if given.

        A shard's copy is made from the shared copy and expires with it (see ``members``).

        Raises:
            SLACK_CALL_ERRORS: Slack could not list a channel it never listed before (the caller refuses).
            NotInstalled: The app is not installed in ``team_id``.
        """
        key = keys.channel_members(team_id, channel_id, shard=shard)
        pipeline = self._redis.pipeline(transaction=False)
        pipeline.exists(key)
        pipeline.sismember(key, user_id)
        cached, member = pipeline.execute()
        if cached:
            return bool(member)
        users, ttl_ms = self._shared_channel_members(team_id, channel_id) if shard is not None else (set(), 0)
        if not users:
            users, ttl_ms = self._channel_from_slack(team_id, channel_id)
            if shard is not None:
                self._cache_members(keys.channel_members(team_id, channel_id), users, ttl_ms)  # other shards copy it
        self._cache_members(key, users, ttl_ms)
        return user_id in users

    def _shared_channel_members(self, team_id: str, channel_id: str) -> tuple[set[str], int]:
        """The shared copy of a channel's members and how long it has left (empty: none, or about to expire)."""
        pipeline = self._redis.pipeline(transaction=False)
        pipeline.smembers(keys.channel_members(team_id, channel_id))
        pipeline.pttl(keys.channel_members(team_id, channel_id))
        users, ttl_ms = pipeline.execute()
        ttl_ms = _CHANNEL_CACHE_SECONDS * 1000 if int(ttl_ms) == -1 else int(ttl_ms)  # -1: written without one
        return ({as_text(user) for user in users}, ttl_ms) if ttl_ms > 0 else (set(), 0)

    def _cache_members(self, key: str, users: set[str], ttl_ms: int) -> None:
        if users:
            transaction = self._redis.pipeline(transaction=True)
            transaction.delete(key)
            transaction.sadd(key, *users)
            transaction.pexpire(key, ttl_ms)
            transaction.execute()

    def _group_from_slack(self, team_id: str, group_id: str) -> tuple[frozenset[str], int]:
        """A group's members and how long to keep them (ms): Slack's list, else the last one it gave (see above)."""
        known_key = keys.usergroup_known(team_id, group_id)
        slack = self._lookup_client(team_id)
        try:
            response = slack.usergroups_users_list(usergroup=group_id)
        except SLACK_CALL_ERRORS as error:
            known = self._redis.get(known_key)
            users = _user_ids(known) if known is not None else None
            if users is None:
                raise
            logger.warning("group=<%s> | Slack cannot list it (%s): using its last known members", group_id, error)
            return users, STALE_SECONDS * 1000
        users = frozenset(str(user) for user in response.get("users") or [])
        self._redis.set(known_key, json.dumps(sorted(users)), ex=KNOWN_SECONDS)
        return users, _CACHE_SECONDS * 1000

    def _channel_from_slack(self, team_id: str, channel_id: str) -> tuple[set[str], int]:
        """A channel's members and how long to keep them (ms): Slack's list, else the last one it gave (see above)."""
        known_key = keys.channel_members_known(team_id, channel_id)
        try:
            users = self._channel_members_from_slack(team_id, channel_id)
        except SLACK_CALL_ERRORS as error:
            known = {as_text(user) for user in self._redis.smembers(known_key)}
            if not known:
                raise
            logger.warning("channel=<%s> | Slack cannot list it (%s): using its last known members", channel_id, error)
            return known, STALE_SECONDS * 1000
        self._cache_members(known_key, users, KNOWN_SECONDS * 1000)
        return users, _CHANNEL_CACHE_SECONDS * 1000

    def _channel_members_from_slack(self, team_id: str, channel_id: str) -> set[str]:
        users: set[str] = set()
        cursor = ""
        slack = self._lookup_client(team_id)
        while True:
            response = slack.conversations_members(channel=channel_id, limit=_MEMBERS_PAGE, cursor=cursor or None)
            users.update(str(user) for user in response.get("members") or [])
            cursor = str((response.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return users

    def _lookup_client(self, team_id: str) -> WebClient:
        """The workspace's token and API, with ``LOOKUP_TIMEOUT_S`` and no retry of its own (the caller falls back)."""
        client = self._clients.for_team(team_id)
        return WebClient(token=client.token, base_url=client.base_url, timeout=LOOKUP_TIMEOUT_S, retry_handlers=[])

    def _cached(self, team_id: str, group_id: str, shard: int | None) -> tuple[frozenset[str], int] | None:
        """The cached members and how long they have left (ms).

        Or ``None``: not cached, about to expire, or unreadable (then dropped, so Slack is asked again).
        """
        key = keys.usergroup(team_id, group_id, shard=shard)
        pipeline = self._redis.pipeline(transaction=False)
        pipeline.get(key)
        pipeline.pttl(key)
        raw, ttl_ms = pipeline.execute()
        if raw is None or int(ttl_ms) == -2:  # -2: expired since the GET
            return None
        ttl_ms = _CACHE_SECONDS * 1000 if int(ttl_ms) == -1 else int(ttl_ms)  # -1: written without one, elsewhere
        users = _user_ids(raw)
        if users is not None:
            return users, ttl_ms
        logger.warning("group=<%s> | cached members unreadable; dropped, asking Slack again", group_id)
        self._redis.delete(key)
        return None


def _user_ids(raw: bytes | str) -> frozenset[str] | None:
    """A cached group record's user ids (``None``: not JSON, or not a list of user ids)."""
    try:
        users = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if isinstance(users, list) and all(isinstance(user, str) for user in users):
        return frozenset(users)
    return None
