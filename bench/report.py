"""Benchmarks write their sections of docs/benchmarks.md through infersight.benchdoc."""

from infersight.benchdoc import BENCHMARKS_MD, machine, write_section

__all__ = ["BENCHMARKS_MD", "machine", "write_section"]
