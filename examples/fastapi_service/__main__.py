"""`python -m examples.fastapi_service [--host H] [--port P]` runs the example service."""

from __future__ import annotations

import argparse

import uvicorn

from examples.fastapi_service.service import create_app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    uvicorn.run(create_app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
