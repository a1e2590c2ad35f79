"""The queue folder behind "accepted": each job is on disk before the answer, gone once it has
run, resumed by the next start (its group remembered again); a damaged file is named and left,
and a folder that refuses a job makes the answer 503, never an "accepted" that is not kept."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest
from inprocess import running
from notifications import notification

from infersight.serve.alerts import Notification
from infersight.serve.app import create_app
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import Decision, Dispatcher, Job, Outcome
from infersight.serve.spool import Spool

TOKEN = "spool-token-123456"


def _n(group: str) -> Notification:
    return Notification.model_validate(notification(group, [f"{group}-a"]))


def test_jobs_left_at_stop_are_resumed_once_and_their_groups_remembered(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "queue")
    held = threading.Event()
    ran: list[str] = []

    def blocked(job: Job) -> Outcome:
        held.wait(10)  # the first job runs until the test is done with it
        return Outcome(None, {}, [], "")

    async def first_run() -> list[str]:
        d = Dispatcher(blocked, max_concurrency=1, queue_size=8, spool=spool)
        await d.start()
        ids = []
        for g in ("g0", "g1", "g2"):
            decision, record = d.submit(_n(g))
            assert decision is Decision.ACCEPTED and record is not None
            assert spool.path(record.id).is_file()  # on disk before the answer
            ids.append(record.id)
        await asyncio.sleep(0.05)  # the first one starts
        left = await d.stop(grace=0.0)
        assert [r.id for r in left] == ids and left[0].status == "running"
        return ids

    ids = asyncio.run(first_run())
    assert sorted(p.stem for p in spool.folder.glob("*.json")) == sorted(ids)
    held.set()  # the job cut short ends now; its file goes with it, as a capture that finished
    deadline = time.monotonic() + 30
    while spool.path(ids[0]).exists() and time.monotonic() < deadline:
        time.sleep(0.05)

    def recording(job: Job) -> Outcome:
        ran.append(job.id)
        return Outcome(None, {}, [], "")

    async def second_run() -> Dispatcher:
        d = Dispatcher(recording, max_concurrency=1, queue_size=8, spool=spool)
        await d.start()
        assert d.submit(_n("g2"))[0] is Decision.DUPLICATE  # a repeat of a resumed group
        await d.drain()
        await d.stop()
        return d

    d = asyncio.run(second_run())
    assert ran == ids[1:]  # the two left queued, each once; the one that ended is not rerun
    assert d.stats.resumed == 2 and d.stats.done == 2 and d.stats.accepted == 0
    assert not list(spool.folder.iterdir())


def test_a_damaged_queue_file_is_named_and_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    spool = Spool(tmp_path / "queue")
    spool.open()
    (spool.folder / "20261206T000000Z-x-00000000.json").write_text("{half a job")
    good = _n("g0")
    spool.put("20261206T000001Z-y-11111111", 1_796_000_000.0, good)
    ran: list[str] = []

    async def run() -> None:
        d = Dispatcher(lambda job: ran.append(job.id) or Outcome(None, {}, [], ""), spool=spool)
        await d.start()
        await d.drain()
        await d.stop()

    with caplog.at_level(logging.WARNING, logger="infersight.serve"):
        asyncio.run(run())
    assert ran == ["20261206T000001Z-y-11111111"]
    assert "20261206T000000Z-x-00000000.json: not a queued capture (not JSON); left as is" in (
        caplog.text
    )
    assert [p.name for p in spool.folder.iterdir()] == ["20261206T000000Z-x-00000000.json"]


def test_a_queue_folder_that_refuses_the_job_is_a_503(tmp_path: Path) -> None:
    queue = tmp_path / "q"
    cfg = ServeConfig.model_validate(
        {"auth": {"bearer_token": TOKEN}, "out_dir": str(tmp_path), "queue_dir": str(queue)}
    )
    ran: list[Job] = []
    app = create_app(cfg, lambda job: ran.append(job) or Outcome(None, {}, [], ""))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    body = json.dumps(notification("g1", ["a"]))
    with running(app) as url:
        shutil.rmtree(queue)
        queue.write_text("a file where the queue folder was")
        r = httpx.post(url + "/alerts", content=body, headers=headers)
        assert r.status_code == 503 and r.headers["retry-after"] == "30"
        assert r.json()["error"] == "the capture could not be queued on disk; retry later"
        queue.unlink()
        queue.mkdir()
        # nothing was remembered of the refused group: the retry is accepted
        r = httpx.post(url + "/alerts", content=body, headers=headers)
        assert r.json()["status"] == "accepted"
        metrics = httpx.get(url + "/metrics").text
    assert 'infersight_serve_notifications_total{result="unstored"} 1.0' in metrics
