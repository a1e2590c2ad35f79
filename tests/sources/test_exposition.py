"""Exposition parsing: real exporter excerpts, several scrapes over time, errors with lines."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from infersight.sources.exposition import ExpositionError, parse_exposition, read_exposition
from infersight.sources.raw import RawStore

FIXTURES = Path(__file__).parent / "fixtures"


def one(store: RawStore, name: str, **labels: str) -> tuple[list[float], list[float]]:
    found = [
        s for s in store.series(name) if all(s.label_map.get(k) == v for k, v in labels.items())
    ]
    assert len(found) == 1, (name, labels, found)
    return found[0].ts.tolist(), found[0].values.tolist()


def test_vllm_excerpt() -> None:
    store = read_exposition(FIXTURES / "vllm.prom", start=1000.0, interval=15.0, job="vllm")
    assert store.names() == {
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:gpu_cache_usage_perc",
        "vllm:num_preemptions_total",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:time_to_first_token_seconds_sum",
        "vllm:time_to_first_token_seconds_count",
        "vllm:request_success_total",
    }  # the _created gauges of the histogram and counter are dropped
    assert one(store, "vllm:num_requests_waiting", instance="vllm", job="vllm") == (
        [1000.0],
        [37.0],
    )
    les = sorted(s.label_map["le"] for s in store.series("vllm:time_to_first_token_seconds_bucket"))
    assert les == sorted(["0.001", "0.04", "0.5", "1.0", "2560.0", "+Inf"])
    assert one(store, "vllm:request_success_total", finished_reason="length")[1] == [110.0]


def test_dcgm_excerpt_keeps_hostname_and_instance_from_caller() -> None:
    store = read_exposition(
        FIXTURES / "dcgm.prom", start=0.0, interval=30.0, instance="node-7:9400"
    )
    ts, values = one(store, "DCGM_FI_DEV_GPU_TEMP", gpu="0")
    assert (ts, values) == ([0.0], [86.0])
    for s in store:
        assert s.label_map["Hostname"] == "node-7" and s.label_map["instance"] == "node-7:9400"
    assert one(store, "DCGM_FI_DEV_XID_ERRORS", err_msg="No Error")[1] == [0.0]


def test_openmetrics_exemplars_created_info_and_specials() -> None:
    store = read_exposition(FIXTURES / "exemplars.om", start=0.0, interval=15.0)
    assert "http_request_duration_seconds_created" not in store.names()
    assert "embed_requests_created" not in store.names()
    assert one(store, "embed_requests_total", model="bge-m3")[1] == [1027.0]
    assert one(store, "http_request_duration_seconds_bucket", le="0.1")[1] == [8.0]
    assert one(store, "build_info_info")[0] == [0.0]
    assert one(store, "build_info_info")[0] == [0.0]
    assert one(store, "build_info_info", label_with_hash="a # b } c")[1] == [1.0]
    assert math.isnan(one(store, "temperature_celsius", sensor="gpu")[1][0])
    assert one(store, "temperature_celsius", sensor="cpu")[1] == [math.inf]
    assert one(store, "temperature_celsius", sensor="fan")[1] == [-math.inf]
    assert one(store, "rpc_latency_seconds", quantile="0.99")[1] == [0.25]
    assert all(s.label_map["instance"] == "exemplars" for s in store)


def test_gauge_named_created_is_kept() -> None:
    text = '# TYPE kube_pod_created gauge\nkube_pod_created{pod="a"} 1.7e9\n'
    assert parse_exposition(text, start=0, interval=1).names() == {"kube_pod_created"}


def test_label_escapes_and_empty_values() -> None:
    text = 'm{a="x\\\\y",b="say \\"hi\\"",c="l1\\nl2",d="",e="\\t"} 1\n'
    (s,) = parse_exposition(text, start=0, interval=1)
    assert s.label_map == {"a": "x\\y", "b": 'say "hi"', "c": "l1\nl2", "e": "\\t"}


def test_le_spellings_agree() -> None:
    text = 'h_bucket{le="1"} 1\nh_bucket{le="1.0"} 2\nh_bucket{le="1e0"} 3\nh_bucket{le="+Inf"} 3\n'
    store = parse_exposition(text, start=0, interval=1)
    assert sorted(s.label_map["le"] for s in store) == ["+Inf", "1.0"]
    assert one(store, "h_bucket", le="1.0")[1] == [3.0]  # the last of one scrape wins


def test_timestamps_text_format_are_milliseconds() -> None:
    text = "up 1 1700000000000\nup 0 1700000015500\n"
    assert one(parse_exposition(text), "up") == ([1_700_000_000.0, 1_700_000_015.5], [1.0, 0.0])


def test_timestamps_openmetrics_are_seconds() -> None:
    text = "# TYPE up gauge\nup 1 1700000000\nup 0 1700000015.5\n# EOF\n"
    assert one(parse_exposition(text), "up") == ([1_700_000_000.0, 1_700_000_015.5], [1.0, 0.0])


def test_concatenated_openmetrics_scrapes() -> None:
    scrape = '# TYPE q gauge\nq{i="a"} {v}\n# EOF\n'
    text = "".join(scrape.replace("{v}", str(v)) for v in (1, 2, 3))
    store = parse_exposition(text, start=100.0, interval=15.0, instance="node-1")
    assert one(store, "q", i="a", instance="node-1") == ([100.0, 115.0, 130.0], [1.0, 2.0, 3.0])


def test_several_files_one_scrape_each(tmp_path: Path) -> None:
    paths = []
    for k in range(3):
        p = tmp_path / f"scrape-{k}.prom"
        p.write_text(f"q {k * 10}\n")
        paths.append(p)
    store = read_exposition(paths, start=0.0, interval=30.0, instance="node-1")
    assert one(store, "q") == ([0.0, 30.0, 60.0], [0.0, 10.0, 20.0])


def test_several_targets_scraped_together(tmp_path: Path) -> None:
    for host in ("node-1", "node-2"):
        (tmp_path / f"{host}.prom").write_text("# TYPE q gauge\nq 1\n# EOF\nq 2\n# EOF\n")
    paths = sorted(tmp_path.iterdir())
    store = read_exposition(paths, start=0.0, interval=10.0, clock="per_file")
    for host in ("node-1", "node-2"):
        assert one(store, "q", instance=host) == ([0.0, 10.0], [1.0, 2.0])


def test_sample_instance_label_wins_over_file() -> None:
    store = parse_exposition('q{instance="real:9100"} 1\n', instance="file", start=0, interval=1)
    assert [s.label_map["instance"] for s in store] == ["real:9100"]


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ('a 1\nb{x="1" 2\n', 2, "malformed sample"),
        ("a 1\nb one\n", 2, "bad value 'one'"),
        ("a 1\nb 1_000\n", 2, "bad value"),
        ("\n\n# TYPE a countr\n", 3, "unknown metric type 'countr'"),
        ('a{x="1",x="2"} 1\n', 1, "label 'x' given twice"),
        ('a{x="1" y="2"} 1\n', 1, "malformed label"),
        ("a 1 1700000000.5\n", 1, "bad timestamp (want integer milliseconds)"),
        ("a 1 100\nb 2\n", 2, "mixes timestamped and untimestamped samples"),
        ('a 1 # {t="x"} 1\n', 1, "exemplars are only valid in OpenMetrics"),
        ("# TYPE a gauge\na 1\n# EOF\na 2\n", 4, "must end with `# EOF`"),
        ("a 1 inf\n# EOF\n", 1, "timestamp is not finite"),
    ],
)
def test_errors_name_file_and_line(text: str, line: int, what: str) -> None:
    with pytest.raises(ExpositionError) as info:
        parse_exposition(text, source="scrape.txt", start=0, interval=1)
    message = str(info.value)
    assert message.startswith(f"scrape.txt:{line}: ")
    assert what in message and "\n" not in message


def test_untimestamped_needs_start_and_interval() -> None:
    with pytest.raises(ExpositionError, match="pass start and a positive interval"):
        parse_exposition("a 1\n")


def test_mixing_across_files_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.prom").write_text("q 1 1000\n")
    (tmp_path / "b.prom").write_text("q 1\n")
    with pytest.raises(ExpositionError, match=r"b\.prom: .* do not mix"):
        read_exposition([tmp_path / "a.prom", tmp_path / "b.prom"], start=0, interval=1)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ExpositionError, match="cannot be read"):
        read_exposition(tmp_path / "nope.prom", start=0, interval=1)


def test_crlf_and_comments() -> None:
    text = "# just a comment\r\n# HELP a help\r\na 1\r\n\r\n"
    assert one(parse_exposition(text, start=0, interval=1), "a")[1] == [1.0]


def test_successive_scrapes_of_one_target_are_one_instance(tmp_path: Path) -> None:
    """Eight saved scrapes of one /metrics (issue 39): one instance's time series, named for
    what the files share, not eight instances named for the files."""
    paths = []
    for k in range(8):
        p = tmp_path / f"scrape-{k + 1:03d}.prom"
        p.write_text(f"# TYPE q gauge\nq {k}\n")
        paths.append(p)
    store = read_exposition(paths, start=0.0, interval=15.0)
    assert {s.label_map["instance"] for s in store} == {"scrape"}
    assert one(store, "q", instance="scrape") == (
        [15.0 * k for k in range(8)],
        [*map(float, range(8))],
    )
    # different targets scraped at the same moments keep one instance per file
    per_file = read_exposition(paths[:2], start=0.0, interval=15.0, clock="per_file")
    assert {s.label_map["instance"] for s in per_file} == {"scrape-001", "scrape-002"}
