"""Worst-case stress tests (seed §6.3): load profiles run with Locust, results compared run to
run. `profiles.py` (the shapes), `runner.py` (Locust in a child process, results), `compare.py`
(the verdict against a measured noise band)."""
