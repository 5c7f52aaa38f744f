"""Building the per-workspace and per-person indexes from records stored before them (``migrate --indexes``).

Each owner lists its own records (``ApprovalStore.index_existing``, ``GrantStore.list_every_live``,
``Installations.note_org_teams``): every step is idempotent and safe beside running bots. The worker runs it once at
start when the marker (``keys.INDEXES_BUILT``) names an older version, so an upgrade needs no manual step; the marker
is set only once every step finished (a worker killed half-way builds again at its next start).
"""

import logging
import time
from typing import Final

from bot.store import keys
from bot.store.stores import Stores
from state.text import as_text

logger = logging.getLogger(__name__)

VERSION: Final = "1"
"""The indexes' version: a later change to what they hold bumps it, and workers build them again."""


def build(stores: Stores) -> dict[str, int]:
    """List every record that predates its index; return how many of each kind were listed now."""
    waiting = decided = 0
    for shard in keys.shards():
        listed_open, listed_decided = stores.approvals.index_existing(shard)
        waiting, decided = waiting + listed_open, decided + listed_decided
    built = {
        "waiting approvals": waiting,
        "recent decisions": decided,
        "grants": stores.grants.list_every_live(now_ms=int(time.time() * 1000)),
        "org workspaces": stores.installations.note_org_teams(),
    }
    stores.redis.set(keys.INDEXES_BUILT, VERSION)
    return built


def built(stores: Stores) -> bool:
    """Whether this Redis's indexes were built at the current version."""
    marker = stores.redis.get(keys.INDEXES_BUILT)
    return marker is not None and as_text(marker) == VERSION


def ensure(stores: Stores) -> dict[str, int] | None:
    """``build``, unless the marker says it was done (one read): what was listed, or ``None``."""
    if built(stores):
        return None
    listed = build(stores)
    logger.info("indexes built from the stored records: %s", listed)
    return listed
