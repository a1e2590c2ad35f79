"""The request-path walk of an incident written as data (the case format of
`infersight.lab.evaluate.path_cases`), for the tests that read the walk itself."""

from __future__ import annotations

import yaml

from infersight.detect import detect
from infersight.detect.config import DEFAULT_USER_FACING
from infersight.diagnose.config import DiagnoseConfig
from infersight.diagnose.context import Context
from infersight.diagnose.path import Walk, trace
from infersight.lab.evaluate.path_cases import _case


def walk_of(case_yaml: str) -> Walk:
    """The walk from the case's symptoms, on its incident window and baselines."""
    windows = _case("walk", yaml.safe_load(case_yaml)).windows()
    base = {k: v for k, v in windows.items() if k != "incident"}
    ctx = Context.build(
        windows["incident"], detect(windows), DEFAULT_USER_FACING, DiagnoseConfig(), base
    )
    return trace(ctx)
