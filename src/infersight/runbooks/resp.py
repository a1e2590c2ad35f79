"""A minimal Redis client (RESP2 over TCP): one command, its reply. Enough for a runbook's
`CONFIG SET` and friends without making redis-py a core dependency."""

from __future__ import annotations

import socket
from typing import Any


class RedisReplyError(Exception):
    """The server answered with an error (`-ERR ...`)."""


def _encode(words: list[str]) -> bytes:
    out = [f"*{len(words)}\r\n".encode()]
    for w in words:
        b = w.encode("utf-8")
        out.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(out)


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = b""

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def exact(self, n: int) -> bytes:
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the server closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def reply(self, depth: int = 0) -> Any:
        if depth > 8:
            raise ConnectionError("reply nested too deep")
        line = self.line()
        kind, rest = line[:1], line[1:].decode("utf-8", errors="replace")
        if kind == b"+":
            return rest
        if kind == b"-":
            raise RedisReplyError(rest)
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n).decode("utf-8", errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply(depth + 1) for _ in range(n)]
        raise ConnectionError(f"not a Redis reply: {line[:40]!r}")


def call(host: str, port: int, words: list[str], password: str = "", timeout: float = 5.0) -> Any:
    """Send one command (after AUTH when a password is given); its reply."""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        reader = _Reader(sock)
        if password:
            sock.sendall(_encode(["AUTH", password]))
            reader.reply()
        sock.sendall(_encode(words))
        return reader.reply()
