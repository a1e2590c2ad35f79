"""The one redaction layer: every form a credential takes in a command line or a log line is
masked, the words around it are kept, and a secret the process learnt at run time (a token
file) is masked wherever it appears verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from infersight.redact import MASK, Redactor, redact_argv, redact_text, secret_name
from infersight.sources.httpconfig import read_secret_file

# (text, the secret in it): every one a form named in issue 38
CREDENTIALS = [
    ("vllm serve m --api-key sk-live-Abc123 --port 8000", "sk-live-Abc123"),
    ("vllm serve m --api-key=sk-live-Abc124", "sk-live-Abc124"),
    ("tool --token tok-7f3e9a --verbose", "tok-7f3e9a"),
    ("tool --password=pw-9911 -v", "pw-9911"),
    ("tool --secret s3cr3t-x", "s3cr3t-x"),
    ("tool --hf-token hf_AbCdEf1", "hf_AbCdEf1"),
    ("tool --basic-auth alice:pw-4455", "pw-4455"),
    ("curl -H 'Authorization: Bearer hdr-1a2b' http://h/", "hdr-1a2b"),
    ('curl --header "X-Api-Key: xk-5566" http://h/', "xk-5566"),
    ("curl --header=X-Team-Secret:ts-7788 http://h/", "ts-7788"),
    ("curl -H X-Custom: cv-9900 http://h/", "cv-9900"),
    ("env HF_TOKEN=hf_zz11 OPENAI_API_KEY=sk-zz22 ./run", "hf_zz11"),
    ("env HF_TOKEN=hf_zz11 OPENAI_API_KEY=sk-zz22 ./run", "sk-zz22"),
    ("db_password: hunter22 ok", "hunter22"),
    ('{"apiKey": "sk-json-33", "maxTokens": 5}', "sk-json-33"),
    ("args: {'api_key': 'sk-repr-44'}", "sk-repr-44"),
    ("GET http://u:url-pw-55@prom:9090/api?x=1&access_token=qt-66", "url-pw-55"),
    ("GET http://u:url-pw-55@prom:9090/api?x=1&access_token=qt-66", "qt-66"),
    ("Cookie: session=ck-77", "ck-77"),
]


@pytest.mark.parametrize(("text", "secret"), CREDENTIALS)
def test_every_form_of_a_credential_is_masked(text: str, secret: str) -> None:
    assert secret not in redact_text(text)
    assert secret not in redact_text(text, command_line=True)
    assert MASK in redact_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "vllm serve m --tokenizer mistral --max-num-batched-tokens 512 --port 8000",
        "max_tokens=512 token_count=7 cache_key=user:1 prompt tokens: 40",
        "--bearer-token-file /etc/infersight/token --ssl-keyfile /etc/tls/key.pem",
        "give --bearer-token or --bearer-token-file, not both",
        "auth: set bearer_token(_file) or basic_auth, or auth.disabled: true",
        "basic_auth.password: must be a non-empty string",
    ],
)
def test_what_is_no_credential_is_kept(text: str) -> None:
    assert redact_text(text) == text


def test_a_flag_value_that_reads_as_a_word_is_masked_in_a_command_line() -> None:
    assert redact_text("run --token letmein", command_line=True) == f"run --token {MASK}"
    assert redact_text("give --token or --token-file") == "give --token or --token-file"


def test_an_argv_is_redacted_argument_by_argument() -> None:
    argv = [
        "infersight", "probe", "-p", "http://alice:url-pw@h:9090", "--bearer-token", "letmein",
        "--basic-auth", "bob:pw", "-H", "X-Api-Key: xk", "--header=Authorization: Bearer hb",
        "--api-key=ak", "--password", "--port", "9", "db_password=dp", "--no-auth", "x",
    ]  # fmt: skip
    assert redact_argv(argv) == [
        "infersight", "probe", "-p", f"http://{MASK}@h:9090", "--bearer-token", MASK,
        "--basic-auth", MASK, "-H", f"X-Api-Key: {MASK}", f"--header=Authorization: {MASK}",
        f"--api-key={MASK}", "--password", "--port", "9", f"db_password={MASK}", "--no-auth", "x",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("--api-key", True), ("HF_TOKEN", True), ("apiKey", True), ("X-Auth-Token", True),
        ("--basic-auth", True), ("client_secret", True), ("--tokenizer", False),
        ("max_tokens", False), ("--bearer-token-file", False), ("cache_key", False),
        ("token_count", False), ("--no-auth", False),
    ],
)  # fmt: skip
def test_which_names_are_a_credentials(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_a_secret_read_from_a_file_is_scrubbed_everywhere_from_then_on(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("Rt-file-token-0451\n")
    line = "upstream echoed Rt-file-token-0451 back"  # no label: only knowing it can mask it
    read_secret_file(token_file, "--bearer-token-file")
    for r in (Redactor(), Redactor(["other-secret"])):
        assert r.scrub(line) == f"upstream echoed {MASK} back"
        assert r.scrub_known("x Rt-file-token-0451%0A") == f"x {MASK}%0A"
