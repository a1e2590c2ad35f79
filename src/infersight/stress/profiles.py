"""Load profiles: steps of a target number of paced users (each one request per second), so
the arrival rate follows the profile while requests take under a second (open loop in that
range; beyond it a user falls behind, which the results show as throughput under target).

Profiles that need a fault (`slow-dependency`, `instance-loss`) inject it into a live lab when
`--lab DIR` is given, at the step marked `fault`; against any other URL they are run as plain
load while the operator makes the dependency slow or takes an instance away.
"""

from __future__ import annotations

from dataclasses import dataclass

PROFILES = ("spike", "ramp", "slow-dependency", "instance-loss", "soak")


@dataclass(frozen=True)
class Step:
    name: str
    seconds: float
    users: int
    fault: str | None = None  # a live-lab fault active during this step

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "seconds": self.seconds,
            "users": self.users,
            "fault": self.fault,
        }


def steps(profile: str, users: int, duration_s: float) -> list[Step]:
    """The profile's steps for a peak of `users` over `duration_s` seconds."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if users < 1 or duration_s < 10:
        raise ValueError("--users must be at least 1 and --duration at least 10s")
    third = duration_s / 3
    base = max(1, users // 4)
    if profile == "spike":
        return [
            Step("before", third, base),
            Step("spike", third, users),
            Step("after", third, base),
        ]
    if profile == "ramp":
        n = 5
        return [
            Step(f"ramp-{i + 1}", duration_s / n, max(1, round(users * (i + 1) / n)))
            for i in range(n)
        ]
    if profile == "slow-dependency":
        return [
            Step("before", third, users),
            Step("slow", third, users, fault="link-slow"),
            Step("after", third, users),
        ]
    if profile == "instance-loss":
        return [
            Step("before", third, users),
            Step("lost", third, users, fault="replica-kill"),
            Step("after", third, users),
        ]
    return [Step("soak", duration_s, users)]
