"""What one request of a sweep looks like for each kind of endpoint.

- get: the URL as given (the live lab's `/v1/answer?q=…`, the serving example's
  `/infer?text=…`); one request is one item, so only concurrency sweeps.
- openai: `/v1/embeddings` (a list of `b` inputs), `/v1/completions` (a list of `b` prompts),
  `/v1/chat/completions` (one conversation: concurrency sweeps only).
- triton: KServe v2 `/v2/models/NAME/infer`, one input tensor of shape `[b, *dims]`.

`{i}` in the URL or the text is replaced by the request's number, so that a cache in front of
the model (the live lab's Redis) does not answer the same request from memory every time.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

Kind = Literal["get", "openai", "triton"]
KINDS: tuple[Kind, ...] = ("get", "openai", "triton")
_DTYPES = {"FP32", "FP16", "INT32", "INT64", "BYTES"}


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    body: dict[str, Any] | None


@dataclass(frozen=True)
class Target:
    url: str
    kind: Kind
    model: str = "default"
    text: str = "capacity probe"
    max_tokens: int = 16
    triton_input: tuple[str, str, tuple[int, ...]] = ("INPUT0", "FP32", (16,))

    @property
    def batches(self) -> bool:
        """Whether one request can carry more than one item."""
        path = urlsplit(self.url).path
        return self.kind == "triton" or (
            self.kind == "openai" and not path.rstrip("/").endswith("chat/completions")
        )

    def request(self, batch: int, number: int = 0) -> Request:
        """Request `number` of a sweep, carrying `batch` items."""
        if "{i}" in self.url or "{i}" in self.text:
            n = str(number)
            url, text = self.url.replace("{i}", n), self.text.replace("{i}", n)
            return dataclasses.replace(self, url=url, text=text)._build(batch)
        return self._build(batch)

    def _build(self, batch: int) -> Request:
        if batch < 1:
            raise ValueError("a batch holds at least one item")
        if batch > 1 and not self.batches:
            raise ValueError(f"{self.url}: a {self.kind} endpoint takes one item per request")
        if self.kind == "get":
            return Request("GET", self.url, None)
        if self.kind == "openai":
            path = urlsplit(self.url).path.rstrip("/")
            if path.endswith("embeddings"):
                return Request(
                    "POST", self.url, {"model": self.model, "input": [self.text] * batch}
                )
            if path.endswith("chat/completions"):
                msg = [{"role": "user", "content": self.text}]
                body = {"model": self.model, "messages": msg, "max_tokens": self.max_tokens}
                return Request("POST", self.url, body)
            prompt: str | list[str] = [self.text] * batch if batch > 1 else self.text
            body = {"model": self.model, "prompt": prompt, "max_tokens": self.max_tokens}
            return Request("POST", self.url, body)
        name, dtype, dims = self.triton_input
        size = batch
        for d in dims:
            size *= d
        data: list[Any] = [self.text] * size if dtype == "BYTES" else [0] * size
        tensor = {"name": name, "shape": [batch, *dims], "datatype": dtype, "data": data}
        return Request("POST", self.url, {"inputs": [tensor]})


def guess_kind(url: str) -> Kind:
    path = urlsplit(url).path
    if "/v2/models/" in path:
        return "triton"
    if path.rstrip("/").endswith(("embeddings", "completions")):
        return "openai"
    return "get"


def parse_triton_input(text: str) -> tuple[str, str, tuple[int, ...]]:
    """`NAME:DTYPE:D1xD2…` (e.g. INPUT0:FP32:3x224x224) as a triple; ValueError when bad."""
    parts = text.split(":")
    if len(parts) != 3 or not parts[0]:
        raise ValueError(f"--triton-input {text!r}: use NAME:DTYPE:DIMS, e.g. INPUT0:FP32:16")
    name, dtype, dims = parts[0], parts[1].upper(), parts[2]
    if dtype not in _DTYPES:
        raise ValueError(f"--triton-input {text!r}: DTYPE is one of {', '.join(sorted(_DTYPES))}")
    try:
        shape = tuple(int(d) for d in dims.split("x"))
    except ValueError:
        raise ValueError(f"--triton-input {text!r}: DIMS are integers joined by x") from None
    if any(d < 1 for d in shape):
        raise ValueError(f"--triton-input {text!r}: every dimension is at least 1")
    return name, dtype, shape


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{url!r}: give an http:// or https:// URL")
    return url
