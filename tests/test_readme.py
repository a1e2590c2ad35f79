"""Every README command runs as written (issue 39).

The README's `sh` blocks are parsed (a line ending in `\\` goes on, `# …` is a comment, `a && b &`
is two commands). Each `infersight` command that needs no server and no long run is run as
written, by a shell, in a temporary folder holding the files the README's earlier steps would
have made (`incident.tar.gz` from `pull`, `scene.tar.gz` from `capture`, `report.json`, eight
saved scrapes for `scrape-*.prom`): it must exit 0 (nothing to act on) or 1 (something to act
on), never a usage error, "cannot judge" or a traceback, and its output must not start with a
blank line. The others are parsed with the command's own parser (every option known, every
value of the right kind, nothing missing) without being run; `PARSE_ONLY` says why for each.
A README line that is neither is refused, so a new command gets a decision here.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

from infersight.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"

#: commands checked by their parser only, by what they contain, and why
PARSE_ONLY = {
    "http://prometheus:9090": "reads a live Prometheus (tests/sources and tests/cli test that)",
    "infersight serve": "a webhook server that runs until stopped (tests/serve)",
    "infersight lab up": "starts the live lab of real processes (tests/lab/live)",
    "infersight lab load": "ten minutes of load on a running live lab",
    "infersight lab fault": "needs a running live lab",
    "infersight lab down": "stops a running live lab",
    "infersight stress run": "a three-minute load test against a running live lab",
    "-o 0217.om": "writes 1.7 GB of OpenMetrics text (tests/lab/sim test a small one)",
    "infersight bench accuracy": "the accuracy benchmark: minutes of CPU (docs/benchmarks.md)",
}
#: README lines that are not `infersight` commands
NOT_OURS = {
    "make demo": "installs the venv and Debian packages (apt-get) before running the demo",
    "make test": "the whole test suite, this test included",
    "pip install": "needs a package index",
}
#: what a shell substitution in a parsed-only command stands for
SUBSTITUTE = {'"$(jq -r .gateway lab/lab.json)"': "http://127.0.0.1:8080"}


def readme_commands() -> list[str]:
    """Every command line of the README's sh blocks, as a shell would read it."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = re.sub(r"\s+#\s.*$", "", line).strip()
            if not line or line.startswith("#"):
                continue
            for part in line.rstrip("&").split("&&"):
                out.append(part.strip())
    return out


def _kind(command: str) -> str:
    if any(command.startswith(k) for k in NOT_OURS):
        return "not ours"
    assert command.startswith("infersight "), f"unclassified README line: {command}"
    return "parse" if any(k in command for k in PARSE_ONLY) else "run"


def _parses(command: str) -> None:
    """Parse the command line with the command's own parser, as click would before running it."""
    for text, value in SUBSTITUTE.items():
        command = command.replace(text, value)
    args = shlex.split(command)[1:]
    cmd = typer.main.get_command(app)
    path = ["infersight"]
    while hasattr(cmd, "commands") and args and args[0] in cmd.commands:
        path.append(args[0])
        cmd = cmd.commands[args.pop(0)]
    assert not hasattr(cmd, "commands"), f"{command}: names no command"
    with cmd.make_context(" ".join(path), args) as ctx:  # raises on a bad command line
        assert ctx.params is not None


def _scrapes(folder: Path) -> None:
    for k in range(8):
        (folder / f"scrape-{k + 1:03d}.prom").write_text(
            "# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{model_name="m"}} {4 + k % 2}\n'
            "# TYPE vllm:num_requests_waiting gauge\n"
            f'vllm:num_requests_waiting{{model_name="m"}} {k}\n'
        )


def _shell(folder: Path, command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    src = [str(README.parent / "src"), os.environ.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in src if p)  # this checkout's code
    env.pop("INFERSIGHT_PROMETHEUS", None)
    return subprocess.run(
        ["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def test_the_readme_has_commands_of_each_kind() -> None:
    kinds = {c: _kind(c) for c in readme_commands()}
    assert sum(k == "run" for k in kinds.values()) >= 12, kinds
    assert sum(k == "parse" for k in kinds.values()) >= 8, kinds
    for prefix in [*NOT_OURS, *PARSE_ONLY]:  # every reason given still names a README line
        assert any(prefix in c for c in kinds), prefix


def test_every_command_that_needs_a_server_or_a_long_run_parses() -> None:
    for command in readme_commands():
        if _kind(command) == "parse":
            _parses(command)


@pytest.mark.slow
@pytest.mark.sim
def test_every_other_readme_command_runs_as_written(tmp_path: Path) -> None:
    assert shutil.which("bash")
    made = _shell(tmp_path, "infersight lab sim -s incident_0217 -o incident.tar.gz -n 4")
    assert made.returncode == 0, made.stderr
    shutil.copy(tmp_path / "incident.tar.gz", tmp_path / "scene.tar.gz")  # as `capture` writes
    report = _shell(tmp_path, "infersight diagnose incident.tar.gz -o report.json")
    assert report.returncode == 1, report.stderr  # the 02:17 incident: something to act on
    _scrapes(tmp_path)
    ran = []
    for command in readme_commands():
        if _kind(command) != "run":
            continue
        res = _shell(tmp_path, command)
        assert res.returncode in (0, 1), (command, res.returncode, res.stderr[-2000:])
        assert "Traceback" not in res.stderr, (command, res.stderr[-2000:])
        assert not res.stdout or res.stdout.splitlines()[0].strip(), (command, res.stdout[:200])
        ran.append(command)
    assert any("bundle import scrape-*.prom" in c for c in ran)
    assert (tmp_path / "b.tar.gz").is_file() and (tmp_path / "report.html").is_file()
    assert list((tmp_path / "ops" / "postmortems").glob("*.md"))
