"""Running a runbook: a dry run by default (what would run, parameters filled, checks
evaluated), or for real: preconditions → steps → verification → rollback when a step or the
verification fails. Every step, check and outcome of a real run goes to the audit log."""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from infersight.redact import MASK, Redactor
from infersight.runbooks.actions import StepResult, run_step
from infersight.runbooks.audit import AuditLog
from infersight.runbooks.checks import Checker, CheckResult, kubectl_check
from infersight.runbooks.config import DEFAULT_CONFIG, RunbookConfig
from infersight.runbooks.model import Precondition, Runbook, Step
from infersight.runbooks.params import _FLOAT, _INT, Value, string_refusal
from infersight.runbooks.template import TemplateError, names_in, render
from infersight.timeparse import parse_duration

Outcome = Literal["dry-run", "ok", "refused", "rolled-back", "rollback-failed", "failed"]


@dataclass(frozen=True)
class Planned:
    phase: Literal["step", "rollback"]
    name: str
    kind: str
    what: str


@dataclass
class RunReport:
    runbook: str
    run_id: str
    mode: Literal["dry-run", "execute"]
    params: dict[str, Any]
    plan: list[Planned]
    missing: list[str]  # binaries the runbook needs that are not installed
    preconditions: list[CheckResult] = field(default_factory=list)
    steps: list[StepResult] = field(default_factory=list)
    verify: CheckResult | None = None
    verify_tries: int = 0
    rollback: list[StepResult] = field(default_factory=list)
    outcome: Outcome = "dry-run"
    reason: str = ""
    #: drills: the rollback run after a verified run, to leave the target as it was
    restore: list[StepResult] = field(default_factory=list)
    #: which stack the runbook was chosen for, and why ("" when it was named outright)
    stack: str = ""

    @property
    def succeeded(self) -> bool:
        return self.outcome in ("ok", "dry-run")

    def to_dict(self) -> dict[str, Any]:
        return {
            "runbook": self.runbook,
            "run_id": self.run_id,
            "mode": self.mode,
            "params": self.params,
            "plan": [p.__dict__ for p in self.plan],
            "missing_binaries": self.missing,
            "preconditions": [c.to_dict() for c in self.preconditions],
            "steps": [s.to_dict() for s in self.steps],
            "verify": self.verify.to_dict() if self.verify else None,
            "verify_tries": self.verify_tries,
            "rollback": [s.to_dict() for s in self.rollback],
            "restore": [s.to_dict() for s in self.restore],
            "outcome": self.outcome,
            "reason": self.reason,
            "stack": self.stack,
        }


Progress = Callable[[str], None]


def _rendered(step: Step, values: Mapping[str, Any]) -> Step:
    raw = step.model_dump(by_alias=True, exclude_none=True)
    return Step.model_validate(render(raw, values))


