"""Operability: health probes, the worker's heartbeat, structured logs and Prometheus metrics."""
