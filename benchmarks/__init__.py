"""Benchmarks of parley's own overhead, side by side with AG2 0.13.4 on the same workloads.

Run them with ``./scripts/bench``; see ``benchmarks/README.md``.
"""
