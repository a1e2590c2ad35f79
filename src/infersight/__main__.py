"""`infersight` and `python -m infersight`: the command line, or one line saying how to get it.

The core install is the serving library's (`infersight[serving]`); the command line and the
analysis behind it come with `infersight[cli]`. Without them the command says so in one line
instead of a traceback.
"""

from __future__ import annotations

import sys

#: what the command line needs that the core install does not bring
CLI_MODULES = frozenset({"numpy", "httpx", "pydantic", "yaml", "pyarrow", "typer", "rich"})
EXIT_INPUT = 3


def main() -> None:
    try:
        from infersight.cli import main as cli_main
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in CLI_MODULES:
            raise
        sys.stderr.write(
            f"error: the infersight command needs its 'cli' extra ({exc.name} is not "
            "installed): pip install 'infersight[cli]'\n"
        )
        sys.exit(EXIT_INPUT)
    cli_main()


if __name__ == "__main__":
    main()
