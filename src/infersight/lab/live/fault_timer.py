"""Clears the lab's faults after a delay (`lab fault NAME --for 10m`); started and recorded by
`lab fault`, so `lab down` stops it too.

    python -m infersight.lab.live.fault_timer LAB_DIR SECONDS
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from infersight.lab.live.faults import clear
from infersight.lab.live.procs import LabError
from infersight.lab.live.stack import Lab


def main() -> None:
    lab_dir, seconds = Path(sys.argv[1]), float(sys.argv[2])
    time.sleep(max(0.0, seconds))
    try:
        clear(Lab.load(lab_dir))
    except LabError as exc:
        print(f"fault timer: {exc}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
