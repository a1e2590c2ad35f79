"""Runbooks load and validate: every id the rules name resolves to a starter, and a bad file
is refused with one line that names the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.diagnose.kb import load_kb
from infersight.runbooks import RunbookError, load_library, parse_runbook

GOOD = """\
id: ok-book
title: A runbook
params:
  url: {type: url}
steps:
  - name: call
    http: {url: "{{url}}/x"}
"""


def test_every_rule_runbook_id_resolves_to_a_starter() -> None:
    from infersight.runbooks.choose import variants

    kb = load_kb()
    named = {r.runbook for r in kb.rules if r.runbook}
    assert len(named) >= 20  # the rules do name runbooks: this check is not vacuous
    lib = load_library()
    missing = sorted(n for n in named if not variants(lib, n))
    assert missing == [], f"rules name runbooks with no starter: {missing}"


def test_starters_cover_the_issue_remedies() -> None:
    lib = load_library()
    kinds = {b.id: {s.kind for s in b.steps} for b in lib.books}
    assert "http" in kinds["gateway-failover"]  # traffic shift: gateway over HTTP
    assert "http" in kinds["degrade"]  # feature flag
    assert "kubectl" in kinds["scale-out"] and "kubectl" in kinds["release-rollback"]
    assert kinds["cache-resize"] == {"redis"}
    assert kinds["batch-window-adaptive"] == {"http"} == kinds["admission-control"]
    assert "http" in kinds["drain-node-haproxy"] and "kubectl" in kinds["drain-node-kubernetes"]
    for b in lib.books:  # every starter says what proves it worked
        assert b.verify is not None, b.id


def _refusal(text: str, tmp_path: Path, name: str = "ok-book.yaml") -> str:
    (tmp_path / name).write_text(text)
    with pytest.raises(RunbookError) as err:
        load_library([tmp_path])
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(str(tmp_path / name))  # names the file
    return msg


@pytest.mark.parametrize(
    ("mutation", "field"),
    [
        (lambda t: t.replace("type: url", "type: uri"), "params.url.type"),
        (lambda t: t + "colour: red\n", "colour"),
        (lambda t: t.replace('"{{url}}/x"', '"{{uri}}/x"'), "steps.0"),
        (lambda t: t.replace("http: {url", "command: {argv: [ls]}\n    http: {url"), "steps.0"),
        (
            lambda t: t.replace(
                '    http: {url: "{{url}}/x"}', "    command: {argv: [sh, -c, ls]}"
            ),
            "steps.0.command",
        ),
        (lambda t: t.replace("id: ok-book", "id: Not_An_Id"), "id"),
    ],
)
def test_bad_runbook_names_file_and_field(mutation: object, field: str, tmp_path: Path) -> None:
    msg = _refusal(mutation(GOOD), tmp_path)  # type: ignore[operator]
    assert f"{field}" in msg, msg


def test_id_must_match_file_name_and_yaml_errors_are_one_line(tmp_path: Path) -> None:
    assert "differs from the file name" in _refusal(GOOD, tmp_path, "other.yaml")
    bad = tmp_path / "broken"
    bad.mkdir()
    assert "not valid YAML" in _refusal("id: [unclosed\n", bad, "ok-book.yaml")


def test_user_folder_replaces_a_starter(tmp_path: Path) -> None:
    text = GOOD.replace("ok-book", "degrade").replace("A runbook", "Our own degrade")
    (tmp_path / "degrade.yaml").write_text(text)
    lib = load_library([tmp_path])
    book = lib.get("degrade")
    assert book is not None and book.title == "Our own degrade"
    assert lib.origins["degrade"] == str(tmp_path / "degrade.yaml")


def test_a_good_runbook_parses_and_describes_steps() -> None:
    book = parse_runbook(GOOD, "ok-book.yaml")
    assert book.steps[0].describe() == "POST {{url}}/x"


SAMPLE = {
    "url": "http://127.0.0.1:9",
    "name": "web-1",
    "host": "127.0.0.1",
    "str": "replica-0",
    "int": "2",
    "float": "0.5",
    "bool": "true",
}


def test_every_starter_dry_runs_with_its_parameters_filled(no_cluster: Path) -> None:
    from infersight.runbooks.checks import Checker
    from infersight.runbooks.executor import Runner
    from infersight.runbooks.params import resolve

    for book in load_library().books:
        given = {
            n: SAMPLE[p.type]
            for n, p in book.params.items()
            if p.default is None and p.type in SAMPLE
        }
        values = resolve(book.params, given, {}, 256, missing_secrets_ok=True)
        report = Runner(book, values, Checker(None, 1.0)).dry_run()
        assert len(report.plan) == len(book.steps) + len(book.rollback)
        # refused only as a real run would be here: no kubectl, or no cluster it reaches
        reads = [c for c in report.preconditions if c.command]
        assert report.outcome == "dry-run" or report.missing or reads, report.reason
        assert all(c.verdict == "fails" for c in reads)  # no cluster in the tests
        for planned in report.plan:
            assert "{{" not in planned.what, (book.id, planned.what)
            if planned.kind == "kubectl":
                assert planned.what.startswith("kubectl "), planned.what
        promql = [c for c in report.preconditions if not c.command]
        assert all(c.verdict == "unknown" for c in promql)  # no server given
