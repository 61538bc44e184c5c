"""Benchmarks, run as scripts (`.venv/bin/python bench/NAME.py`); a package so they share `bench.measure`."""
