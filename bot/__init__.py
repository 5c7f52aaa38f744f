"""Signoff's Slack app: approval messages for agent interrupts."""
