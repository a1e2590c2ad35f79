"""Every output goes through one safe writer: only over nothing or a regular file, never
following a symlink, through an unpredictable temporary that SIGTERM removes, and output paths
checked before any work is done."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from infersight.bundle import write_bundle
from infersight.diagnose.result import Diagnosis
from infersight.frame import MetricFrame
from infersight.report import write_report
from infersight.sources.openmetrics_writer import write_openmetrics
from infersight.sources.raw import RawStore, labels_of
from servers import FakeServer, Reply, Request

pytestmark = pytest.mark.slow

START = 1_700_000_000.0
SPECIAL = r"is a (symbolic link|named pipe|device)"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from infersight.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def one_line_error(res: subprocess.CompletedProcess[str], code: int, *words: str) -> None:
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    for word in words:
        assert word in lines[0], lines[0]


def small_frame() -> MetricFrame:
    values = 50 + np.random.default_rng(0).normal(0, 1, (2, 120))
    return MetricFrame(START, 15.0, 120).with_series("service.queue_length", ["n0", "n1"], values)


def small_store() -> RawStore:
    store = RawStore()
    ts = START + 15.0 * np.arange(10)
    store.add_many("up", labels_of({"instance": "a:1"}), ts, np.ones(10))
    return store


def a_bundle(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "in.tar.gz", {"incident": small_frame()}, {"kind": "test"})


def _diagnosis() -> Diagnosis:
    return Diagnosis(START, START + 600, 15.0, healthy=True, summary="fine", scope={})


# -- the target is never anything but nothing or a regular file -------------------------------


def _symlink(path: Path) -> None:
    victim = path.parent / "victim.txt"
    victim.write_text("precious")
    path.symlink_to(victim)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # like /dev/null
    except PermissionError:
        pytest.skip("making a device file needs CAP_MKNOD")


PLANTS = {"symlink": _symlink, "fifo": _fifo, "device": _device}
KIND = {"symlink": stat.S_ISLNK, "fifo": stat.S_ISFIFO, "device": stat.S_ISCHR}


def _unchanged(path: Path, plant: str) -> None:
    assert KIND[plant](os.lstat(path).st_mode), f"{path} was replaced"
    if plant == "symlink":
        assert (path.parent / "victim.txt").read_text() == "precious"


def _no_temps(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("plant", PLANTS)
def test_report_is_not_written_over_a_special_file(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "r.md"
    PLANTS[plant](target)
    with pytest.raises(Exception, match=SPECIAL):
        write_report(_diagnosis(), target, "md")
    _unchanged(target, plant)
    _no_temps(tmp_path)


@pytest.mark.parametrize("plant", PLANTS)
def test_openmetrics_is_not_written_over_a_special_file(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "data.om"
    PLANTS[plant](target)
    with pytest.raises(Exception, match=SPECIAL):
        write_openmetrics(small_store(), target)
    _unchanged(target, plant)
    _no_temps(tmp_path)


@pytest.mark.parametrize("name", ["b.tar.gz", "b"])
@pytest.mark.parametrize("plant", PLANTS)
def test_bundle_overwrite_does_not_replace_a_special_file(
    tmp_path: Path, plant: str, name: str
) -> None:
    target = tmp_path / name
    PLANTS[plant](target)
    with pytest.raises(Exception, match=SPECIAL):
        write_bundle(target, {"incident": small_frame()}, {"kind": "test"}, overwrite=True)
    _unchanged(target, plant)
    _no_temps(tmp_path)


def test_openmetrics_temp_name_is_not_predictable(tmp_path: Path) -> None:
    # someone who can write in the folder plants the old fixed temporary name as a symlink
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / ".data.om.tmp").symlink_to(victim)
    write_openmetrics(small_store(), tmp_path / "data.om")
    assert victim.read_text() == "precious"
    assert (tmp_path / "data.om").read_text().endswith("# EOF\n")
    assert not (tmp_path / "data.om").is_symlink()


@pytest.mark.parametrize("plant", PLANTS)
def test_diagnose_out_refuses_a_special_file(tmp_path: Path, plant: str) -> None:
    bundle = a_bundle(tmp_path)
    target = tmp_path / "r.md"
    PLANTS[plant](target)
    one_line_error(cli("diagnose", str(bundle), "-o", str(target)), 2, "--out", str(target))
    _unchanged(target, plant)


@pytest.mark.parametrize("plant", ["symlink", "device"])
def test_lab_sim_overwrite_refuses_a_special_file(tmp_path: Path, plant: str) -> None:
    target = tmp_path / "sim"
    PLANTS[plant](target)
    res = cli(
        "lab", "sim", "-s", "incident_0217", "--hours", "0.5", "--history", "0", "-n", "1",
        "-o", str(target), "--overwrite",
    )  # fmt: skip
    one_line_error(res, 2, str(target))
    _unchanged(target, plant)


# -- output paths: checked before the work, one line, no traceback ----------------------------


def test_out_without_format_writes_plain_text(tmp_path: Path) -> None:
    bundle = a_bundle(tmp_path)
    # --full: the short first screen has no title panel to look for
    res = cli("diagnose", str(bundle), "--full", "-o", "r.txt", cwd=tmp_path)
    # 3: a queue alone, with no baseline, is no ground for a verdict; the report says so
    assert res.returncode == 3 and "Traceback" not in res.stderr, res.stderr
    text = (tmp_path / "r.txt").read_text()
    assert "infersight diagnosis" in text and "\x1b[" not in text
    res = cli("diagnose", str(bundle), "-o", "r.json", cwd=tmp_path)
    assert (tmp_path / "r.json").read_text().lstrip().startswith("{")


def _names(req: Request) -> Reply:
    return 200, {"status": "success", "data": ["vllm:num_requests_waiting"]}


def _read_only_folder(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    try:  # root writes anywhere a mode allows; sysfs refuses new files even to root
        os.close(os.open("/sys/infersight-probe", os.O_CREAT | os.O_WRONLY, 0o600))
    except OSError:
        return Path("/sys")
    os.unlink("/sys/infersight-probe")
    pytest.skip("no read-only folder available to root here")


@pytest.mark.parametrize("where", ["missing", "file", "read-only"])
def test_bad_out_folder_fails_before_any_query(tmp_path: Path, where: str) -> None:
    if where == "missing":
        folder = tmp_path / "nowhere"
    elif where == "file":
        folder = tmp_path / "f.txt"
        folder.write_text("x")
    else:
        folder = _read_only_folder(tmp_path)
    with FakeServer(_names) as fake:
        res = cli("diagnose", "-p", fake.url, "-o", str(folder / "r.md"), "--timeout", "2")
        one_line_error(res, 2, "--out", str(folder))
        assert fake.requests == [], "the analysis ran before the output was checked"


def test_demo_out_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    one_line_error(cli("demo", "--out-dir", str(tmp_path / "f")), 2, "--out-dir", "not a folder")
    assert (tmp_path / "f").read_text() == "x"


# -- SIGTERM during a write leaves no temporary behind ----------------------------------------

SLOW = """
import os, sys, time

