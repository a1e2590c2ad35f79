"""The round trip through the real command line: a diagnosis, a draft, a human edit, then the
library finds it by words and by signature, and `diagnose --history` links it in every format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sim_incidents import windows

from infersight.bundle import write_bundle

pytestmark = [pytest.mark.slow, pytest.mark.sim]

FIX = "64 GiB for the vector DB node and a larger cache"


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("bundles")
    past = write_bundle(folder / "past.tar.gz", windows("incident_0217", 0), {"kind": "sim"})
    now = write_bundle(folder / "now.tar.gz", windows("incident_0217", 1), {"kind": "sim"})
    return past, now


def test_round_trip(bundles: tuple[Path, Path], tmp_path: Path) -> None:
    past, now = bundles
    lib = tmp_path / "postmortems"
    report = tmp_path / "report.json"
    assert cli("diagnose", str(past), "-o", str(report)).returncode == 1  # findings
    audit = tmp_path / "audit.jsonl"
    audit.write_text('{"ts": "2025-06-03T03:05:00Z", "runbook": "vectordb-memory", "step": 2, '
                     '"outcome": "ok"}\nnot json\n')  # fmt: skip
    made = cli("postmortem", "new", "--from", str(report), "-o", str(lib), "--service", "rag-api",
               "--audit", str(audit), "-f", "json")  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "audit.jsonl:2: not JSON" in made.stderr
    path = Path(json.loads(made.stdout)["path"])
    text = path.read_text()
    assert "Runbook vectordb-memory step 2: ok" in text and "services:\n- rag-api" in text

    # a person edits the draft: what was done, the fix, the status
    text = text.replace("fixed_by: ''", f"fixed_by: {FIX}").replace(
        "status: draft", "status: final"
    )
    done = "What was done, and when: moved the index to a node with more memory"
    text = text.replace("What was done, and when: _to fill in_", done)
    path.write_text(text)

    found = cli("postmortem", "search", "index node memory", "-l", str(lib), "-f", "json")
    assert found.returncode == 0, found.stderr
    assert [h["id"] for h in json.loads(found.stdout)["hits"]] == [path.stem]
    # no match is no finding: exit 0, and the output says so (one exit table, docs/cli.md)
    none = cli("postmortem", "search", "reranker", "-l", str(lib))
    assert none.returncode == 0 and "reranker" in none.stdout, none.stdout

    now_report = tmp_path / "now.json"
    cli("diagnose", str(now), "-o", str(now_report))
    sim = cli("postmortem", "similar", str(now_report), "-l", str(lib), "-f", "json")
    assert sim.returncode == 0, sim.stderr
    top = json.loads(sim.stdout)["similar"][0]
    assert (top["id"], top["fixed_by"]) == (path.stem, FIX) and top["score"] > 0.8

    shown = cli("postmortem", "show", path.stem, "-l", str(lib))
    assert shown.returncode == 0 and shown.stdout == path.read_text()

    # every report format links it; the folder may come from the environment
    env = {"INFERSIGHT_HISTORY": str(lib)}
    line = f"seen before: {top['date']}, "
    for fmt in ("terminal", "md", "brief"):
        res = cli("diagnose", str(now), "-f", fmt, env=env)
        assert res.returncode == 1 and line in " ".join(res.stdout.split()).lower(), fmt
        assert FIX in " ".join(res.stdout.split()), fmt
    doc = json.loads(cli("diagnose", str(now), "-f", "json", "--history", str(lib)).stdout)
    assert doc["seen_before"][0]["fixed_by"] == FIX
    html = tmp_path / "r.html"
    assert cli("diagnose", str(now), "-o", str(html), env=env).returncode == 1
    assert 'id="seen-before"' in html.read_text() and FIX in html.read_text()

    # a damaged file is named, and the rest are still listed and linked
    (lib / "2025-01-01-broken.md").write_text("---\nid: 2025-01-01-broken\ntitle: [x\n---\n")
    listed = cli("postmortem", "list", "-l", str(lib), "-f", "json")
    assert listed.returncode == 1
    assert [p["id"] for p in json.loads(listed.stdout)["postmortems"]] == [path.stem]
    assert "2025-01-01-broken.md: front matter is not YAML" in " ".join(listed.stderr.split())
    res = cli("diagnose", str(now), "-f", "json", env=env)
    assert json.loads(res.stdout)["seen_before"][0]["id"] == path.stem
    assert "history: skipped" in res.stderr


def test_one_line_errors(bundles: tuple[Path, Path], tmp_path: Path) -> None:
    past, _ = bundles
    missing = cli("postmortem", "new", "--from", str(tmp_path / "nope.json"), "-o", str(tmp_path))
    assert missing.returncode == 3 and "no such file" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    nolib = cli("postmortem", "list", "-l", str(tmp_path / "none"))
    assert nolib.returncode == 3 and "no such library folder" in nolib.stderr
    nohist = cli("diagnose", str(past), "--history", str(tmp_path / "none"))
    assert nohist.returncode == 2 and "--history" in nohist.stderr
    absent = cli("postmortem", "show", "2020-01-01-nothing", "-l", str(tmp_path))
    assert absent.returncode == 3 and "postmortem list" in absent.stderr
