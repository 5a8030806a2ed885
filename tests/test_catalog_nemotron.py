"""Catalog entries of NVIDIA's Nemotron and Minitron models (Llama-derived, NAS, NemotronForCausalLM and the hybrid
Nano v2). Entries and aliases are checked against their sources by hand; each test's docstring names them (and the
field set or issue that brought the model in)."""

from __future__ import annotations

import pytest

from recommender.catalog import find_model
from recommender.sources.resolve import resolve_model

from .catalog_support import config_bytes, reconstructed


def test_catalog_round_8_nemotron_70b_is_llama_3_1_70b() -> None:
    """Llama-3.1-Nemotron-70B-Instruct-HF is an RLHF fine-tune of Llama-3.1-70B-Instruct with Meta's architecture: the
    same count (70,553,706,496) and context as the bundled Meta release."""
    nemotron = resolve_model("nvidia/Llama-3.1-Nemotron-70B-Instruct-HF")
    meta = resolve_model("meta-llama/Llama-3.1-70B-Instruct")
    assert nemotron.params == meta.params and nemotron.params is not None
    assert nemotron.params.total == 70_553_706_496
    assert nemotron.max_model_len == meta.max_model_len == 131072


def test_catalog_round_8_nemotron_nano_4b_by_hand() -> None:
    """Llama-3.1-Nemotron-Nano-4B-v1.1 (Minitron-4B-Width): 32 layers of q 3072 x 4096, k/v 3072 x 1024, o 4096 x 3072
    (32 heads of 128 over a 3072 residual), a gated MLP of 9216 and two norms, an untied 128,256-row embedding and
    head: 4,512,746,496 (its card: 4.5B)."""
    layer = 2 * 3072 * 4096 + 2 * 3072 * 1024 + 3 * 3072 * 9216 + 2 * 3072
    nano = resolve_model("nvidia/Llama-3.1-Nemotron-Nano-4B-v1.1")
    assert nano.params is not None
    assert nano.params.total == 32 * layer + 2 * 128256 * 3072 + 3072 == 4_512_746_496
    assert nano.max_model_len == 131072 and nano.num_kv_heads == 8


@pytest.mark.parametrize(
    ("model", "size"),
    [("nvidia/Nemotron-Mini-4B-Instruct", 646), ("nvidia/Minitron-4B-Base", 639), ("nvidia/Minitron-8B-Base", 635)],
)
def test_catalog_round_8_nvidia_pages_without_final_newline(model: str, size: int) -> None:
    """NVIDIA's hand-written Minitron config.json files end without a newline: the pages' sizes are the indent-2
    text alone."""
    match = find_model(model)
    assert match is not None and config_bytes(dict(match.entry.config)) - 1 == size


def test_catalog_round_8_nemotron_family_by_hand() -> None:
    """NemotronForCausalLM (vLLM nemotron.py): q/k/v/o without bias, an up/down squared-ReLU MLP (no gate) and
    LayerNorm1P with weight and bias (two a layer, one final); untied 256,000-row embedding and head.
    Minitron-4B: 32 x (q/o 3072 x 3072, k/v 3072 x 1024, MLP 2 x 3072 x 9216, norms 4 x 3072) + 2 x 256000 x 3072 +
    2 x 3072 = 4,190,509,056 (the card's 4.19B). Minitron-8B states head_dim 128 over 48 heads, so q and o are
    4096 x 6144: 8,271,699,968."""
    layer4 = 2 * 3072 * 3072 + 2 * 3072 * 1024 + 2 * 3072 * 9216 + 4 * 3072
    layer8 = 2 * 4096 * 6144 + 2 * 4096 * 1024 + 2 * 4096 * 16384 + 4 * 4096
    mini, base4 = resolve_model("nvidia/Nemotron-Mini-4B-Instruct"), resolve_model("nvidia/Minitron-4B-Base")
    base8 = resolve_model("nvidia/Minitron-8B-Base")
    assert mini.params is not None and base8.params is not None and not mini.approximate
    assert mini.params == base4.params
    assert mini.params.total == 32 * layer4 + 2 * 256000 * 3072 + 2 * 3072 == 4_190_509_056
    assert base8.params.total == 32 * layer8 + 2 * 256000 * 4096 + 2 * 4096 == 8_271_699_968


