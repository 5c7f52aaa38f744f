"""Recipes: agent frameworks asking people in Slack for a sign-off through Signoff's HTTP API."""
