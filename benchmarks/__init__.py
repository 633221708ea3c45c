"""Benchmarks: each module measures one part of the crawler beside baselines in the same run.

Run one from the repository root as ``python -m benchmarks.NAME``; ``benchmarks/README.md`` keeps the
figures, with the command that measures each.
"""