def test_nemotron_nano_8b_v1_is_llama_3_1_8b() -> None:
    """Llama-3.1-Nemotron-Nano-8B-v1 (reconstructed: Llama-3.1-8B-Instruct's config, which NVIDIA's converter uses for
    it): 8,030,261,248 parameters; a Q8_0 GGUF (34 bytes per 32 weights) of that many is 8.53 GB, the published
    file is 8.54 GB."""
    spec, base = (
        resolve_model("nvidia/Llama-3.1-Nemotron-Nano-8B-v1"),
        resolve_model("meta-llama/Llama-3.1-8B-Instruct"),
    )
    assert spec.params is not None and spec.params == base.params and spec.params.total == 8_030_261_248
    assert 8.52e9 < spec.params.total * 34 / 32 < 8.54e9
    assert spec.max_model_len == 131072 and reconstructed("nvidia/Llama-3.1-Nemotron-Nano-8B-v1")


def test_nemotron_super_49b_v1_5_is_v1_s_nas_layout() -> None:
    """Llama-3.3-Nemotron-Super-49B-v1.5 (reconstructed: its card calls it an upgraded v1, the same NAS 49B): v1's 80
    blocks, 49 with attention and 31 without, the same 49,867,145,216 parameters and 131,072 positions."""
    v15, v1 = (
        resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5"),
        resolve_model("nvidia/Llama-3_3-Nemotron-Super-49B-v1"),
    )
    assert v15.params is not None and v15.params == v1.params and v15.params.total == 49_867_145_216
    assert v15.layer_kinds == v1.layer_kinds and v15.layer_kinds.count("full") == 49
    assert v15.max_model_len == 131072 and reconstructed("nvidia/Llama-3_3-Nemotron-Super-49B-v1_5")


def test_nemotron_nano_9b_v2_by_hand() -> None:
    """NVIDIA-Nemotron-Nano-9B-v2 (reconstructed from NVIDIA's Megatron-Bridge provider): 56 blocks of 4480, each with
    one RMSNorm. 27 Mamba-2 mixers of 128 heads x 80 (d_inner 10240, 8 groups of state 128): in_proj 4480 x (2 x 10240
    + 2 x 8 x 128 + 128), a 4-wide conv over 12288 channels with biases, A/D/dt of 128, a gated norm of 10240, out_proj
    10240 x 4480; 25 squared-ReLU MLPs 2 x 4480 x 15680; 4 attention blocks (40 heads, 8 KV heads, of 128); untied
    131,072-row embedding and head, final norm: 8,888,227,328 parameters, the '9B'. Only the 4 attention layers
    cache K/V; the 27 Mamba layers hold a fixed state per sequence."""
    h, d_inner, conv = 4480, 128 * 80, 128 * 80 + 2 * 8 * 128
    mamba = h * (2 * d_inner + 2 * 8 * 128 + 128) + conv * 4 + conv + 3 * 128 + d_inner + d_inner * h
    attention = h * 5120 + 2 * h * 1024 + 5120 * h
    total = 27 * mamba + 25 * 2 * h * 15680 + 4 * attention + 56 * h + 2 * 131072 * h + h
    assert total == 8_888_227_328
    spec = resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    assert spec.params is not None and spec.params.total == total
    assert spec.layer_kinds.count("full") == 4 and spec.layer_kinds.count("mamba") == 27
    assert spec.mamba is not None and (spec.mamba.num_heads, spec.mamba.head_dim, spec.mamba.n_groups) == (128, 80, 8)
    assert spec.max_model_len == 131072 and reconstructed("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
