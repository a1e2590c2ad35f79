"""The mechanisms by which one change on the request path makes another: one module each.

A module of this package is a relation when it names itself (`NAME`) and has `explain(r,
change) -> list[Change]` (the changes that can have made this one, read from `r`, a
`Reader`) and `doc() -> str` (its line in docs/path.md). `registry.py` finds them; adding a
mechanism is one module and its test.
"""
