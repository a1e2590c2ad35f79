"""Parameters are typed, and values that could do harm are refused with one clear line."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from infersight.runbooks.params import Param, ParamError, coerce, parse_assignments, resolve

MAX = 256
SAFE = set(string.ascii_letters + string.digits + "._:/@=+-")


@pytest.mark.parametrize(
    ("ptype", "value"),
    [
        ("str", "prod; rm -rf /"),
        ("str", "$(reboot)"),
        ("str", "`id`"),
        ("str", "a|b"),
        ("str", "a&&b"),
        ("str", "x\ny"),
        ("str", "x\x00y"),
        ("str", "../../etc/passwd"),
        ("str", "--kubeconfig=/tmp/evil"),
        ("str", "x" * 5000),
        ("str", "ｐｒｏｄ"),  # full-width look-alikes
        ("str", "prod\u202egnp"),  # right-to-left override
        ("str", "prod\u200b"),  # zero-width space
        ("str", "prоd"),  # Cyrillic o
        ("name", "My_Deployment"),
        ("host", "evil.com;ls"),
        ("url", "http://user:pw@host/"),
        ("url", "file:///etc/passwd"),
        ("url", "http://host/$(id)"),
        ("int", "1; DROP"),
        ("int", "99999999999999999999999"),
        ("int", "0x10"),
        ("float", "nan"),
        ("float", "inf"),
    ],
)
def test_injection_is_refused_in_one_line(ptype: str, value: str) -> None:
    with pytest.raises(ParamError) as err:
        coerce("target", Param(type=ptype), value, MAX)
    msg = str(err.value)
    assert msg.startswith("--param target") and "\n" not in msg
    assert len(msg) < 200  # a huge value is not echoed back


@given(st.text(max_size=300))
def test_whatever_a_str_accepts_is_plain_safe_text(value: str) -> None:
    try:
        out = coerce("p", Param(), value, MAX)
    except ParamError:
        return
    assert isinstance(out, str) and set(out) <= SAFE
    assert not out.startswith("-") and ".." not in out and len(out) <= MAX


def test_types_and_bounds() -> None:
    assert coerce("n", Param(type="int", min=1, max=10), "7", MAX) == 7
    assert coerce("f", Param(type="float"), "0.005", MAX) == 0.005
    assert coerce("b", Param(type="bool"), "yes", MAX) is True
    assert coerce("c", Param(type="choice", choices=["a", "b"]), "b", MAX) == "b"
    assert coerce("h", Param(type="host"), "10.0.0.1", MAX) == "10.0.0.1"
    assert coerce("u", Param(type="url"), "http://127.0.0.1:9/x?y=1", MAX)
    with pytest.raises(ParamError, match="above the maximum"):
        coerce("n", Param(type="int", max=10), "11", MAX)
    with pytest.raises(ParamError, match="choose one of a, b"):
        coerce("c", Param(type="choice", choices=["a", "b"]), "c", MAX)


def test_secrets_come_only_from_the_environment() -> None:
    declared = {"token": Param(type="secret", env="MY_TOKEN")}
    with pytest.raises(ParamError, match=r"never given on the command line; set \$MY_TOKEN"):
        resolve(declared, {"token": "abc"}, {}, MAX)
    with pytest.raises(ParamError, match=r"set \$MY_TOKEN"):
        resolve(declared, {}, {}, MAX)
    assert resolve(declared, {}, {"MY_TOKEN": "s3cret-value"}, MAX) == {"token": "s3cret-value"}
    assert resolve(declared, {}, {}, MAX, missing_secrets_ok=True) == {"token": ""}


def test_unknown_missing_and_malformed_assignments() -> None:
    declared = {"port": Param(type="int")}
    with pytest.raises(ParamError, match="no such parameter"):
        resolve(declared, {"prot": "1"}, {}, MAX)
    with pytest.raises(ParamError, match="required"):
        resolve(declared, {}, {}, MAX)
    with pytest.raises(ParamError, match="NAME=VALUE"):
        parse_assignments(["noequals"])
    with pytest.raises(ParamError, match="given twice"):
        parse_assignments(["a=1", "a=2"])


@given(st.text(max_size=80), st.text(max_size=80))
def test_a_filled_argv_has_exactly_the_words_the_file_wrote(a: str, b: str) -> None:
    from infersight.runbooks.model import Command
    from infersight.runbooks.template import render

    words = ["tool", "--target={{a}}", "{{b}}", "--", "{{a}}{{b}}"]
    filled = Command.model_validate({"argv": render(words, {"a": a, "b": b})})
    assert len(filled.argv) == len(words)  # whatever the values hold, no word is split or added
    assert filled.argv[2] == b and filled.argv[4] == a + b
