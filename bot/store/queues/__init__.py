"""Work waiting in Redis: agent jobs, the outbox to Slack, due queues and the schedule, and their leases."""
