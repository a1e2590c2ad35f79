"""Each load-test tool's CSV read into one curve; bad files refused with one line. The rows
here are made up for the readers (not measurements): the published curves are in
test_published_shapes.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.capacity import ResultsError
from infersight.capacity.formats import parse_results, read_results
from infersight.capacity.results import Point, Sweep, to_plain_csv


def test_perf_analyzer_csv_in_microseconds() -> None:
    text = (
        "Concurrency,Inferences/Second,Client Send,p50 latency,p90 latency,p95 latency,"
        "p99 latency,Avg latency\n1,100,5,9000,9500,9700,10000,9100\n"
        "2,180,5,10000,11000,11500,12000,10500\n4,200,5,19000,21000,22000,24000,20000\n"
    )
    s = parse_results(text, "pa.csv")
    assert (s.source, s.axis, s.xs, s.ys) == (
        "perf_analyzer",
        "concurrency",
        [1, 2, 4],
        [100, 180, 200],
    )
    assert s.points[2].p("p99") == pytest.approx(0.024)


def test_model_analyzer_one_config_chosen() -> None:
    text = (
        "Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
        "Satisfies Constraints,Throughput (infer/sec),p99 Latency (ms)\n"
        + "".join(
            f"m,1,{c},m_config_1,1:GPU,8,Yes,{t},{lat}\n"
            for c, t, lat in [(1, 50, 20), (2, 90, 22), (4, 120, 33), (8, 122, 66)]
        )
        + "m,1,1,m_config_2,2:GPU,8,Yes,60,18\nm,1,2,m_config_2,2:GPU,8,Yes,100,19\n"
    )
    with pytest.raises(ResultsError, match=r"2 model configs.*--config"):
        parse_results(text, "ma.csv")
    s = parse_results(text, "ma.csv", config="m_config_1")
    assert (s.source, s.axis, s.ys) == ("model_analyzer", "concurrency", [50, 90, 120, 122])
    assert s.points[3].p("p99") == pytest.approx(0.066)


def test_locust_history_steps_by_user_count() -> None:
    header = "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,90%,95%,99%\n"
    rows = []
    for users, rps in [(1, 9.0), (2, 18.0), (4, 30.0), (8, 31.0)]:
        rows.append(f"0,{users},,Aggregated,{rps / 2},0,50,60,70,80\n")  # the ramp into it
        rows += [
            f"0,{users},,Aggregated,{rps + d},0,50,60,70,{80 + users}\n" for d in (-0.5, 0, 0.5)
        ]
        rows.append(f"0,{users},GET,/infer,{rps},0,50,60,70,80\n")  # per-endpoint rows: ignored
    s = parse_results(header + "".join(rows), "locust_stats_history.csv")
    assert (s.source, s.xs, s.ys) == ("locust", [1, 2, 4, 8], [9.0, 18.0, 30.0, 31.0])
    assert s.points[3].p("p99") == pytest.approx(0.088)


def test_locust_single_level_stats_are_refused_with_what_to_give() -> None:
    text = "Type,Name,Request Count,Failure Count,Requests/s,50%\nGET,/x,10,0,5,20\n"
    with pytest.raises(ResultsError, match=r"_stats_history\.csv"):
        parse_results(text, "locust_stats.csv")


def test_vllm_bench_results() -> None:
    text = (
        "max_concurrency,request_throughput,output_throughput,median_e2el_ms,p99_e2el_ms\n"
        "1,0.9,120,1100,1300\n4,3.4,450,1180,1500\n16,9.5,1250,1700,2600\n64,10.1,1300,6300,9000\n"
    )
    s = parse_results(text, "vllm.csv")
    assert (s.source, s.axis, s.ys) == ("vllm", "concurrency", [0.9, 3.4, 9.5, 10.1])
    assert s.points[0].p("p50") == pytest.approx(1.1)


def test_repeats_are_merged_by_their_median() -> None:
    text = "batch,throughput,p99_ms\n1,10,5\n2,20,6\n2,21,7\n2,90,8\n4,30,9\n"
    s = parse_results(text, "plain.csv")
    assert s.xs == [1, 2, 4] and s.ys == [10, 21, 30]  # the 90 outlier does not move it


def test_plain_round_trip() -> None:
    lat = {"p50": 0.01, "p90": 0.02, "p95": 0.025, "p99": 0.03}
    sweep = Sweep("batch", tuple(Point(float(b), 10.0 * b, lat, 5, 0) for b in (1, 2, 4)), "plain")
    back = parse_results(to_plain_csv(sweep), "rt")
    assert back.xs == sweep.xs and back.ys == sweep.ys
    assert back.points[0].latency == pytest.approx(lat) and back.points[0].requests == 5


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("a,b\n1,2\n", "none of the formats"),
        ("batch,throughput\n", "no rows"),
        ("batch,throughput\n1,2\n2,x\n4,5\n", "line 3.*'x', not a number"),
        ("batch,throughput\n1,2\n2,-1\n4,5\n", "expected a number ≥ 0"),
        ("batch,throughput\n1,2\n2,3\n", "2 step\\(s\\); a knee needs at least 3"),
        ("speed,throughput\n1,2\n", "none of the formats"),
    ],
)
def test_bad_files_are_one_line(text: str, match: str) -> None:
    with pytest.raises(ResultsError, match=match):
        parse_results(text, "bad.csv")


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="No such file"):
        read_results(tmp_path / "nope.csv")


def test_request_numbers_fill_in_to_defeat_caches() -> None:
    from infersight.capacity.targets import Target

    t = Target("http://h/v1/answer?q=probe+{i}", "get")
    assert t.request(1, 7).url == "http://h/v1/answer?q=probe+7"
    e = Target("http://h/v1/embeddings", "openai", text="doc {i}")
    assert e.request(3, 2).body == {"model": "default", "input": ["doc 2"] * 3}
