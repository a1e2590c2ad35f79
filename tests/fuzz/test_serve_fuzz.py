"""Fuzz what `infersight serve` and `diagnose --alert` take from outside with hypothesis: the
webhook body (posted over real HTTP to the app on uvicorn), serve's config file and its
environment overrides, and a saved alert file. Each answers 2xx, or 4xx with a one-line JSON
error, or raises the project's one-line error; never a 500, a traceback or a crash.

The strategies mix free text and bytes with near-valid input built from each format's pieces
(a notification with one field wrong, a config with known keys and odd values), where the bugs
live; a fixed budget keeps each test to a few seconds."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.serve.inprocess import running
from tests.serve.notifications import notification

from infersight.cli.common import CommandError
from infersight.cli.serve_cmds import alert_pull, alert_start
from infersight.serve.alerts import Notification, PayloadError, parse_notification, read_alert_file
from infersight.serve.app import create_app
from infersight.serve.config import ConfigError, ServeConfig, load_config
from infersight.serve.dispatch import Job, Outcome
from infersight.serve.spool import Spool

pytestmark = pytest.mark.slow
BUDGET = settings(
    max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
TOKEN = "fuzz-token-123456"
_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _one_line(text: str) -> None:
    assert text and "\n" not in text and "Traceback" not in text, repr(text)


# -- pieces -------------------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_TIMES = st.sampled_from(
    ["2026-12-02T02:17:00Z", "2026-12-02T02:17:00.123456789+05:30", "0001-01-01T00:00:00Z",
     "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+12:00", "2026-13-01T00:00:00Z",
     "2026-12-02T02:17:00", "2026-12-02", "", "now", "1796000000"]
) | st.integers() | st.floats()  # fmt: skip
_LABELS = st.dictionaries(
    st.sampled_from(["alertname", "instance", "job", "severity", "", "a\nb"]) | st.text(max_size=6),
    st.text(max_size=12) | st.sampled_from(["x" * 5000, "../../etc", "<b>", "\x00", "[red]"]),
    max_size=4,
) | _JSON  # fmt: skip
_ALERT = st.fixed_dictionaries(
    {"status": st.sampled_from(["firing", "resolved", "pending", 1]), "labels": _LABELS},
    optional={"annotations": _LABELS, "startsAt": _TIMES, "endsAt": _TIMES,
              "generatorURL": st.text(max_size=10), "fingerprint": st.text(max_size=10) | _JSON},
)  # fmt: skip
_NOTIFICATION = st.fixed_dictionaries(
    {"version": st.sampled_from(["4", "4", "4", "3", 4, None]),
     "groupKey": st.text(max_size=16) | st.sampled_from(["", "k" * 5000]),
     "status": st.sampled_from(["firing", "resolved", "x"]),
     "alerts": st.lists(_ALERT, max_size=3) | _JSON},
    optional={"truncatedAlerts": st.integers() | st.text(max_size=3), "receiver": _JSON,
              "groupLabels": _LABELS, "commonLabels": _LABELS, "commonAnnotations": _LABELS,
              "externalURL": st.text(max_size=10) | _JSON, "extra": _JSON},
)  # fmt: skip

#: a notification as Alertmanager sends it, then a field or two set to an odd value (or removed)
_DROP = "<removed>"
_ODD_JSON = [
    _DROP, None, True, 0, -1, 2**70, 1.5, float("nan"), "", "x", "x" * 5000, "\x00", "a\nb",
    "[red]x[/]", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+12:00",
    "2026-13-01T00:00:00Z", "2026-12-02T02:17:00", "2026-12-02", "firing", "resolved", "4", [],
    {}, [{}], {"a": 1}, {"alertname": "x" * 300}, {"": ""},
]  # fmt: skip
_PATHS: list[tuple[str | int, ...]] = [
    *[(k,) for k in ("version", "groupKey", "truncatedAlerts", "status", "receiver",
                     "groupLabels", "commonLabels", "commonAnnotations", "externalURL", "alerts")],
    ("groupLabels", "alertname"), ("commonLabels", "alertname"), ("commonLabels", "instance"),
    *[("alerts", 0, k) for k in ("status", "labels", "annotations", "startsAt", "endsAt",
                                 "generatorURL", "fingerprint")],
    ("alerts", 0, "labels", "alertname"), ("alerts", 1, "status"), ("alerts", 1, "startsAt"),
]  # fmt: skip
_MUTATIONS = st.lists(
    st.tuples(st.sampled_from(_PATHS), st.sampled_from(_ODD_JSON) | _JSON), min_size=1, max_size=3
)


def _mutated(mutations: list[tuple[tuple[str | int, ...], Any]], group: str) -> bytes:
    doc: Any = notification(group, [f"{group}-a", f"{group}-b"])
    for path, value in mutations:
        node = doc
        for step in path[:-1]:
            in_dict = isinstance(node, dict) and step in node
            in_list = isinstance(node, list) and isinstance(step, int) and step < len(node)
            if not (in_dict or in_list):
                break
            node = node[step]  # type: ignore[index]
        else:
            last = path[-1]
            if isinstance(node, dict) and isinstance(last, str):
                if value == _DROP:
                    node.pop(last, None)
                else:
                    node[last] = value
            elif isinstance(node, list) and isinstance(last, int) and last < len(node):
                node[last] = value
    return json.dumps(doc, allow_nan=True).encode()


_BODY = st.one_of(
    st.tuples(_MUTATIONS, st.uuids()).map(lambda m: _mutated(m[0], m[1].hex[:8])),
    _NOTIFICATION.map(lambda d: json.dumps(d, allow_nan=True).encode()),
    _NOTIFICATION.map(lambda d: json.dumps(d, allow_nan=True).encode()[:-7]),  # cut short
    _JSON.map(lambda d: json.dumps(d, allow_nan=True).encode()),
    st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.binary(max_size=60),
    st.integers(1, 200).map(lambda n: b"[" * n + b"]" * n),
)


# -- the webhook body -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served() -> Iterator[httpx.Client]:
    def runner(job: Job) -> Outcome:
        return Outcome(None, {}, [], f"captured {job.notification.name()}")

    with tempfile.TemporaryDirectory() as tmp:
        cfg = ServeConfig.model_validate(
            {"auth": {"bearer_token": TOKEN}, "out_dir": tmp, "queue_size": 100_000}
        )
        with running(create_app(cfg, runner)) as url:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
                yield http
                assert http.get("/healthz").status_code == 200
                page = http.get("/")
                assert page.status_code == 200, page.text


def _post(served: httpx.Client, body: bytes) -> None:
    r = served.post("/alerts", content=body)
    assert r.status_code < 500, (r.status_code, r.text, body[:300])
    answer = r.json()
    if r.status_code >= 400:
        assert answer["status"] == "refused"
        _one_line(answer["error"])
    else:
        assert r.status_code == 200 and answer["status"] in ("accepted", "duplicate", "resolved")


@BUDGET
@given(_BODY)
def test_webhook_body(served: httpx.Client, body: bytes) -> None:
    _post(served, body)


def test_webhook_every_field_with_every_odd_value(served: httpx.Client) -> None:
    """The single mutations in full, each under a group of its own: about 750 posts."""
    for i, path in enumerate(_PATHS):
        for j, value in enumerate(_ODD_JSON):
            _post(served, _mutated([(path, value)], f"grid-{i}-{j}"))


@BUDGET
@given(_BODY)
def test_an_accepted_notification_is_kept_and_read_back_whole(body: bytes) -> None:
    """Whatever the webhook accepts, the queue folder keeps and gives back unchanged."""
    try:
        n = parse_notification(body)
    except PayloadError as exc:
        _one_line(str(exc))
        return
    with tempfile.TemporaryDirectory() as tmp:
        spool = Spool(Path(tmp))
        spool.put("20261206T000000Z-x-00000000", 1_796_000_000.0, n)
        jobs, problems = spool.load()
    assert problems == [] and [j.notification for j in jobs] == [n]
    assert isinstance(n.starts_at(), float) and n.name() and isinstance(n.scope(), dict)


# -- serve's config -------------------------------------------------------------------------------

_ODD = (
    [None, True, 0, -1, 1, 2.5, 65536, 1e400, "30m", "0s", "soon", "", "x", "1e400",
     "http://prom:9090", "prom:9090", "http://h:0", "http://u:p@h:1", "ftp://x", "USER:PW",
     "nocolon", "/nonexistent/file", "a\x00b", "2001-13-45", "\u202e", [], {}, ["1h", "x"],
     [1, "a"], {"a": 1}, "[red]x[/]", "@token", "@http_config", "@folder",
     {"username": "am", "password_file": "@token"}, {"username": "am", "password_file": "a\x00b"},
     {"username": "am"}, {"X-Team": "a\nb"}, {"Authorization": "x"}]
)  # fmt: skip
_VALUES = st.sampled_from(_ODD)
_SECTIONS: dict[str, list[str]] = {
    "listen": ["host", "port"],
    "auth": ["bearer_token", "bearer_token_file", "basic_auth", "disabled", "pages"],
    "prometheus": ["url", "bearer_token", "bearer_token_file", "basic_auth", "http_config_file",
                   "tenant", "headers", "timeout", "deadline", "ca_file", "insecure"],
    "capture": ["since", "step", "baselines", "pids", "processes", "logs", "log_bytes", "gpu",
                "part_timeout", "metrics_timeout"],
    "slack": ["webhook_url", "timeout"],
}  # fmt: skip
_TOP = ["out_dir", "max_concurrency", "queue_size", "max_body_bytes", "body_timeout",
        "queue_dir", "shutdown_grace", "dedupe_window", "max_groups", "recent", "retry_after",
        "public_url", "history", "nonsense"]  # fmt: skip
_FIELDS = [(section, key) for section, keys in _SECTIONS.items() for key in keys] + [
    (key, None) for key in [*_TOP, *_SECTIONS]
]
_WHERE = st.sampled_from(_FIELDS)
#: a config that starts valid, then has a field or two set to odd values (or a section to one)
_EDITS = st.lists(st.tuples(_WHERE, st.one_of(_VALUES, _VALUES, _VALUES, _JSON)), max_size=3)
_YAML_BITS = st.sampled_from(
    ["auth: {bearer_token: t0ken-123456}", "auth: {disabled: true}", "listen:", "  port: 1",
     "capture: {since: 30m}", "max_concurrency: 2", "a: 2001-13-45", "b: !!binary '%%'",
     "c: !!python/object:os.system x", "d: !!float x", "- [", "{", "\t", "&a [*a]", "k: *nope",
     "e: !!timestamp 2026-99-99", "f: 0o999", "g: 1_000", "? [a]\n: b", "%YAML 9.9", "---",
     "h: 0000-00-00"]
)  # fmt: skip
_CONFIG_TEXT = st.one_of(st.lists(_YAML_BITS, max_size=8).map("\n".join), st.text(max_size=60))
_ENV = st.dictionaries(
    st.sampled_from(["INFERSIGHT_SERVE__MAX_CONCURRENCY", "INFERSIGHT_SERVE__PROMETHEUS__URL",
                     "INFERSIGHT_SERVE__CAPTURE__PROCESSES", "INFERSIGHT_SERVE__AUTH",
                     "INFERSIGHT_SERVE__", "INFERSIGHT_SERVE____X", "INFERSIGHT_SERVE__OUT_DIR",
                     "INFERSIGHT_SERVE__AUTH__BEARER_TOKEN", "INFERSIGHT_SERVE__AUTH__X__Y"]),
    st.sampled_from(["4", "[vllm, tgi]", "{", "", " ", "a: b", "2001-13-45", "0000-00-00",
                     "!!binary x", "{bearer_token: t0ken-123456}"]) | st.text(max_size=10),
    max_size=3,
)  # fmt: skip


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "token").write_text("t0ken-from-a-file\n")
        (base / "http.yml").write_text("authorization: {credentials: t0ken-in-http-config}\n")
        yield base


def _config_doc(edits: list[tuple[tuple[str, str | None], Any]], folder: Path) -> dict[str, Any]:
    files = {"@token": folder / "token", "@http_config": folder / "http.yml", "@folder": folder}

    def real(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: real(v) for k, v in value.items()}
        return str(files[value]) if isinstance(value, str) and value in files else value

    doc: dict[str, Any] = {
        "auth": {"bearer_token": "t0ken-123456"},
        "prometheus": {"url": "http://prom:9090"},
        "out_dir": str(folder),
    }
    for (where, key), value in edits:
        value = real(value)
        if key is None:
            doc[where] = value
        elif isinstance(doc.get(where), dict):
            doc[where][key] = value
        else:
            doc[where] = {key: value}
    return doc


def _load(folder: Path, config: Any, env: dict[str, str]) -> None:
    if not isinstance(config, str):
        config = yaml.dump(_config_doc(config, folder), Dumper=_DUMPER)
    path = folder / "serve.yaml"
    path.write_bytes(config.encode("utf-8", "surrogatepass"))
    try:
        cfg = load_config(path, env)
    except ConfigError as exc:
        _one_line(str(exc))
    else:
        assert isinstance(cfg, ServeConfig)


@BUDGET
@given(st.one_of(_EDITS, _CONFIG_TEXT), _ENV)
def test_serve_config(folder: Path, config: Any, env: dict[str, str]) -> None:
    _load(folder, config, env)


def test_serve_config_every_field_with_every_odd_value(folder: Path) -> None:
    """The single edits in full (a random draw meets a given pair rarely): about 2,400."""
    failed = []
    for where in _FIELDS:
        for value in _ODD:
            try:
                _load(folder, [(where, value)], {})
            except Exception as exc:  # collected, to name every field that fails at once
                failed.append(f"{where}={value!r}: {type(exc).__name__}: {exc}")
    assert not failed, "\n".join(failed)


# -- the alert file of `diagnose --alert` ---------------------------------------------------------


def _alert_file(folder: Path, body: bytes) -> None:
    path = folder / "alert.json"
    path.write_bytes(body)
    try:
        n = read_alert_file(path)
    except PayloadError as exc:
        _one_line(str(exc))
    else:
        assert isinstance(n, Notification)
    try:
        starts = alert_start(path)
        assert starts is not None
        at, span = alert_pull(starts, None, "1h")
    except CommandError as exc:
        _one_line(exc.message)
    else:
        assert at and span


@BUDGET
@given(_BODY)
def test_alert_file(folder: Path, body: bytes) -> None:
    _alert_file(folder, body)


def test_alert_file_every_field_with_every_odd_value(folder: Path) -> None:
    for path in _PATHS:
        for value in _ODD_JSON:
            _alert_file(folder, _mutated([(path, value)], "g"))


def test_a_label_named_with_a_newline_is_refused_on_one_line() -> None:
    """Found by the fuzzer: a group label whose name is a newline made a two-line 422."""
    body = {
        "version": "4",
        "groupKey": "k",
        "status": "firing",
        "receiver": "r",
        "groupLabels": {"\n": 1},
        "commonLabels": {},
        "commonAnnotations": {},
        "externalURL": "http://am",
        "alerts": [],
    }
    with pytest.raises(PayloadError) as err:
        parse_notification(json.dumps(body).encode())
    assert err.value.status == 422
    _one_line(str(err.value))
