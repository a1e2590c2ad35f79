"""Condition kinds: one module per kind of signal state (`kb.State`).

Each module exposes `read(ctx, condition, instance, shown, since) -> Reading`: whether the
condition holds on one instance, with its evidence, its onset and a score. `registry.READERS`
maps every state to its reader; `conditions.py` reads them across instances and groups.

Adding a kind of condition: the state in `kb.State` (and what it accepts in
`Condition._check`), one module here with its `read`, one line in `registry.READERS`, and its
test.
"""
