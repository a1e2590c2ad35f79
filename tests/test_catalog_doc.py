from pathlib import Path

from infersight.catalog_doc import render
from infersight.exporters import load_catalog
from infersight.signals import all_signals

DOC = Path(__file__).resolve().parents[1] / "docs" / "signals.md"


def test_signals_doc_is_current() -> None:
    assert DOC.read_text("utf-8") == render(load_catalog()), (
        "docs/signals.md is stale: run "
        "`.venv/bin/python -m infersight.catalog_doc > docs/signals.md`"
    )


def test_doc_names_every_signal() -> None:
    text = DOC.read_text("utf-8")
    assert all(f"`{name}`" in text for name in all_signals())
