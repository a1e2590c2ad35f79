"""Front matter: written and read back unchanged; damage named by field, never a traceback."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infersight.postmortem.frontmatter import FrontMatter, FrontMatterError, dump, parse, slug

BASE = FrontMatter(
    id="2026-03-14-vector-db-swap", title="Vector DB swapped", date=dt.date(2026, 3, 14)
)


def test_round_trip_keeps_every_field() -> None:
    fm = BASE.model_copy(
        update={
            "started": dt.datetime(2026, 3, 14, 2, 17, tzinfo=dt.UTC),
            "services": ["rag-api"],
            "root_causes": ["vector_db_swap", "cache_capacity"],
            "fixed_by": "64 GiB for the vector DB node",
        }
    )
    back, body = parse(dump(fm) + "# Body\n")
    assert back == fm and body == "# Body\n"


@given(
    title=st.text(min_size=1, max_size=60).filter(lambda t: t.split() != []),
    services=st.lists(st.text(max_size=20), max_size=4),
    fixed=st.text(max_size=40),
)
def test_any_text_survives_the_yaml(title: str, services: list[str], fixed: str) -> None:
    fields = {"title": title, "services": services, "fixed_by": fixed}
    fm = FrontMatter.model_validate({**BASE.model_dump(), **fields})
    back, _ = parse(dump(fm))

    def line(t: str) -> str:
        return " ".join(t.split())

    assert back == fm
    assert (back.title, back.services, back.fixed_by) == (
        line(title),
        [line(s) for s in services],
        line(fixed),
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("# just a heading\n", "no front matter"),
        ("---\nid: x\n", "never closed"),
        ("---\nid: [broken\n---\n", "not YAML"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nid: 2026-03-14-a\ndate: 2026-03-14\n---\n", "title"),
        ("---\nid: Not An Id\ntitle: t\ndate: 2026-03-14\n---\n", "id"),
        ("---\nid: 2026-03-14-a\ntitle: t\ndate: 2026-03-14\nstatus: done\n---\n", "status"),
        ("---\nid: 2026-03-14-a\ntitle: t\ndate: someday\n---\n", "date"),
    ],
)
def test_damage_is_one_line_naming_the_field(text: str, says: str) -> None:
    with pytest.raises(FrontMatterError) as err:
        parse(text)
    assert says in str(err.value) and "\n" not in str(err.value)


def test_unknown_keys_are_kept_and_empty_lists_read_as_empty() -> None:
    fm, _ = parse(
        "---\nid: 2026-03-14-a\ntitle: t\ndate: 2026-03-14\nservices:\nteam: search\n---\n"
    )
    assert fm.services == [] and fm.model_extra == {"team": "search"}


def test_slug() -> None:
    assert slug("vector db swap") == "vector-db-swap"
    assert slug("!!!") == "incident"
    assert slug("nothing is wrong: no failure mode confirmed", 20) == "nothing-is-wrong-no"
    assert slug("x" * 60) == "x" * 48  # no whole word fits: the start of the first
