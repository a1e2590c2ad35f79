"""Make the lab engine's model: a tiny Llama with random weights and a byte-level BPE tokenizer
trained on local text, written as safetensors in a folder `vllm serve` reads. Nothing is
downloaded.

Run with the *engine's* Python (it needs torch, transformers and tokenizers, which vLLM brings;
infersight itself is not imported):

    ENGINE/bin/python make_model.py --out DIR [--hidden 256 --layers 2 --heads 4 --vocab 4096]

The same arguments give the same bytes: the weights come from a fixed seed and the tokenizer
from a sorted list of the Python standard library's sources. The text it generates is noise;
the lab asks for fixed lengths (`ignore_eos`), so only the model's cost matters.
"""

from __future__ import annotations

import argparse
import json
import sysconfig
from collections.abc import Iterator
from pathlib import Path

#: enough text for a 4096-token vocabulary, read in a fixed order
CORPUS_BYTES = 8_000_000
SPECIAL = ["<unk>", "<s>", "</s>"]


def corpus(limit: int = CORPUS_BYTES) -> Iterator[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    used = 0
    for path in sorted(root.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts:
            continue
        try:
            text = path.read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        yield text
        used += len(text)
        if used >= limit:
            return


def make_tokenizer(out: Path, vocab: int) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "model_max_length": 4096,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=1) + "\n")


def make_weights(out: Path, args: argparse.Namespace) -> None:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        intermediate_size=args.hidden * 4,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        num_key_value_heads=args.heads,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=2,
        tie_word_embeddings=True,
        torch_dtype="bfloat16",
    )
    model = LlamaForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(str(out), safe_serialization=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--vocab", type=int, default=4096)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    make_tokenizer(args.out, args.vocab)
    make_weights(args.out, args)


if __name__ == "__main__":
    main()
