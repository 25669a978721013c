"""Hugging Face transformers, unmodified, on PyTorch and on hookgrad with only the import swapped.

Small configurations of the model families most programs use (decoder-only with rotary
embeddings, grouped-query attention and mixture of experts, encoder-only, encoder-decoder,
vision, speech and a state-space model) are built from the same seed on both libraries: the
seeded initialisation draws PyTorch's random stream, so the weights are equal without copying
them. Each is run forward with labels, backward, three AdamW steps and (decoders) greedy
generation. transformers is not a test dependency: the test skips when it is not importable
(docs/ecosystem.md gives the install line).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

from tests.ecosystem._tools import require_tool, run_with

pytestmark = pytest.mark.oracle

_SMALL = {"vocab_size": 100, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
          "intermediate_size": 64}


def _ids(torch: Any) -> dict:
    return {"input_ids": torch.randint(0, 100, (2, 12)), "labels": torch.randint(0, 100, (2, 12))}


def _families(T: Any) -> dict:
    """name -> (config, model class, inputs maker, generates)."""
    decoder = dict(_SMALL, num_key_value_heads=2, max_position_embeddings=64)
    return {
        "llama": (T.LlamaConfig(**decoder), T.LlamaForCausalLM, _ids, True),
        "llama_eager": (T.LlamaConfig(**decoder, attn_implementation="eager"),
                        T.LlamaForCausalLM, _ids, False),
        "qwen2": (T.Qwen2Config(**decoder), T.Qwen2ForCausalLM, _ids, False),
        "mixtral": (T.MixtralConfig(**decoder, num_local_experts=4, num_experts_per_tok=2),
                    T.MixtralForCausalLM, _ids, False),
        "gpt2": (T.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64),
                 T.GPT2LMHeadModel, _ids, True),
        "gpt_neox": (T.GPTNeoXConfig(**_SMALL, max_position_embeddings=64),
                     T.GPTNeoXForCausalLM, _ids, False),
        "bert": (T.BertConfig(**_SMALL, max_position_embeddings=64, num_labels=3),
                 T.BertForSequenceClassification,
                 lambda torch: {"input_ids": torch.randint(0, 100, (2, 12)),
                                "attention_mask": torch.tensor([[1] * 12, [1] * 8 + [0] * 4]),
                                "labels": torch.tensor([0, 2])}, False),
        "bart": (T.BartConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1,
                              encoder_attention_heads=4, decoder_attention_heads=4,
                              encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=64),
                 T.BartForConditionalGeneration, _ids, False),
        "vit": (T.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=64, image_size=16, patch_size=4, num_labels=3),
                T.ViTForImageClassification,
                lambda torch: {"pixel_values": torch.randn(2, 3, 16, 16),
                               "labels": torch.tensor([0, 1])}, False),
        "whisper": (T.WhisperConfig(vocab_size=100, d_model=32, encoder_layers=1, decoder_layers=1,
                                    encoder_attention_heads=4, decoder_attention_heads=4,
                                    encoder_ffn_dim=64, decoder_ffn_dim=64, num_mel_bins=8,
                                    max_source_positions=16, max_target_positions=16,
                                    decoder_start_token_id=1, pad_token_id=0),
                    T.WhisperForConditionalGeneration,
                    lambda torch: {"input_features": torch.randn(2, 8, 32),
                                   "labels": torch.randint(2, 100, (2, 6))}, False),
        "mamba": (T.MambaConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, state_size=4),
                  T.MambaForCausalLM, _ids, False),
    }


def _train(torch: Any, T: Any, name: str) -> list:
    config, model_class, inputs, generates = _families(T)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        T.logging.set_verbosity_error()
        torch.manual_seed(0)
        model = model_class(config)
        batch = inputs(torch)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        out: list = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(**batch).loss
            loss.backward()
            out.append(loss.item())
            out.append(sum(float(p.grad.double().pow(2).sum()) for p in model.parameters()
                           if p.grad is not None))
            opt.step()
        if generates:
            model.eval()
            out += model.generate(batch["input_ids"][:, :4], max_new_tokens=5, do_sample=False,
                                  pad_token_id=0).flatten().tolist()
    return [type(next(model.parameters())).__module__.split(".")[0], *out]


@pytest.mark.parametrize("name", ["llama", "llama_eager", "qwen2", "mixtral", "gpt2", "gpt_neox",
                                  "bert", "bart", "vit", "whisper", "mamba"])
def test_model_family_trains_as_on_torch(name: str) -> None:
    require_tool("transformers")
    ref = run_with("torch", ("transformers",), lambda torch, T: _train(torch, T, name))
    got = run_with("hookgrad", ("transformers",), lambda torch, T: _train(torch, T, name))
    assert (ref[0], got[0]) == ("torch", "hookgrad")  # the swap really happened
    np.testing.assert_allclose(np.asarray(got[1:], dtype=np.float64),
                               np.asarray(ref[1:], dtype=np.float64),
                               rtol=2e-5, atol=1e-6)
