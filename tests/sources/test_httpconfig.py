"""promtool's --http.config.file: what infersight reads from it, and what it refuses by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.sources.connect import ConnectionSettings, parse_header
from infersight.sources.errors import BadConnection, BadCredentials
from infersight.sources.httpconfig import HTTPConfigError, parse_http_config, read_http_config

SECRET = "cfg-s3cret-value"


def test_files_are_read_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "pw").write_text(SECRET + "\n")
    (tmp_path / "k" / "hdr").write_text("from-file\n")
    cfg = tmp_path / "http.yml"
    cfg.write_text(
        "basic_auth: {username: am, password_file: k/pw}\n"
        "tls_config: {ca_file: ca.pem, insecure_skip_verify: true}\n"
        "http_headers:\n  X-Scope-OrgID: {values: [t1]}\n  X-Key: {files: [k/hdr]}\n"
        "follow_redirects: true\n"
    )
    s = read_http_config(cfg)
    assert s.basic_auth == ("am", SECRET)
    assert s.ca_file == str(tmp_path / "ca.pem") and s.insecure
    assert s.headers == {"X-Scope-OrgID": "t1", "X-Key": "from-file"}
    assert SECRET not in repr(s)


def test_the_older_bearer_token_spelling() -> None:
    assert parse_http_config(f"bearer_token: {SECRET}\n").bearer_token == SECRET
    auth = parse_http_config(f"authorization: {{credentials: {SECRET}}}\n")
    assert auth.bearer_token == SECRET


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"authorization: {{credentials: {SECRET}}}\nbearer_token: x\n", "mutually exclusive"),
        (f"authorization: {{type: Basic, credentials: {SECRET}}}\n", "only Bearer"),
        ("oauth2: {client_id: a}\n", "oauth2: not supported"),
        ("proxy_url: http://proxy:3128\n", "proxy_url: not supported"),
        ("tls_config: {server_name: x}\n", "tls_config.server_name: not supported"),
        ("tls_config: {cert_file: c.pem}\n", "cert_file and key_file go together"),
        ("http_headers: {Authorization: {values: [x]}}\n", "cannot be set here"),
        ("http_headers: {'Bad Name': {values: [x]}}\n", "not a valid header name"),
        ("basic_auth: [\n", "not valid YAML at line"),
        ("bearer_token_file: /nonexistent/token\n", "/nonexistent/token: cannot be read"),
    ],
)
def test_refused_by_name_without_the_secret(text: str, expected: str) -> None:
    with pytest.raises(HTTPConfigError) as exc:
        parse_http_config(text)
    assert expected in str(exc.value) and SECRET not in str(exc.value)


def test_credentials_come_from_one_place(tmp_path: Path) -> None:
    cfg = tmp_path / "http.yml"
    cfg.write_text(f"authorization: {{credentials: {SECRET}}}\n")
    both = ConnectionSettings(url="http://h:9090", http_config_file=cfg, bearer_token="tok-12345")
    with pytest.raises(BadCredentials, match="give them in one place"):
        both.client()
    token_file = tmp_path / "t"
    token_file.write_text("tok-12345")
    twice = ConnectionSettings(
        url="http://h:9090", bearer_token="tok-12345", bearer_token_file=token_file
    )
    with pytest.raises(BadCredentials, match=r"2 places \(a bearer token, a bearer token file\)"):
        twice.client()
    with pytest.raises(BadConnection, match="cannot be read"):
        ConnectionSettings(url="http://h:9090", http_config_file=tmp_path / "nope").client()


def test_header_option_parsing() -> None:
    assert parse_header("X-Team: infra") == ("X-Team", "infra")
    assert parse_header("X-Team=infra") == ("X-Team", "infra")
    for bad in ("no-colon", "Authorization: Bearer x", "X-Empty:", ": v"):
        with pytest.raises(ValueError):
            parse_header(bad)
