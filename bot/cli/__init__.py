"""``python -m bot ...``: the commands an operator runs."""
