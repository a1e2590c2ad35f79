"""Control characters in text that came from data, shown as `\\xNN` instead of sent.

A terminal obeys escape sequences, and a message meant as one line (an error, an HTTP
refusal) breaks at a newline a sender put in a label's name. The lowest layer's own helper:
bundles and sources use it without importing the reports (`report/textsafe.py` builds on it).
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, and the C1 controls (ESC's 8-bit forms)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROL_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def shown(text: object, one_line: bool = False) -> str:
    """`text` with every control character shown as `\\xNN` (newlines too when `one_line`)."""
    pattern = _CONTROL_ONE_LINE if one_line else _CONTROL
    return pattern.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))
