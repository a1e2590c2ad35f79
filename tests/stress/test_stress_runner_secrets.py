"""The command a stress run records for its diagnosis holds no credential of the URL."""

from __future__ import annotations

import pytest

from infersight.lab.live.servers import free_port
from infersight.stress.runner import diagnose_window


@pytest.mark.slow
def test_the_recorded_diagnose_command_masks_the_urls_password() -> None:
    url = f"http://ops:stress-url-pw-77@127.0.0.1:{free_port()}"
    result = diagnose_window(url, 1_796_000_000.0, 1_796_000_600.0)
    assert "stress-url-pw-77" not in str(result)
    assert " diagnose -p 'http://***@127.0.0.1:" in result["command"]
