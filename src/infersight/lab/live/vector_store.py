"""The vector service's full-precision vectors, kept in a file and read through a shared
mapping, as vector databases serve vectors kept on disk (qdrant's `on_disk` vectors, Milvus's
mmap mode): the HNSW graph in RAM finds candidates, the exact vectors are read from the
mapping to rescore them. While the file's pages sit in the page cache a read costs nothing;
once they are gone every read is a major page fault served from the disk.

`evict()` takes the file's pages out of this process's page tables (`madvise(MADV_DONTNEED)`)
and then out of the page cache (`posix_fadvise(POSIX_FADV_DONTNEED)`); pages still mapped
would be skipped by the second. A `Pressure` thread calls it at a fixed pace: it does what the
kernel's reclaim does to a file-backed index that no longer fits in RAM, without needing a
memory limit, a cgroup or swap. The disk reads and the page faults that follow are real.
"""

from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

PAGE = mmap.PAGESIZE


def major_faults() -> int:
    """This process's major page faults, all threads (field 12 of /proc/self/stat)."""
    with open("/proc/self/stat") as f:
        raw = f.read()
    return int(raw.rsplit(")", 1)[1].split()[9])


class DiskVectors:
    """`docs × dim` float32 vectors in `path`, read through a read-only shared mapping."""

    def __init__(self, path: Path, data: np.ndarray) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            data.astype(np.float32).tofile(f)
            f.flush()
            os.fsync(f.fileno())  # on disk, not dirty: only clean pages can leave the cache
        os.replace(tmp, path)
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size
        self.map = mmap.mmap(self.fd, self.size, prot=mmap.PROT_READ)
        # random reads of a few vectors each: no readahead, as databases ask of their mmaps
        self.map.madvise(mmap.MADV_RANDOM)
        self._bytes = np.frombuffer(self.map, dtype=np.uint8)
        self.vectors = self._bytes.view(np.float32).reshape(data.shape)
        self._libc = ctypes.CDLL(None, use_errno=True)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """The exact vectors `ids` (a copy: the reads happen here)."""
        out: np.ndarray = self.vectors[ids]
        return out

    def evict(self) -> None:
        """Out of this process's page tables, then out of the page cache."""
        self.map.madvise(mmap.MADV_DONTNEED)
        os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_DONTNEED)

    def warm(self) -> None:
        """Read the whole file back in, as a service given RAM for its index loads it."""
        self.map.madvise(mmap.MADV_WILLNEED)
        int(self._bytes[::PAGE].sum())

    def resident_bytes(self) -> int:
        """How much of the file is in the page cache now (mincore on the mapping)."""
        pages = (self.size + PAGE - 1) // PAGE
        vec = (ctypes.c_ubyte * pages)()
        addr = ctypes.c_void_p(self._bytes.ctypes.data)
        mincore = self._libc.mincore
        mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
        if mincore(addr, ctypes.c_size_t(self.size), vec) != 0:
            return -1
        return min(self.size, int(np.count_nonzero(np.frombuffer(bytes(vec), np.uint8) & 1)) * PAGE)


class Pressure:
    """A thread that evicts the vectors' pages every `interval_s` until stopped."""

    def __init__(self, store: DiskVectors, interval_s: float) -> None:
        self.store = store
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="page-pressure", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(OSError, ValueError):
                self.store.evict()
            self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)


class StoreCollector(Collector):
    """The vector DB's own view of its memory, read at scrape time: major page faults of its
    process, and how much of its on-disk vectors is resident against their size."""

    def __init__(self, store: DiskVectors) -> None:
        self.store = store

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        faults = CounterMetricFamily(
            "infersight_dependency_major_page_faults",
            "Major page faults of the dependency's process (reads served from disk).",
            labels=("dependency",),
        )
        faults.add_metric(("vector_db",), float(major_faults()))
        yield faults
        size = GaugeMetricFamily(
            "infersight_vector_index_bytes",
            "Size of the vector index's on-disk vectors.",
            labels=("dependency",),
        )
        size.add_metric(("vector_db",), float(self.store.size))
        yield size
        resident = GaugeMetricFamily(
            "infersight_vector_index_resident_bytes",
            "Bytes of the on-disk vectors in the page cache (mincore).",
            labels=("dependency",),
        )
        resident.add_metric(("vector_db",), float(self.store.resident_bytes()))
        yield resident
