"""A runbook, as its YAML file declares it: parameters, preconditions, steps, a verification
and rollback steps. Validated on load; `RunbookError` names the file and the field."""

from __future__ import annotations

import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from infersight.runbooks.params import Param
from infersight.runbooks.stack import StackPart
from infersight.runbooks.template import names_in
from infersight.timeparse import parse_duration

Target = Literal["lab", "kubernetes", "any"]
KubectlAction = Literal[
    "get",
    "scale",
    "rollout-undo",
    "rollout-restart",
    "rollout-status",
    "cordon",
    "uncordon",
    "drain",
]
_ID = r"[a-z0-9][a-z0-9-]{0,62}"


def _word(value: Any) -> Any:
    """An argv or Redis word: a filled-in number (a captured value) reads as its text."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int | float) else value


Word = Annotated[str, BeforeValidator(_word)]


def _one_line(value: Any) -> Any:
    """PromQL written over several YAML lines, as one line (line breaks are free in PromQL)."""
    return re.sub(r"\s*\n\s*", " ", value).strip() if isinstance(value, str) else value


class RunbookError(ValueError):
    """A runbook file that cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class HttpCall(_Strict):
    """One HTTP request; it succeeds on a status in `expect` (any 2xx when empty)."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    json_body: Any = Field(None, alias="json")
    form: dict[str, str] | None = None
    expect: list[int] = Field(default_factory=list)
    #: text each named response header must contain (HAProxy's stats form answers 303 either
    #: way and tells success by `Location: ...;st=DONE`)
    expect_headers: dict[str, str] = Field(default_factory=dict)
    #: text the response body must contain
    expect_body: str | None = None
    #: `capture:` takes this dotted path of the JSON answer (e.g. batchers.llm.window_cap_s)
    capture_json: str | None = None

    @model_validator(mode="after")
    def _one_body(self) -> HttpCall:
        if self.json_body is not None and self.form is not None:
            raise ValueError("give json or form, not both")
        return self


class Command(_Strict):
    """A program and its arguments as a list: never a shell string."""

    argv: list[Word] = Field(min_length=1)
    expect_exit: list[int] = Field(default_factory=lambda: [0])

    @model_validator(mode="after")
    def _no_shell(self) -> Command:
        prog = self.argv[0]
        if " " in prog.strip() or prog in ("sh", "bash", "/bin/sh", "/bin/bash", "zsh"):
            raise ValueError(
                "argv: a program and its arguments as a list, never a shell or a shell string"
            )
        return self


class Kubectl(_Strict):
    """A Kubernetes change through `kubectl` (when it is installed), or a read (`get`)."""

    action: KubectlAction
    resource: Word  # deployment/NAME, endpoints/NAME, or a node's name (cordon, drain)
    namespace: Word | None = None
    replicas: int | str | None = None
    context: Word | None = None
    #: `get` only: kubectl's `-o` (e.g. `jsonpath={.spec.replicas}`)
    output: Word | None = None

    @model_validator(mode="after")
    def _replicas(self) -> Kubectl:
        if (self.action == "scale") != (self.replicas is not None):
            raise ValueError("replicas: given for scale, and only for scale")
        if self.output is not None and self.action != "get":
            raise ValueError("output: given for get, and only for get")
        return self

    def argv(self) -> list[str]:
        head = ["kubectl"]
        if self.context:
            head += ["--context", self.context]
        if self.namespace:
            head += ["--namespace", self.namespace]
        a = self.action
        if a == "get":
            return [*head, "get", self.resource, *(["-o", self.output] if self.output else [])]
        if a == "scale":
            return [*head, "scale", self.resource, f"--replicas={self.replicas}"]
        if a.startswith("rollout-"):
            return [*head, "rollout", a.removeprefix("rollout-"), self.resource]
        if a == "drain":
            return [*head, "drain", self.resource, "--ignore-daemonsets", "--delete-emptydir-data"]
        return [*head, a, self.resource]


class RedisCall(_Strict):
    """One Redis command, its words as a list; `expect` the reply it must give (else any
    reply that is not an error)."""

    host: str = "127.0.0.1"
    port: int | str = 6379
    command: list[Word] = Field(min_length=1)
    password: str | None = None
    expect: str | None = None


class Step(_Strict):
    """One action: exactly one of http, command, kubectl, redis."""

    name: str = Field(min_length=1, max_length=120)
    http: HttpCall | None = None
    command: Command | None = None
    kubectl: Kubectl | None = None
    redis: RedisCall | None = None
    timeout_s: float | None = Field(None, gt=0, le=3600)
    #: keep the step's output (stripped; a Redis list reply: its last item) as a value for later
    #: steps and the rollback, e.g. the setting before the change
    capture: str | None = Field(None, pattern=r"^[a-z_][a-z0-9_]*$")

    @model_validator(mode="after")
    def _exactly_one(self) -> Step:
        kinds = [k for k in ("http", "command", "kubectl", "redis") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a step is exactly one of http, command, kubectl, redis")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in ("http", "command", "kubectl", "redis") if getattr(self, k))

    @property
    def action(self) -> HttpCall | Command | Kubectl | RedisCall:
        return getattr(self, self.kind)  # type: ignore[no-any-return]

    def program(self) -> str | None:
        """The binary this step needs, if any."""
        if self.command is not None:
            return self.command.argv[0]
        if self.kubectl is not None:
            return "kubectl"
        return None

    def describe(self) -> str:
        """What runs, as one line (argv shown shell-quoted for reading only)."""
        a = self.action
        if isinstance(a, HttpCall):
            body = ""
            if a.json_body is not None:
                body = f" json={_compact(a.json_body)}"
            elif a.form is not None:
                body = f" form={_compact(a.form)}"
            return f"{a.method} {a.url}{body}"
        if isinstance(a, Command):
            return shlex.join(a.argv)
        if isinstance(a, Kubectl):
            return shlex.join(a.argv())
        return f"redis {a.host}:{a.port} " + shlex.join(a.command)


def _compact(data: Any) -> str:
    import json

    return json.dumps(data, separators=(",", ":"), sort_keys=True)


class Check(_Strict):
    """PromQL that holds when it returns at least one series and every value is non-zero."""

    name: str = Field(min_length=1, max_length=120)
    promql: Annotated[str, BeforeValidator(_one_line)] = Field(min_length=1)


class Precondition(_Strict):
    """What must hold before anything runs: PromQL (as `Check`), or a `kubectl get` whose
    answer must contain `expect` (any answer when unset). A read only: a dry run runs it."""

    name: str = Field(min_length=1, max_length=120)
    promql: Annotated[str | None, BeforeValidator(_one_line)] = None
    kubectl: Kubectl | None = None
    expect: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Precondition:
        if (self.promql is None) == (self.kubectl is None):
            raise ValueError("a precondition is exactly one of promql, kubectl")
        if self.kubectl is not None and self.kubectl.action != "get":
            raise ValueError("kubectl: a precondition only reads (action: get)")
        if self.expect is not None and self.kubectl is None:
            raise ValueError("expect: for a kubectl precondition")
        return self

    def describe(self) -> str:
        """The query or the command, as one line."""
        if self.kubectl is not None:
            return shlex.join(self.kubectl.argv())
        return self.promql or ""


class Verify(Check):
    """A check that must turn true within `within` (evaluated every `every`)."""

    within: str = "2m"
    every: str = "2s"

    @model_validator(mode="after")
    def _durations(self) -> Verify:
        for field in ("within", "every"):
            if "{{" in getattr(self, field):
                continue
            seconds = parse_duration(getattr(self, field))
            if not 0 < seconds <= 3600:
                raise ValueError(f"{field}: between 0 and 1h")
        return self


def _anywhere() -> list[Target]:
    return ["any"]


class Runbook(_Strict):
    id: str = Field(pattern=f"^{_ID}$")
    title: str = Field(min_length=1, max_length=160)
    description: str = ""
    #: the remedy this is one way of doing (a rule's `runbook:` names it); None: its own
    variant_of: str | None = Field(None, pattern=f"^{_ID}$")
    #: the parts of a stack its steps drive (all must be there for it to be chosen); empty:
    #: whatever the stack (an HTTP admin endpoint of the serving library, a Redis command)
    stack: list[StackPart] = Field(default_factory=list)
    #: where a drill may run it: `lab` (the live lab), `kubernetes` (needs a cluster), `any`
    targets: list[Target] = Field(default_factory=_anywhere)
    params: dict[str, Param] = Field(default_factory=dict)
    preconditions: list[Precondition] = Field(default_factory=list)
    steps: list[Step] = Field(min_length=1)
    verify: Verify | None = None
    rollback: list[Step] = Field(default_factory=list)

    @property
    def remedy(self) -> str:
        """The remedy it is a way of doing: what a rule names."""
        return self.variant_of or self.id

    @model_validator(mode="after")
    def _placeholders(self) -> Runbook:
        if self.variant_of == self.id:
            raise ValueError("variant_of: the remedy's id, not this runbook's own")
        for name in self.params:
            if not re.fullmatch(r"[a-z_][a-z0-9_]{0,63}", name):
                raise ValueError(f"params.{name}: a lower-case name (letters, digits, _)")
        known = set(self.params)
        for i, check in enumerate(self.preconditions):
            _known(f"preconditions.{i}", check, known)
        captures: set[str] = set()
        for i, step in enumerate(self.steps):
            _known(f"steps.{i}", step, known | captures)
            if step.capture:
                if step.capture in known | captures:
                    raise ValueError(f"steps.{i}.capture: {step.capture!r} is already a name")
                captures.add(step.capture)
        if self.verify is not None:
            _known("verify", self.verify, known | captures)
        for i, step in enumerate(self.rollback):
            _known(f"rollback.{i}", step, known | captures)
            if step.capture:
                raise ValueError(f"rollback.{i}.capture: a rollback step captures nothing")
        return self

    def secrets(self) -> list[str]:
        return [n for n, p in self.params.items() if p.type == "secret"]


def _known(where: str, model: BaseModel, known: set[str]) -> None:
    for name in names_in(model.model_dump(by_alias=True, exclude_none=True)):
        if name not in known:
            raise ValueError(f"{where}: {{{{{name}}}}} is neither a parameter nor a capture")
