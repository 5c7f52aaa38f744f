"""Bolt listeners: thin (ack, validate, call one domain function, queue the Slack side effects)."""
