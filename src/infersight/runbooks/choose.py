"""Which runbook to use for a remedy on the stack that is there.

A rule names a remedy (`runbook: lb-restore-endpoints`); the library may hold several ways of
doing it, each declaring the stack it drives (`variant_of: lb-restore-endpoints`,
`stack: [kubernetes, ingress-nginx]`). The variant whose stack is all there wins, the one
naming the most parts first (ingress-nginx on Kubernetes over bare Kubernetes); with none
that fits, or no stack detected, no variant is picked and the report lists them. A remedy
with one runbook keeps it, and says when the stack found is not the one it drives.

`for_diagnosis` puts the choice into a diagnosis (each hypothesis's `runbook` becomes the
variant chosen, `source["runbook_stack"]` says which stack was assumed and why), so every
report, the HTML one included, names the runbook to run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from infersight.diagnose.result import Diagnosis
from infersight.runbooks.library import Library, load_library
from infersight.runbooks.model import Runbook
from infersight.runbooks.stack import Stack, from_source

#: the key of `Diagnosis.source` that records the stack the runbooks were chosen for
SOURCE_KEY = "runbook_stack"


@dataclass(frozen=True)
class Choice:
    remedy: str  # what was asked for: a remedy (a rule's `runbook:`) or a runbook's id
    book: Runbook | None  # the runbook to run; None: the stack does not say which
    variants: tuple[Runbook, ...]  # every way of doing the remedy
    stack: Stack

    @property
    def id(self) -> str:
        """The runbook to name: the one chosen, else the remedy."""
        return self.book.id if self.book is not None else self.remedy

    @property
    def fits(self) -> bool:
        return self.book is not None and set(self.book.stack) <= self.stack.parts

    def note(self) -> str:
        """What a report says beside the runbook's id ("" when there is nothing to say)."""
        if self.book is not None and not self.book.stack:
            return ""
        if self.book is not None and self.fits:
            return f"for {self.stack.describe()}"
        if self.book is not None:  # its only way: said when the stack found is another
            if not self.stack.known:
                return ""
            return f"drives {' + '.join(self.book.stack)}; the stack here: {self.stack.describe()}"
        ways = "; ".join(f"{b.id} ({' + '.join(b.stack) or 'any'})" for b in self.variants)
        if not self.stack.known:
            return f"one of {ways}: the stack was not detected"
        return f"none of {ways} fits {self.stack.name}"


def variants(lib: Library, remedy: str) -> tuple[Runbook, ...]:
    """The runbooks that do `remedy`: the one with that id, and those declared its variants."""
    return tuple(b for b in lib.books if b.id == remedy or b.variant_of == remedy)


def choose(lib: Library, remedy: str, stack: Stack) -> Choice:
    """The runbook for `remedy` on `stack` (see the module's docstring for the order)."""
    ways = variants(lib, remedy)
    if len(ways) <= 1:
        return Choice(remedy, ways[0] if ways else None, ways, stack)
    fitting = [b for b in ways if set(b.stack) <= stack.parts]
    if not fitting:
        return Choice(remedy, None, ways, stack)
    best = max(len(b.stack) for b in fitting)
    return Choice(remedy, min((b for b in fitting if len(b.stack) == best), key=lambda b: b.id),
                  ways, stack)  # fmt: skip


def for_diagnosis(d: Diagnosis, lib: Library | None = None) -> Diagnosis:
    """The diagnosis with each runbook the variant for the stack its source recorded, and the
    stack assumed in `source["runbook_stack"]`. Applied twice, it changes nothing more."""
    named = [h for h in d.hypotheses if h.runbook]
    if not named:
        return d
    lib = lib or load_library()
    stack = from_source(d.source)
    hyps, matters = [], False
    for h in d.hypotheses:
        if h.runbook:
            book = lib.get(h.runbook)
            choice = choose(lib, book.remedy if book is not None else h.runbook, stack)
            # a runbook that runs anywhere, one the library does not hold, or the only way of a
            # remedy where no stack was detected: nothing to choose, nothing to say
            matters = matters or len(choice.variants) > 1 or bool(choice.note())
            h = dataclasses.replace(h, runbook=choice.id)
        hyps.append(h)
    if not matters:
        return d
    source = {**d.source, SOURCE_KEY: stack.describe()}
    return dataclasses.replace(d, hypotheses=tuple(hyps), source=source)


def note_for(d: Diagnosis, runbook: str, lib: Library | None = None) -> str:
    """What a report says beside a runbook the diagnosis names, for the stack it recorded."""
    lib = lib or load_library()
    book = lib.get(runbook)
    remedy = book.remedy if book is not None else runbook
    return choose(lib, remedy, from_source(d.source)).note()
