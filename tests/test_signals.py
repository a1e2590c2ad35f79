from pathlib import Path

import pytest

from infersight.signals import (
    Layer,
    UnknownSignalError,
    _parse,
    all_signals,
    get_signal,
    signals_in,
)

METRICS_CATALOG = (
    Path(__file__).resolve().parents[2] / "shared" / "reference" / "metrics-catalog.md"
)


def test_every_layer_has_signals_in_seed_order() -> None:
    sigs = all_signals()
    layers = [s.layer for s in sigs.values()]
    assert layers == sorted(layers, key=lambda layer: layer.order)
    for layer in Layer:
        assert signals_in(layer), layer


def test_reference_catalog_signals_are_all_defined() -> None:
    """Every canonical signal named in the reference catalog's summary table exists."""
    if not METRICS_CATALOG.exists():
        pytest.skip("shared/reference/metrics-catalog.md is not beside this checkout")
    names = set()
    for line in METRICS_CATALOG.read_text("utf-8").splitlines():
        if line.startswith("| ") and "." in line.split("|")[1]:
            cell = line.split("|")[1].strip()
            if cell.split(".")[0] in {"access", "service", "inference", "dependency", "infra"}:
                for part in cell.replace(" (pgvector)", "").split(" / "):
                    prefix = cell.split(".")[0]
                    names.add(part if "." in part else f"{prefix}.{part}")
    assert names, "the summary table was not found"
    assert names - set(all_signals()) == set()


def test_seed_signals_beyond_exporters_exist() -> None:
    for name in (
        "inference.batch_fill_wait_p99",
        "service.threadpool_busy_ratio",
        "dependency.cache_concurrent_loads",
        "inference.model_load_time",
    ):
        assert get_signal(name).seed


def test_units_are_normalised_vocabulary() -> None:
    for s in all_signals().values():
        if s.name.endswith(("_p99", "_p50", "_avg")) and "ratio" not in s.name:
            assert s.unit == "s", s.name
        if s.name.endswith("_ratio"):
            assert s.unit == "ratio", s.name


def test_unknown_signal_message_says_what_to_do() -> None:
    with pytest.raises(UnknownSignalError) as exc:
        get_signal("service.nope")
    assert "infersight signals" in str(exc.value)


def test_bad_definitions_are_refused() -> None:
    with pytest.raises(ValueError, match="listed under layer"):
        _parse({"access": {"service.x": {"unit": "s", "bad": "up", "combine": "max"}}})
    with pytest.raises(ValueError, match="unit"):
        _parse({"access": {"access.x": {"unit": "ms", "bad": "up", "combine": "max"}}})


def test_every_request_latency_says_who_timed_it() -> None:
    from infersight.signals import measured_at

    for s in all_signals().values():
        if s.unit == "s" and s.name.endswith(("_p99", "_p50", "_avg")) and "disk" not in s.name:
            assert s.measured_at is not None, s.name
    # the gateway times its upstream as a client; an engine times requests as a server
    assert measured_at("access.upstream_latency_p99") == "client"
    assert measured_at("service.e2e_latency_p99") == "server"


def test_detection_defaults_come_from_the_catalog() -> None:
    from infersight.detect.config import DEFAULT_LOAD_SIGNALS, DEFAULT_USER_FACING

    assert DEFAULT_USER_FACING[0] == "service.e2e_latency_p99"
    assert "inference.gpu_util" in DEFAULT_LOAD_SIGNALS
    assert all_signals()["infra.tcp_retrans_ratio"].abs_floor == 0.003


def test_an_unknown_field_is_refused() -> None:
    spec = {
        "unit": "s",
        "bad": "up",
        "combine": "max",
        "description": "",
        "seed": "1",
        "part": "service",
        "facet": "time",
    }
    raw = {"service": {"service.x": {**spec, "mesured_at": "client"}}}
    with pytest.raises(ValueError, match="unknown field"):
        _parse(raw)
