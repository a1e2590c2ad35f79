"""How the lab's API asks the model pool for text: the GPU stand-in's `/generate`, or a real
engine's OpenAI-compatible `/v1/completions` (vLLM), through the gateway either way.

For a real engine every prompt starts with the same instructions, as a RAG template does: the
engine's prefix cache keeps their blocks (vLLM's block is 128 tokens on the CPU) and its hit
ratio is what a changed template would lose. Lengths are fixed (`ignore_eos`): the lab's model
has random weights, so only its cost, never its text, means anything.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal

import httpx

Kind = Literal["standin", "openai"]
KINDS: tuple[Kind, ...] = ("standin", "openai")
#: the template's instructions (349 tokens of the lab model's tokenizer: two whole blocks)
INSTRUCTIONS = (
    "You answer questions about the documents below. Quote the passage you rely on, say when "
    "the passages do not hold the answer, and never invent a source. Keep answers short. "
) * 6


class PoolError(RuntimeError):
    """The pool answered, but not with text (its status in `status`)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"model pool answered {status}")
        self.status = status


@dataclass(frozen=True)
class LlmClient:
    kind: Kind
    base: str  # the pool's URL, e.g. http://127.0.0.1:8003
    model: str = ""
    #: the template changed: each request's own id comes first (`engine-template-change`)
    per_request_head: bool = False

    def request(self, prompt: str, max_tokens: int) -> tuple[str, dict[str, Any]]:
        """(path, JSON body) of one generation."""
        if self.kind == "standin":
            return "/generate", {"prompt": prompt, "max_tokens": max_tokens}
        head = f"request {uuid.uuid4().hex}. " if self.per_request_head else ""
        return "/v1/completions", {
            "model": self.model,
            "prompt": head + INSTRUCTIONS + prompt,
            "max_tokens": max_tokens,
            "ignore_eos": True,
            "temperature": 0.0,
        }

    def text_of(self, body: dict[str, Any]) -> str:
        """The generated text in the pool's answer."""
        if self.kind == "standin":
            return str(body.get("text", ""))
        choices = body.get("choices") or [{}]
        return str(choices[0].get("text", ""))

    async def generate(self, http: httpx.AsyncClient, prompt: str, max_tokens: int) -> str:
        path, body = self.request(prompt, max_tokens)
        r = await http.post(self.base + path, json=body)
        if r.status_code != 200:
            raise PoolError(r.status_code)
        return self.text_of(r.json())
