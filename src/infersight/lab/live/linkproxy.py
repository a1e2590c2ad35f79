"""The links from the gateway to each replica: a TCP proxy on loopback per replica that can
delay and drop. netem needs CAP_NET_ADMIN in a network namespace, which a lab run by an
ordinary user does not have; this proxy makes the same faults in user space.

It reads its settings from `LINKS.json` (written by `lab fault link-slow|link-lossy`) every
half second: per replica, `delay_s` added to every chunk forwarded in each direction, and
`drop` the chance that a new connection, or any chunk forwarded, ends in a TCP reset (HAProxy
sees connection errors and retries them; a reset mid-response fails that request).

    python -m infersight.lab.live.linkproxy --control links.json 9001:8001 9002:8002
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import socket
import struct
from pathlib import Path
from typing import Any

CHUNK = 65536


class Link:
    def __init__(self, index: int, listen: int, target: int) -> None:
        self.index = index
        self.listen = listen
        self.target = target
        self.delay_s = 0.0
        self.drop = 0.0

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(CHUNK):
                if self.delay_s > 0:
                    await asyncio.sleep(self.delay_s)
                if self.drop > 0 and random.random() < self.drop:
                    _reset(writer)  # lost mid-stream: the connection dies with its request
                    return
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.drop > 0 and random.random() < self.drop:
            _reset(writer)
            return
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pump(reader, up_w), self._pump(up_r, writer))


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP reset, as a lost link looks to the caller."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.close()


def _read_control(path: Path, links: list[Link]) -> None:
    try:
        raw: Any = json.loads(path.read_text())
    except (OSError, ValueError):
        raw = {}
    for link in links:
        cfg = raw.get(str(link.index), {}) if isinstance(raw, dict) else {}
        link.delay_s = float(cfg.get("delay_s", 0.0))
        link.drop = float(cfg.get("drop", 0.0))


async def run(control: Path, pairs: list[tuple[int, int]]) -> None:
    links = [Link(i, listen, target) for i, (listen, target) in enumerate(pairs)]
    servers = [await asyncio.start_server(link.handle, "127.0.0.1", link.listen) for link in links]
    try:
        while True:
            _read_control(control, links)
            await asyncio.sleep(0.5)
    finally:
        for s in servers:
            s.close()


def main() -> None:
    p = argparse.ArgumentParser(description="infersight live lab: delaying, dropping links")
    p.add_argument("--control", type=Path, required=True)
    p.add_argument("pairs", nargs="+", help="LISTEN:TARGET port pairs, one per replica")
    args = p.parse_args()
    pairs = []
    for pair in args.pairs:
        a, _, b = pair.partition(":")
        pairs.append((int(a), int(b)))
    asyncio.run(run(args.control, pairs))


if __name__ == "__main__":
    main()
