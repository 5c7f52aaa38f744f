"""Who may do what without asking again, in Redis: standing grants, session trusts, API keys."""
