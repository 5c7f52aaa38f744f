"""Where a direct-message copy of an approval is listed for its person (``CopyListing``).

Apart from ``bot.store.approvals.approval_index``, which names the entries, so that the outbox (which writes them with
the copy's record) needs nothing else of the store's indexes.
"""

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CopyListing:
    """Where a posted copy is listed for its person, with its record (``Outbox.complete_post``'s ``listing``)."""

    index: str
    """The sorted set, in the record's slot."""
    prefix: str
    """The entry's prefix: the approval's open time and id follow it."""
    approval_id: str
