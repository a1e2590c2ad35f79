"""Runbooks that run (seed §6.2): YAML remedies with typed parameters, PromQL preconditions,
steps (HTTP, argv commands, kubectl, Redis), a verification with a deadline and rollback
steps; a dry run by default, an append-only audit log of every real run, and drills against a
rehearsal target that say which runbooks are broken."""

from infersight.runbooks.library import Library, load_library, parse_runbook
from infersight.runbooks.model import Runbook, RunbookError

__all__ = ["Library", "Runbook", "RunbookError", "load_library", "parse_runbook"]
