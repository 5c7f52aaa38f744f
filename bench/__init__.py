"""Benchmarks: each prints a ratio against a floor measured in the same run (run with python -m bench.<name>)."""
