"""Approvals in Redis: the records, their indexes and listings, the decide script's call, edits, message updates."""
