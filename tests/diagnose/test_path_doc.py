"""docs/path.md is the request-path walk's own account of itself: generated from the code
(`python -m infersight.diagnose.path.doc`), and each rule's page in docs/rules.md says where
on the path it names the walk's ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.diagnose.kb import load_kb
from infersight.diagnose.kb_doc import render_rule
from infersight.diagnose.path import doc
from infersight.diagnose.path.config import PathConfig
from infersight.diagnose.path.relations.registry import relations

DOC = Path(__file__).resolve().parents[2] / "docs" / "path.md"


def test_path_doc_is_current() -> None:
    assert DOC.read_text("utf-8") == doc.render(), (
        "docs/path.md is stale: run `.venv/bin/python -m infersight.diagnose.path.doc > "
        "docs/path.md`"
    )


def test_the_page_lists_every_relation_and_setting() -> None:
    text = doc.render()
    for r in relations():
        assert r.doc() in text
        assert f"`relations/{r.explain.__module__.rsplit('.', 1)[-1]}.py`" in text
    for name in PathConfig.model_fields:
        assert f"| `{name}` |" in text
    assert "(trigger)" in text and "(bottleneck)" in text


def test_a_facet_without_words_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    facets = dict(doc.FACETS)
    facets.pop("sends")
    monkeypatch.setattr(doc, "FACETS", facets)
    with pytest.raises(ValueError, match="sends"):
        doc.render()


def test_each_rule_says_where_on_the_path_it_names_the_walks_end() -> None:
    kb = load_kb()
    for r in kb.rules:
        page = render_rule(r, kb.origins[r.id])
        if r.kind == "symptom":
            assert "**On the request path.**" not in page
            continue
        assert "**On the request path.**" in page, r.id
        if r.kind == "forecast":
            assert "A symptom to come, never a root" in page
            continue
        assert all(f"`{s}`" in page.split("**On the request path.**")[1] for s in r.signals)
        assert ("A limit (`under_load`)" in page) == r.under_load, r.id
        if "hop" in r.at:
            assert "the hop between the gateway and the engines" in page
