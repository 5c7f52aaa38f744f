"""The HTTP API under ``/v1/``: any agent, in any language, asks for a sign-off and gets the decision back."""
