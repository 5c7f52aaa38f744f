"""The agent runtime that raises and resumes interrupts (no Slack code here)."""
