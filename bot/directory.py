"""Who is in a Slack user group: ``usergroups.users.list``, cached in Redis for a few minutes."""

import json
from collections.abc import Iterable, Mapping
from typing import Final

import redis
from slack_sdk import WebClient

from bot import keys

_CACHE_SECONDS: Final = 300


class Directory:
    """Resolves user groups to members; a cold cache costs one Web API call per group."""

    def __init__(self, *, client: WebClient, redis_client: redis.Redis) -> None:
        """Keep the clients."""
        self._slack = client
        self._redis = redis_client

    def members(self, group_ids: Iterable[str]) -> Mapping[str, frozenset[str]]:
        """Members of each group.

        Raises:
            slack_sdk.errors.SlackApiError: Slack could not list a group (the caller reports it).
        """
        resolved: dict[str, frozenset[str]] = {}
        for group_id in group_ids:
            cached = self._redis.get(keys.usergroup(group_id))
            if cached is not None:
                resolved[group_id] = frozenset(json.loads(cached))
                continue
            response = self._slack.usergroups_users_list(usergroup=group_id)
            users = [str(user) for user in response.get("users") or []]
            self._redis.set(keys.usergroup(group_id), json.dumps(users), ex=_CACHE_SECONDS)
            resolved[group_id] = frozenset(users)
        return resolved
