"""The runbook engine's limits and defaults, each with the reason for its value."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RunbookConfig(BaseModel):
    """Bounds on what a runbook may ask for and on what a run keeps."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_param_chars: int = Field(
        256,
        description="The longest parameter value accepted: a host, a name, a URL or a number "
        "fits with room; anything longer is a paste gone wrong or an attack.",
    )
    max_output_chars: int = Field(
        4096,
        description="How much of a step's output (stdout, stderr, a response body) goes to the "
        "audit log and the screen: enough for an error message, small enough that a chatty "
        "command cannot grow the log without bound.",
    )
    step_timeout_s: float = Field(
        30.0,
        description="A step's default time limit: a remedy that takes longer than half a minute "
        "to answer is stuck, and the night it is needed nobody waits for it.",
    )
    drain_s: float = Field(
        2.0,
        gt=0,
        description="How long a program's output is still read after it ended or was killed at "
        "its time limit: what it wrote is in the pipe already, so a moment drains it; a "
        "process it started that keeps the pipe open (a daemon, `setsid`) is not waited for.",
    )
    verify_within_s: float = Field(
        120.0,
        description="A verification's default deadline: two minutes covers a few scrape "
        "intervals and a rate window's first point after the change.",
    )
    verify_every_s: float = Field(
        2.0,
        description="How often a verification is evaluated while it waits: below most scrape "
        "intervals, so a change is seen at the first scrape that shows it.",
    )
    prometheus_timeout_s: float = Field(
        10.0,
        description="One check's query time limit: an instant query answers in milliseconds; "
        "ten seconds means the server is in trouble.",
    )


DEFAULT_CONFIG = RunbookConfig()