real_fsync = os.fsync
def slow(fd):  # the write is under way: say so, then take a long time
    print("writing", flush=True)
    time.sleep(120)
{patch}
{write}
"""
WRITERS: dict[str, tuple[str, str]] = {
    "report": (
        "os.fsync = slow",
        "sys.path.insert(0, 'tests/report'); from report_samples import incident\n"
        "from infersight.report import write_report\n"
        "write_report(incident(), sys.argv[1] + '/r.md', 'md')",
    ),
    "bundle-tar": (
        "os.fsync = slow",
        "from test_safe_write import small_frame; from infersight.bundle import write_bundle\n"
        "write_bundle(sys.argv[1] + '/b.tar.gz', {'incident': small_frame()}, {'kind': 't'})",
    ),
    "bundle-dir": (
        "os.fsync = slow",
        "from test_safe_write import small_frame; from infersight.bundle import write_bundle\n"
        "write_bundle(sys.argv[1] + '/b', {'incident': small_frame()}, {'kind': 't'})",
    ),
    "openmetrics": (
        "import infersight.sources.openmetrics_writer as om\n"
        "def slow_write(store, f, types, progress=None):\n    f.write('x'); f.flush(); slow(0)\n"
        "om._write = slow_write",
        "from test_safe_write import small_store\n"
        "om.write_openmetrics(small_store(), sys.argv[1] + '/data.om')",
    ),
}


@pytest.mark.parametrize("writer", WRITERS)
def test_sigterm_mid_write_removes_the_temporary(tmp_path: Path, writer: str) -> None:
    patch, write = WRITERS[writer]
    code = textwrap.dedent(SLOW).format(patch=patch, write=write)
    out = tmp_path / "out"
    out.mkdir()
    tests = Path(__file__).parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tests), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tests.parent,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == "writing\n", proc.stderr.read() if proc.stderr else line
        assert list(out.iterdir()), "no temporary to clean up: the test would prove nothing"
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    finally:
        proc.kill()
    assert rc in (-signal.SIGTERM, 128 + signal.SIGTERM)
    assert list(out.iterdir()) == []
