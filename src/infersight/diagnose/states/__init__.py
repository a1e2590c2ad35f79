"""Condition kinds: one module per kind of signal state.

A kind's module names the `STATES` it reads and has `read(ctx, condition, instance, shown,
since) -> Reading` (whether the condition holds on one instance, with its evidence, its onset
and a score) and `doc(config)`, its line in docs/rules.md; `check(condition)` optionally says
what a condition of its kind must carry. `registry.py` finds the kinds; `conditions.py` reads
them across instances and groups.

Adding a kind of condition: one module here and its test; the rule file that uses it. A
constant it needs goes in `DiagnoseConfig` with the reason for its default.
"""
