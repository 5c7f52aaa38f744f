"""The views the bot opened: what each was opened with, under a fresh ``external_id``, for a day."""

import redis

from bot.store import keys
from bot.store.modal_views import ModalViews


def test_a_view_is_remembered_under_a_fresh_external_id_for_a_day(redis_client: redis.Redis) -> None:
    views = ModalViews(redis_client)

    first, second = views.remember('{"approval_id":"a"}'), views.remember('{"approval_id":"a"}')

    assert first != second
    assert views.opened_with(first) == '{"approval_id":"a"}'
    assert 0 < redis_client.ttl(keys.modal_view(first)) <= 24 * 3600


def test_a_view_the_bot_never_opened_was_opened_with_nothing(redis_client: redis.Redis) -> None:
    assert ModalViews(redis_client).opened_with("never-opened") is None
