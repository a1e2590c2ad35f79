"""serve's config: one YAML file, environment overrides, secrets never shown, bad input in one
line (and the CLI refuses to start on it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from infersight.cli import app
from infersight.cli.common import EXIT_USAGE, CommandError
from infersight.serve.config import ConfigError, load_config

SECRET = "s3rve-t0ken-abcdef"


def test_file_and_environment_overrides(tmp_path: Path) -> None:
    cfg_file = tmp_path / "serve.yaml"
    cfg_file.write_text(
        f"auth: {{bearer_token: {SECRET}}}\n"
        "prometheus: {url: 'http://prom:9090', tenant: team-a}\n"
        "capture: {since: 30m, processes: [vllm]}\nmax_concurrency: 2\n"
    )
    env = {
        "INFERSIGHT_SERVE__MAX_CONCURRENCY": "5",
        "INFERSIGHT_SERVE__PROMETHEUS__TENANT": "team-b",
        "INFERSIGHT_SERVE__CAPTURE__PROCESSES": "[vllm, tgi]",
        "INFERSIGHT_SERVE__CAPTURE__PART_TIMEOUT": "2m",
        "UNRELATED": "x",
    }
    cfg = load_config(cfg_file, env)
    assert cfg.max_concurrency == 5
    assert cfg.prometheus is not None and cfg.prometheus.tenant == "team-b"
    assert cfg.prometheus.url == "http://prom:9090"  # the rest of the section is kept
    assert cfg.capture.processes == ["vllm", "tgi"]
    assert cfg.capture.since == 1800.0 and cfg.capture.part_timeout == 120.0
    assert SECRET not in repr(cfg) and SECRET not in cfg.model_dump_json()
    assert cfg.credentials() == (SECRET, None)


def test_token_from_a_file_and_basic_auth(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(SECRET + "\n")
    env = {"INFERSIGHT_SERVE__AUTH__BEARER_TOKEN_FILE": str(tmp_path / "token")}
    assert load_config(None, env).credentials() == (SECRET, None)
    (tmp_path / "pw").write_text("pw-1234\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"auth: {{basic_auth: {{username: am, password_file: {tmp_path / 'pw'}}}}}\n")
    assert load_config(cfg, {}).credentials() == (None, ("am", "pw-1234"))


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("max_concurrency: 0\n", {}, "max_concurrency: Input should be greater than or equal to 1"),
        ("nonsense: 1\n", {}, "nonsense: Extra inputs are not permitted"),
        ("capture: {since: soon}\n", {}, "'soon' is not a duration"),
        ("[1, 2]\n", {}, "must be a mapping of settings"),
        ("auth: {}\n", {}, "auth: set bearer_token(_file) or basic_auth"),
        ("auth: {bearer_token_file: /nonexistent/t}\n", {}, "/nonexistent/t: cannot be read"),
        # found by tests/fuzz/test_serve_fuzz.py: each was a traceback
        ("capture: {since: 0000-00-00}\n", {}, "not valid YAML (year 0 is out of range)"),
        ('auth: {bearer_token_file: "a\\0b"}\n', {}, "bearer_token_file: Value error, holds a NUL"),
        ('out_dir: "a\\0b"\n', {}, "out_dir: Value error, holds a NUL byte; not a file name"),
        (
            "prometheus: {url: 'http://p:9090', http_config_file: \"h\\0\"}\n",
            {},
            "prometheus.http_config_file: Value error, holds a NUL byte",
        ),
        (
            "",
            {"INFERSIGHT_SERVE__CAPTURE": "x", "INFERSIGHT_SERVE__CAPTURE__GPU": "true"},
            "INFERSIGHT_SERVE__CAPTURE sets the whole section; set one or the other",
        ),
        (
            "",
            {"INFERSIGHT_SERVE__CAPTURE__GPU": "true", "INFERSIGHT_SERVE__CAPTURE": "x"},
            "INFERSIGHT_SERVE__CAPTURE: its keys are set one by one too",
        ),
    ],
)
def test_bad_config_is_one_line(
    tmp_path: Path, text: str, env: dict[str, str], expected: str
) -> None:
    cfg = tmp_path / "c.yaml"
    valid_auth = "auth" not in text and not text.startswith("[")
    cfg.write_text((f"auth: {{bearer_token: {SECRET}}}\n" if valid_auth else "") + text)
    with pytest.raises(ConfigError) as exc:
        load_config(cfg, env)
    assert expected in str(exc.value) and "\n" not in str(exc.value)
    assert SECRET not in str(exc.value)


def test_the_cli_refuses_to_start_on_a_bad_config(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("auth: {}\n")
    res = CliRunner().invoke(app, ["serve", "--config", str(cfg)])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
    assert "auth: set bearer_token(_file) or basic_auth" in str(res.exception)


def test_a_prometheus_block_with_credentials_in_three_places_stops_the_start(
    tmp_path: Path,
) -> None:
    """Issue 38, item 13: three credential sources were accepted, then every capture failed."""
    http = tmp_path / "http.yml"
    http.write_text(f"authorization: {{credentials: {SECRET}-http}}\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        f"auth: {{bearer_token: {SECRET}}}\n"
        f"prometheus: {{url: 'http://prom:9090', bearer_token: {SECRET}-prom, "
        f"basic_auth: 'am:{SECRET}-basic', http_config_file: {http}}}\n"
    )
    with pytest.raises(ConfigError) as exc:
        load_config(cfg, {})
    line = str(exc.value)
    assert line == (
        f"{cfg}: prometheus: credentials given in 3 places (a bearer token, basic auth, the "
        "HTTP config file); give them in one place: a request can carry only one of them"
    )
    res = CliRunner().invoke(app, ["serve", "--config", str(cfg)])
    assert isinstance(res.exception, CommandError) and res.exception.code == EXIT_USAGE
    assert str(res.exception) == line and SECRET not in line
    # one place is enough, and a token file that cannot be read stops the start too
    cfg.write_text(
        f"auth: {{bearer_token: {SECRET}}}\n"
        f"prometheus: {{url: 'http://prom:9090', bearer_token_file: {tmp_path / 'nope'}}}\n"
    )
    with pytest.raises(ConfigError, match=r"prometheus: --bearer-token-file \S*nope: cannot be"):
        load_config(cfg, {})
    cfg.write_text(f"auth: {{bearer_token: {SECRET}}}\nprometheus: {{url: 'http://prom:9090'}}\n")
    assert load_config(cfg, {}).prometheus is not None


def test_serve_settings_for_the_body_and_the_stop(tmp_path: Path) -> None:
    cfg = load_config(None, {"INFERSIGHT_SERVE__AUTH__BEARER_TOKEN": SECRET})
    assert cfg.body_timeout == 10.0 and cfg.shutdown_grace == 20.0
    assert cfg.queue_folder() == Path("captures") / ".queue"
    env = {
        "INFERSIGHT_SERVE__AUTH__BEARER_TOKEN": SECRET,
        "INFERSIGHT_SERVE__BODY_TIMEOUT": "2s",
        "INFERSIGHT_SERVE__SHUTDOWN_GRACE": "0",
        "INFERSIGHT_SERVE__QUEUE_DIR": str(tmp_path / "q"),
    }
    cfg = load_config(None, env)
    assert (cfg.body_timeout, cfg.shutdown_grace, cfg.queue_folder()) == (2.0, 0.0, tmp_path / "q")
    with pytest.raises(ConfigError, match="body_timeout: Input should be greater than 0"):
        load_config(None, {**env, "INFERSIGHT_SERVE__BODY_TIMEOUT": "0"})
