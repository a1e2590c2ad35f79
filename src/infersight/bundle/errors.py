"""The one exception a bundle operation raises for bad input: a damaged, hostile or unknown
bundle on read, an unusable request on write."""

from __future__ import annotations


class BundleError(Exception):
    """One line naming the bundle, the member when there is one, and what is wrong."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def fail(where: str, problem: str, member: str | None = None) -> BundleError:
    """BundleError for `bundle WHERE[: member M]: PROBLEM`."""
    at = f": member {member}" if member else ""
    return BundleError(f"bundle {where}{at}: {problem}")
