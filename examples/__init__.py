"""Runnable examples of infersight; run from the repository root: `python -m examples.NAME`."""
