"""docs/runbooks.md's starters are rendered from the library: a section per remedy (where an
alert's runbook_url opens), each runbook under it with the stack it drives."""

from __future__ import annotations

from infersight.runbooks import load_library
from infersight.runbooks.doc import DOC, render, rewritten


def test_the_starters_section_is_current() -> None:
    text = DOC.read_text("utf-8")
    assert text == rewritten(text, load_library()), (
        "docs/runbooks.md is stale: run `.venv/bin/python -m infersight.runbooks.doc`"
    )


def test_each_remedy_has_its_section_and_each_runbook_its_stack() -> None:
    section = render(load_library())
    assert "### lb-restore-endpoints\n" in section
    assert "- `lb-restore-endpoints-ingress-nginx`: " in section
    assert "Drives kubernetes + ingress-nginx; steps: kubectl;" in section
    for book in load_library().books:
        assert f"### {book.remedy}\n" in section and f"`{book.id}`" in section
