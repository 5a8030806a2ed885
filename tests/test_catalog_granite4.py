"""Granite 4.0 (issue 11): the hybrid H-Small, H-Tiny, H-Micro, H-1B and H-350M (Mamba2 + NoPE attention,
GraniteMoeHybridForCausalLM) and the attention-only 1B and 350M. Their config.json files were not found whole: each
entry is read back from stored copies (GGUF metadata of IBM's conversions, fine-tunes' configs) and says so. The
counts below are by hand from vLLM's granitemoehybrid.py (MambaMixer2 of mamba_expand x hidden, GraniteMoeMoE plus
GraniteMoeSharedMLP, QKV of hidden / heads) and are checked against the published sizes."""

from __future__ import annotations

from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed

VOCAB = 100352


def _mamba(h: int, heads: int, head_dim: int, state: int = 128, kernel: int = 4) -> int:
    """One MambaMixer2 of one group: in_proj to z, x, B, C and dt; the conv1d over x, B, C with its bias; A, D and
    dt_bias per head; the gated RMSNorm over d_inner; out_proj."""
    d_inner, conv = heads * head_dim, heads * head_dim + 2 * state
    return h * (2 * d_inner + 2 * state + heads) + conv * kernel + conv + 3 * heads + d_inner + d_inner * h


def _attention(h: int, heads: int, kv: int) -> int:
    head_dim = h // heads
    return h * (h + 2 * kv * head_dim) + h * h


def _ffn(h: int, shared: int, experts: int = 0, width: int = 0) -> int:
    return 3 * h * shared + (h * experts + experts * 3 * h * width if experts else 0)


def _total(h: int, layers: int, attention_layers: int, mixer: int, attention: int, ffn: int) -> int:
    mamba_layers = layers - attention_layers
    return mamba_layers * mixer + attention_layers * attention + layers * (ffn + 2 * h) + VOCAB * h + h


def test_granite_4_0_h_small_matches_its_published_checkpoint() -> None:
    """H-Small: 36 Mamba2 mixers of 128 heads x 64 (d_inner 8192, state 128) and 4 attention layers (32 heads of
    128, 8 KV heads) of 4096, each layer with 72 experts of 768 and a shared MLP of 1536, a tied 100,352-row
    embedding: 32,207,337,984 parameters (IBM: '32B'), 59.99 GiB in bfloat16, the 59.99 the hub's metadata lists
    for the repository's safetensors. The 4 attention layers hold 16 KiB of KV per token; each Mamba layer holds
    vLLM's mamba2_state_shape per sequence: conv (8192 + 2 x 128) x 3 and SSM 128 x 64 x 128, in bfloat16."""
    h = 4096
    total = _total(h, 40, 4, _mamba(h, 128, 64), _attention(h, 32, 8), _ffn(h, 1536, 72, 768))
    assert total == 32_207_337_984 and abs(2 * total / 2**30 - 59.99) < 0.006
    spec = resolve_model("ibm-granite/granite-4.0-h-small")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.layer_kinds.count("mamba") == 36 and spec.layer_kinds.count("full") == 4
    assert spec.mamba is not None and (spec.mamba.num_heads, spec.mamba.head_dim, spec.mamba.state_size) == (
        128,
        64,
        128,
    )
    assert spec.mamba.intermediate == 2 * h and spec.rotary_dim == 0 and spec.max_model_len == 131072
    e = explain(spec, H100, EngineFlags(max_model_len=32768), V033)
    assert e.stage.layout.bytes_per_token == 4 * 2 * 8 * 128 * 2
    state = (8192 + 2 * 128) * 3 * 2 + 128 * 64 * 128 * 2
    assert e.stage.layout.page_bytes >= state
    assert reconstructed("ibm-granite/granite-4.0-h-small")


def test_granite_4_0_h_tiny_matches_its_published_checkpoint() -> None:
    """H-Tiny: 36 Mamba2 mixers of 48 x 64 and 4 attention layers (12 heads of 128, 4 KV heads) of 1536, 64 experts
    of 512 and a shared MLP of 1024 per layer: 6,939,037,248 parameters (IBM: '7B'), 12.925 GiB in bfloat16, the
    hub's 12.93 for the repository's safetensors."""
    h = 1536
    total = _total(h, 40, 4, _mamba(h, 48, 64), _attention(h, 12, 4), _ffn(h, 1024, 64, 512))
    assert total == 6_939_037_248 and abs(2 * total / 2**30 - 12.93) < 0.006
    spec = resolve_model("ibm-granite/granite-4.0-h-tiny")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (4, 128, 131072)
    assert reconstructed("ibm-granite/granite-4.0-h-tiny")


def test_granite_4_0_dense_hybrids_by_hand() -> None:
    """The expert-free hybrids, whose one MLP is the shared one: H-Micro (2048 wide, 64 x 64 Mamba heads, 32 heads /
    8 KV, MLP 8192): 3,191,396,096 (IBM: '3B'); H-1B (1536, 48 x 64, 12 / 4, MLP 4096): 1,461,538,368 (IBM's nano
    '1.5B'); H-350M (768, 32 layers of which 4 attention, 48 x 32, 12 / 4, MLP 2048): 340,332,224 (IBM's '350M'
    nano, '340M' in its GGUF guides). H-350M keeps its 32,768 positions."""
    cases = (
        (
            "ibm-granite/granite-4.0-h-micro",
            _total(2048, 40, 4, _mamba(2048, 64, 64), _attention(2048, 32, 8), _ffn(2048, 8192)),
            3_191_396_096,
        ),
        (
            "ibm-granite/granite-4.0-h-1b",
            _total(1536, 40, 4, _mamba(1536, 48, 64), _attention(1536, 12, 4), _ffn(1536, 4096)),
            1_461_538_368,
        ),
        (
            "ibm-granite/granite-4.0-h-350m",
            _total(768, 32, 4, _mamba(768, 48, 32), _attention(768, 12, 4), _ffn(768, 2048)),
            340_332_224,
        ),
    )
    for model, by_hand, expected in cases:
        assert by_hand == expected, model
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == expected, model
        assert spec.mamba is not None and spec.layer_kinds.count("full") == 4 and reconstructed(model), model
    assert resolve_model("ibm-granite/granite-4.0-h-350m").max_model_len == 32768


def test_granite_4_0_nano_attention_only_by_hand() -> None:
    """The attention-only nanos, read as GraniteMoeHybridForCausalLM with no Mamba layer (like granite-4.0-micro):
    1B = 40 layers of 2048 (16 heads of 128, 4 KV heads, MLP 4096): 1,631,750,144 parameters; 350M = 28 layers of
    1024 (16 heads of 64, 4 KV heads, MLP 2048): 352,379,904. No Mamba state, RoPE on every layer."""
    for model, h, layers, heads, kv, mlp, expected, positions in (
        ("ibm-granite/granite-4.0-1b", 2048, 40, 16, 4, 4096, 1_631_750_144, 131072),
        ("ibm-granite/granite-4.0-350m", 1024, 28, 16, 4, 2048, 352_379_904, 32768),
    ):
        total = _total(h, layers, layers, 0, _attention(h, heads, kv), _ffn(h, mlp))
        assert total == expected, model
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == expected and spec.mamba is None, model
        assert spec.max_model_len == positions and spec.rotary_dim == h // heads, model
