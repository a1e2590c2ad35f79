"""How the lab's API asks the model pool, and how the card under a real engine reads it."""

from __future__ import annotations

from pathlib import Path

from infersight.lab.live.card_follower import running_of
from infersight.lab.live.llm_client import INSTRUCTIONS, LlmClient

SCRAPE = Path(__file__).parents[2] / "catalog" / "fixtures" / "vllm-0.32.0-cpu.1.prom"


def test_the_standin_is_asked_its_own_way() -> None:
    client = LlmClient("standin", "http://x")
    path, body = client.request("q", 16)
    assert path == "/generate" and body == {"prompt": "q", "max_tokens": 16}
    assert client.text_of({"text": "a"}) == "a"


def test_a_real_engine_gets_a_fixed_length_completion_behind_one_template() -> None:
    client = LlmClient("openai", "http://x", "lab-llm")
    path, body = client.request("q", 16)
    assert path == "/v1/completions"
    assert body["model"] == "lab-llm" and body["max_tokens"] == 16 and body["ignore_eos"]
    # every prompt starts with the same instructions: the engine's prefix cache holds them
    assert body["prompt"] == INSTRUCTIONS + "q"
    assert client.text_of({"choices": [{"text": "a"}]}) == "a"
    assert client.text_of({}) == ""


def test_the_card_reads_the_engines_running_requests() -> None:
    text = SCRAPE.read_text()
    assert running_of(text) == 0.0  # the real scrape was taken between two batches
    busy = text.replace(
        'vllm:num_requests_running{engine="0",model_name="lab-llm"} 0.0',
        'vllm:num_requests_running{engine="0",model_name="lab-llm"} 3.0',
    )
    assert busy != text and running_of(busy) == 3.0
    assert running_of("") == 0.0
