"""Who is in a Slack user group or channel: ``usergroups.users.list`` and ``conversations.members``, cached in Redis.

Group members are kept for a few minutes; channel members for one minute, so that someone who
leaves a private channel stops seeing and deciding its requests soon after.

A cached group record that cannot be read (not JSON, not a list of user ids) is dropped and the
group asked of Slack again: one bad record never refuses every click nor blinds App Home.
"""

import json
import logging
from collections.abc import Iterable, Mapping
from typing import Final

import redis
from slack_sdk import WebClient

from bot.store import keys
from state.text import as_text

logger = logging.getLogger(__name__)

_CACHE_SECONDS: Final = 300
_CHANNEL_CACHE_SECONDS: Final = 60
_MEMBERS_PAGE: Final = 1000


class Directory:
    """Resolves user groups and channels to members; a cold cache costs one Web API call per group or page."""

    def __init__(self, *, client: WebClient, redis_client: redis.Redis) -> None:
        """Keep the clients."""
        self._slack = client
        self._redis = redis_client

    def members(self, group_ids: Iterable[str], *, shard: int | None = None) -> Mapping[str, frozenset[str]]:
        """Members of each group (cached on ``shard``, for a script of that shard's slot, if given).

        Raises:
            slack_sdk.errors.SlackApiError: Slack could not list a group (the caller reports it).
        """
        resolved: dict[str, frozenset[str]] = {}
        for group_id in group_ids:
            cached = self._cached(group_id, shard)
            if cached is not None:
                resolved[group_id] = cached
                continue
            known = self._cached(group_id, None) if shard is not None else None  # the shared copy saves a call
            if known is None:
                response = self._slack.usergroups_users_list(usergroup=group_id)
                known = frozenset(str(user) for user in response.get("users") or [])
                if shard is not None:
                    self._redis.set(keys.usergroup(group_id), json.dumps(sorted(known)), ex=_CACHE_SECONDS)
            self._redis.set(keys.usergroup(group_id, shard=shard), json.dumps(sorted(known)), ex=_CACHE_SECONDS)
            resolved[group_id] = known
        return resolved

    def in_channel(self, channel_id: str, user_id: str, *, shard: int | None = None) -> bool:
        """Whether ``user_id`` is a member of ``channel_id`` (one Redis round trip when cached; on ``shard``, if given).

        Raises:
            slack_sdk.errors.SlackApiError: Slack could not list the channel (the caller refuses).
        """
        key = keys.channel_members(channel_id, shard=shard)
        pipeline = self._redis.pipeline(transaction=False)
        pipeline.exists(key)
        pipeline.sismember(key, user_id)
        cached, member = pipeline.execute()
        if cached:
            return bool(member)
        shared = keys.channel_members(channel_id)
        users = {as_text(user) for user in self._redis.smembers(shared)} if shard is not None else set()
        if not users:
            users = self._channel_members_from_slack(channel_id)
            if shard is not None:
                self._cache_members(shared, users)  # the shared copy: other shards' copies are made from it
        self._cache_members(key, users)
        return user_id in users

    def _cache_members(self, key: str, users: set[str]) -> None:
        if users:
            transaction = self._redis.pipeline(transaction=True)
            transaction.delete(key)
            transaction.sadd(key, *users)
            transaction.expire(key, _CHANNEL_CACHE_SECONDS)
            transaction.execute()

    def _channel_members_from_slack(self, channel_id: str) -> set[str]:
        users: set[str] = set()
        cursor = ""
        while True:
            response = self._slack.conversations_members(channel=channel_id, limit=_MEMBERS_PAGE, cursor=cursor or None)
            users.update(str(user) for user in response.get("members") or [])
            cursor = str((response.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return users

    def _cached(self, group_id: str, shard: int | None) -> frozenset[str] | None:
        """The cached members, or ``None``: not cached, or unreadable (then dropped, so Slack is asked again)."""
        raw = self._redis.get(keys.usergroup(group_id, shard=shard))
        if raw is None:
            return None
        try:
            users = json.loads(raw)
        except (ValueError, RecursionError):
            users = None
        if isinstance(users, list) and all(isinstance(user, str) for user in users):
            return frozenset(users)
        logger.warning("group=<%s> | cached members unreadable; dropped, asking Slack again", group_id)
        self._redis.delete(keys.usergroup(group_id, shard=shard))
        return None
