"""Malformed, oversized and unauthenticated payloads are refused with the right status, over
real HTTP; a good one is accepted once and then merged."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from inprocess import running
from notifications import notification

from infersight.serve.app import create_app
from infersight.serve.config import ServeConfig
from infersight.serve.dispatch import Job, Outcome

TOKEN = "hook-token-123456"


def _recording() -> tuple[list[Job], threading.Event, Callable[[Job], Outcome]]:
    jobs: list[Job] = []
    release = threading.Event()

    def runner(job: Job) -> Outcome:
        jobs.append(job)
        release.wait(10)
        return Outcome(None, {}, ["vector_db_swap"], "done")

    return jobs, release, runner


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, list[Job]]]:
    cfg = ServeConfig.model_validate(
        {"auth": {"bearer_token": TOKEN}, "out_dir": str(tmp_path), "max_body_bytes": 4096}
    )
    jobs, release, runner = _recording()
    with running(create_app(cfg, runner)) as url:
        yield url, jobs
        release.set()


def _post(url: str, body: bytes | str, token: str | None = TOKEN, **headers: str) -> httpx.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url + "/alerts", content=body, headers=headers, timeout=10)


def test_refusals_have_the_right_status(served: tuple[str, list[Job]]) -> None:
    url, jobs = served
    good = json.dumps(notification("g1", ["a"]))
    r = _post(url, good, token=None)
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert _post(url, good, token="wrong-token-000000").status_code == 401
    basic = base64.b64encode(b"user:" + TOKEN.encode()).decode()
    assert _post(url, good, token=None, Authorization=f"Basic {basic}").status_code == 401
    assert _post(url, b"{not json").status_code == 400
    assert _post(url, b"[" * 100 + b"]" * 100).status_code == 400  # nested past the cap
    assert _post(url, json.dumps({**notification("g", ["a"]), "version": "3"})).status_code == 422
    assert _post(url, json.dumps({"version": "4", "groupKey": "x"})).status_code == 422
    assert _post(url, b'"a string"').status_code == 422
    # a startsAt out of range once in UTC (found by tests/fuzz/test_serve_fuzz.py: it was a 500)
    late = notification("g", ["a"], starts_at="9999-12-31T23:59:59-12:00")
    r = _post(url, json.dumps(late))
    assert r.status_code == 422 and "startsAt" in r.json()["error"]
    big = json.dumps(notification("g1", [f"fp{i}" for i in range(200)]))
    assert len(big) > 4096
    assert _post(url, big).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: refused while streaming
        for _ in range(100):
            yield b" " * 100

    r = httpx.post(
        url + "/alerts", content=chunks(), headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10
    )
    assert r.status_code == 413
    assert jobs == []  # nothing refused reached a capture
    metrics = httpx.get(url + "/metrics").text
    assert 'infersight_serve_notifications_total{result="unauthenticated"} 3.0' in metrics
    assert 'infersight_serve_notifications_total{result="too_large"} 2.0' in metrics
    assert 'infersight_serve_notifications_total{result="malformed"} 6.0' in metrics

    assert _post(url, good).json()["status"] == "accepted"
    assert _post(url, good).json()["status"] == "duplicate"
    resolved = json.dumps(notification("g1", ["a"], status="resolved"))
    assert _post(url, resolved).json()["status"] == "resolved"
    assert httpx.get(url + "/healthz").json()["groups"] == 0
    assert len(jobs) <= 1


def test_basic_auth_is_accepted_when_configured(tmp_path: Path) -> None:
    cfg = ServeConfig.model_validate(
        {
            "auth": {"basic_auth": {"username": "am", "password": "pw-secret-1"}, "pages": True},
            "out_dir": str(tmp_path),
        }
    )
    _jobs, release, runner = _recording()
    with running(create_app(cfg, runner)) as url:
        good = json.dumps(notification("g1", ["a"]))
        ok = base64.b64encode(b"am:pw-secret-1").decode()
        bad = base64.b64encode(b"am:pw-secret-2").decode()
        assert _post(url, good, token=None, Authorization=f"Basic {bad}").status_code == 401
        r = _post(url, good, token=None, Authorization=f"Basic {ok}")
        assert r.status_code == 200 and r.json()["status"] == "accepted"
        # with auth.pages, the page and the reports ask for the same credentials
        page = httpx.get(url + "/")
        assert page.status_code == 401 and page.headers["www-authenticate"].startswith("Basic")
        page = httpx.get(url + "/", headers={"Authorization": f"Basic {ok}"})
        assert page.status_code == 200 and "InferenceQueueBacklog" in page.text
        capture = r.json()["capture"]
        assert httpx.get(f"{url}/captures/{capture}/report.md").status_code == 401
        assert httpx.get(url + "/healthz").status_code == 200  # liveness stays open
        release.set()