class Runner:
    """One run of one runbook with resolved parameters."""

    def __init__(
        self,
        book: Runbook,
        values: dict[str, Value],
        checker: Checker,
        config: RunbookConfig = DEFAULT_CONFIG,
        progress: Progress = lambda _m: None,
    ) -> None:
        self.book = book
        self.values: dict[str, Any] = dict(values)
        self.checker = checker
        self.config = config
        self.progress = progress
        secrets = [str(values[n]) for n in book.secrets() if values.get(n)]
        self.redactor = Redactor(secrets)
        self.shown_values = {
            k: (MASK if k in book.secrets() else v) for k, v in self.values.items()
        }

    # -- what would run ------------------------------------------------------------------------
    def plan(self) -> list[Planned]:
        markers = {
            s.capture: f"<{s.capture} as step {i + 1} finds it>"
            for i, s in enumerate(self.book.steps)
            if s.capture
        }
        shown = {**self.shown_values, **markers}
        out = []
        for phase, steps in (("step", self.book.steps), ("rollback", self.book.rollback)):
            for s in steps:
                try:
                    what = _rendered(s, shown).describe()
                except (TemplateError, ValidationError) as exc:
                    what = f"{s.describe()} (cannot be filled in: {exc})"
                out.append(Planned(phase, s.name, s.kind, self.redactor.scrub(what)))  # type: ignore[arg-type]
        return out

    def _programs(self) -> list[str]:
        """The binaries the steps and the rollback run, parameters filled, each once."""
        markers = {s.capture: "" for s in self.book.steps if s.capture}
        out: list[str] = []
        for s in [*self.book.steps, *self.book.rollback]:
            prog = _rendered(s, {**self.values, **markers}).program()
            if prog and prog not in out:
                out.append(prog)
        return out

    def _report(self, mode: Literal["dry-run", "execute"]) -> RunReport:
        return RunReport(
            runbook=self.book.id,
            run_id=uuid.uuid4().hex[:12],
            mode=mode,
            params=dict(self.shown_values),
            plan=self.plan(),
            missing=[p for p in self._programs() if shutil.which(p) is None],
        )

    def _checks(self) -> list[CheckResult]:
        return [self._check(c) for c in self.book.preconditions]

    def _check(self, c: Precondition) -> CheckResult:
        if c.promql is not None:
            return self.checker.evaluate(c.name, render(c.promql, self.values))
        step = Step(name=c.name, kubectl=c.kubectl)
        try:
            read = _rendered(step, self.values)
        except (TemplateError, ValidationError) as exc:
            return CheckResult(c.name, "", "fails", f"cannot be filled in: {exc}", time.time())
        cfg = self.config
        return kubectl_check(
            c.name, read, c.expect, cfg.step_timeout_s, cfg.max_output_chars, cfg.drain_s
        )

    def dry_run(self) -> RunReport:
        """What would run, the checks evaluated now (a `kubectl get` precondition is run: it
        only reads). Refused, as the real run would be, when a binary is missing or a
        precondition fails; a check that cannot be evaluated (no Prometheus) is only said."""
        report = self._report("dry-run")
        report.preconditions = self._checks()
        if self.book.verify is not None:
            v = self.book.verify
            report.verify = self.checker.evaluate(v.name, render(v.promql, self.values))
        failed = [c for c in report.preconditions if c.verdict == "fails"]
        if report.missing:
            report.outcome = "refused"
            report.reason = f"missing binary: {', '.join(report.missing)}"
        elif failed:
            report.outcome = "refused"
            report.reason = f"precondition {failed[0].name!r} fails: {failed[0].detail}"
        return report

    # -- for real --------------------------------------------------------------------------------
    def execute(self, audit: AuditLog, restore: bool = False, purpose: str = "run") -> RunReport:
        """Run it for real. `restore` (drills): after a verified run, run the rollback steps
        too, so the rehearsal target is left as it was; a restore that fails is a failure."""
        audit.redactor = self.redactor
        report = self._report("execute")
        log = self._logger(audit, report)
        log(
            "run-start",
            purpose=purpose,
            title=self.book.title,
            params=report.params,
            plan=[p.__dict__ for p in report.plan],
        )
        try:
            self._execute(report, log)
            if restore and report.outcome == "ok" and self.book.rollback:
                self.progress("restoring the target (the rollback steps)")
                undo = self._steps(self.book.rollback, report.restore, log, "restore", True)
                if undo:
                    report.outcome = "rollback-failed"
                    report.reason = f"verified, but restoring failed: {undo}"
        except BaseException as exc:  # a kill, Ctrl-C or a bug: logged, then raised on
            log("run-interrupted", error=f"{type(exc).__name__}: {exc}")
            raise
        log("run-end", outcome=report.outcome, reason=report.reason)
        return report

    def _logger(self, audit: AuditLog, report: RunReport) -> Callable[..., None]:
        def log(event: str, **fields: Any) -> None:
            audit.write(event, run=report.run_id, runbook=self.book.id, **fields)

        return log

    def _execute(self, report: RunReport, log: Callable[..., None]) -> None:
        if report.missing:
            report.outcome = "refused"
            report.reason = f"missing binary: {', '.join(report.missing)} (nothing was run)"
            return
        report.preconditions = self._checks()
        for c in report.preconditions:
            log("precondition", **c.to_dict())
            self.progress(f"precondition {c.name}: {c.verdict} ({c.detail})")
        bad = [c for c in report.preconditions if not c.holds]
        if bad:
            report.outcome = "refused"
            report.reason = f"precondition {bad[0].name!r} {bad[0].verdict}: {bad[0].detail}"
            return
        failed = self._steps(self.book.steps, report.steps, log, "step")
        if failed is None and self.book.verify is not None:
            failed = self._verify(report, log)
        if failed is None:
            report.outcome = "ok"
            return
        report.reason = failed
        if not self.book.rollback:
            report.outcome = "failed"
            report.reason += "; no rollback declared"
            return
        self.progress(f"rolling back: {failed}")
        undo_failed = self._steps(self.book.rollback, report.rollback, log, "rollback", True)
        report.outcome = "rollback-failed" if undo_failed else "rolled-back"
        if undo_failed:
            report.reason += f"; rollback failed too: {undo_failed}"

    def _steps(
        self,
        steps: list[Step],
        results: list[StepResult],
        log: Callable[..., None],
        phase: str,
        keep_going: bool = False,
    ) -> str | None:
        """Run `steps` in order; the first failure's description (None: all succeeded)."""
        first: str | None = None
        for i, step in enumerate(steps):
            unmet = self._uncaptured(step) if phase != "step" else []
            if unmet:
                # undoing a change whose step never ran (its capture is missing): nothing to undo
                why = f"skipped: the step that captures {', '.join(unmet)} never ran"
                log(phase, index=i + 1, name=step.name, ok=True, skipped=True, detail=why)
                self.progress(f"{phase} {i + 1}/{len(steps)} {step.name}: {why}")
                continue
            try:
                rendered = _rendered(step, self.values)
            except (TemplateError, ValidationError) as exc:
                why = f"{phase} {i + 1} ({step.name}) not run: {exc}"
                log(phase, index=i + 1, name=step.name, ok=False, detail=why)
                first = first or why
                if keep_going:
                    continue
                return first
            self.progress(
                f"{phase} {i + 1}/{len(steps)}: {self.redactor.scrub(rendered.describe())}"
            )
            timeout = step.timeout_s or self.config.step_timeout_s
            result = run_step(rendered, timeout, self.config.max_output_chars, self.config.drain_s)
            if result.left_running:
                self.progress(f"{phase} {i + 1} left running: {', '.join(result.left_running)}")
            if result.ok and step.capture:
                bad = string_refusal(result.captured or "", self.config.max_param_chars)
                if bad is not None and (result.captured or "") != "":
                    result = _refuse_capture(result, bad)
                else:
                    self.values[step.capture] = _typed(result.captured or "")
            results.append(result)
            log(phase, index=i + 1, **result.to_dict())
            if not result.ok:
                why = f"{phase} {i + 1} ({step.name}) failed: {result.detail}"
                first = first or why
                if not keep_going:
                    return first
        return first

    def _uncaptured(self, step: Step) -> list[str]:
        """The captures `step` uses that no step has made (yet)."""
        captures = {s.capture for s in self.book.steps if s.capture}
        used = set(names_in(step.model_dump(by_alias=True, exclude_none=True)))
        return sorted((used & captures) - set(self.values))

    def _verify(self, report: RunReport, log: Callable[..., None]) -> str | None:
        v = self.book.verify
        assert v is not None
        within = parse_duration(render(v.within, self.values))
        every = parse_duration(render(v.every, self.values))
        promql = render(v.promql, self.values)
        self.progress(f"verifying within {within:g} s: {promql}")
        t0 = time.monotonic()
        result, tries = self.checker.wait_for(v.name, promql, within, every)
        report.verify, report.verify_tries = result, tries
        log("verify", tries=tries, seconds=round(time.monotonic() - t0, 3), **result.to_dict())
        if result.holds:
            return None
        return f"verification {v.name!r} did not hold within {within:g} s ({result.detail})"


def _typed(text: str) -> Value:
    """A captured value as a number when it reads as one (a JSON body keeps its type)."""
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _refuse_capture(result: StepResult, why: str) -> StepResult:
    from dataclasses import replace

    return replace(result, ok=False, detail=f"captured value refused: {why}")
