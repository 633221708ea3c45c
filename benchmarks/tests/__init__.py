"""Tests of the benchmarks' own code (run by ``python -m pytest`` with the project's tests)."""
