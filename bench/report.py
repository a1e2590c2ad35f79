"""Benchmarks write their sections of docs/benchmarks.md through infersight.benchdoc."""

import argparse

from infersight.benchdoc import BENCHMARKS_MD, machine, write_section

__all__ = ["BENCHMARKS_MD", "machine", "usage", "write_section"]


def usage(doc: str | None) -> None:
    """`--help` for a benchmark that takes no options: print its docstring and exit, and refuse
    any argument, rather than run it (and rewrite its section) on a request for help."""
    argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    ).parse_args()
