"""What calls Slack: the outbox's delivery and its lanes and rate limits, the Web API clients, posts made once."""
