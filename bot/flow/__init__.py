"""What happens to a request: decisions, escalation, the agent runner. Imports ``store``, ``render``, ``domain``."""
