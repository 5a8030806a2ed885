"""Catalog entries added because benchmarks/data/deployed_models.txt names them (publishers N-Z, issue 11): each
checked by hand against its config.json and the publisher's parameter count (the docstring says which)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.sources.resolve import resolve_model

from .catalog_support import page_bytes, reconstructed


def test_hermes_2_pro_llama_3_8b_by_hand() -> None:
    """Hermes-2-Pro-Llama-3-8B (the publisher's config.json, 700 bytes as its blame page prints): Llama-3-8B, 32
    layers of 4096 (q/o 4096^2, k/v 4096 x 1024, gated MLP 3 x 4096 x 14336, two RMSNorms), with 32 tokens added
    to the 128,256-row vocabulary: untied 128,288-row embedding and head, final norm: 8,030,523,392 parameters
    (Llama-3-8B's 8,030,261,248 plus 2 x 32 x 4096)."""
    h = 4096
    total = 32 * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 2 * 128288 * h + h
    assert total == 8_030_261_248 + 2 * 32 * h == 8_030_523_392
    spec = resolve_model("NousResearch/Hermes-2-Pro-Llama-3-8B")
    assert spec.params is not None and spec.params.total == total and spec.approximate == ()
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 8192)
    assert page_bytes("NousResearch/Hermes-2-Pro-Llama-3-8B") == 700


def test_falcon_mamba_7b_by_hand() -> None:
    """Falcon-Mamba-7B (TII's pre-decay checkpoint's config.json, 865 bytes as the page prints): 64 attention-free
    Mamba-1 blocks of 4096 with d_inner 8192 (the saved intermediate_size: vLLM's MambaMixer reads
    config.intermediate_size, not the written expand 16 x hidden = 65,536), state 16, dt rank 256. Per block:
    in_proj 4096 x 2 x 8192, a 4-wide conv over 8192 channels with biases, x_proj 8192 x (256 + 2 x 16), dt_proj
    256 x 8192 with a bias, A 8192 x 16, D 8192, out_proj 8192 x 4096, one RMSNorm; untied 65,024-row embedding and
    head, final norm: 7,272,665,088 parameters (TII's 7.27B). No layer caches K/V."""
    h, d = 4096, 8192
    block = h * 2 * d + d * 4 + d + d * (256 + 2 * 16) + 256 * d + d + d * 16 + d + d * h + h
    total = 64 * block + 2 * 65024 * h + h
    assert total == 7_272_665_088
    spec = resolve_model("tiiuae/falcon-mamba-7b")
    assert spec.params is not None and spec.params.total == total and spec.approximate == ()
    assert spec.mamba is not None and (spec.mamba.intermediate, spec.mamba.state_size, spec.mamba.dt_rank) == (
        d,
        16,
        256,
    )
    assert set(spec.layer_kinds) == {"mamba"} and len(spec.layer_kinds) == 64
    assert page_bytes("tiiuae/falcon-mamba-7b") == 865


def test_entries_name_their_source_and_are_not_reconstructed() -> None:
    for model_id in (
        "NousResearch/Hermes-2-Pro-Llama-3-8B",
        "tiiuae/falcon-mamba-7b",
        "stabilityai/stablelm-3b-4e1t",
        "OpenAssistant/oasst-sft-4-pythia-12b-epoch-3.5",
    ):
        entry = load_model(model_id)
        assert entry is not None and "config.json" in entry.source and "huggingface.co/" in entry.source
        assert entry.reconstructed is None


def test_qwen2_vl_72b_instruct_by_hand() -> None:
    """Qwen2-VL-72B-Instruct (reconstructed: a re-save of the release by OPEA's AutoRound quantization, whose
    quantization block is dropped, with the tail its page cuts off taken from Qwen's own 72B GPTQ build): 80
    layers of 8192 (q/o 8192^2 with a q bias, k/v 8192 x 1024 with biases, gated MLP 3 x 8192 x 29568, two
    RMSNorms), untied 152,064-row embedding and head, final norm: 72,706,203,648 language-model parameters, plus the
    675M ViT and merger counted as vision: Qwen's 73.4B."""
    h, kv, vocab = 8192, 1024, 152064
    text = 80 * (2 * h * h + h + 2 * (h * kv + kv) + 3 * h * 29568 + 2 * h) + 2 * vocab * h + h
    assert text == 72_706_203_648
    spec = resolve_model("Qwen/Qwen2-VL-72B-Instruct")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert 73.35e9 < spec.params.total < 73.45e9
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 32768)
    assert reconstructed("Qwen/Qwen2-VL-72B-Instruct")


def test_stablelm_3b_4e1t_by_hand() -> None:
    """StableLM-3B-4E1T (mlc-llm's copy of the publisher's transformers-native config.json, 599 bytes at indent 2
    as the hub lists it): 32 layers of 2560 with 32 full KV heads (q/k/v/o 4 x 2560^2, no QKV bias), gated MLP
    3 x 2560 x 6912, two LayerNorms with biases; untied 50,304-row embedding and head, final LayerNorm:
    2,795,443,200 parameters (Stability's model card). stablelm is outside the architecture table: read as a
    Llama-style decoder, whose RMSNorms have no bias (the 65 LayerNorm biases, 166,400, are not counted), said so."""
    h, vocab = 2560, 50304
    ln_bias = (2 * 32 + 1) * h
    total = 32 * (4 * h * h + 3 * h * 6912 + 2 * h) + 2 * vocab * h + h + ln_bias
    assert total == 2_795_443_200
    spec = resolve_model("stabilityai/stablelm-3b-4e1t")
    assert spec.params is not None and spec.params.total == total - ln_bias
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (32, 80, 4096)
    assert any("'stablelm' is not in vllm-plan's architecture table" in reason for reason in spec.approximate)
    assert page_bytes("stabilityai/stablelm-3b-4e1t") == 599


def test_oasst_sft_4_pythia_12b_by_hand() -> None:
    """Open-Assistant SFT-4 Pythia-12B (the config.json of the RL tune trained from it, 644 bytes): EleutherAI's
    Pythia-12B (36 layers of 5120, 40 heads, MLP 20480, parallel residual, untied) with a 50,288-row vocabulary
    instead of 50,688: the bundled pythia-12b's 11,846,072,320 parameters less 2 x 400 x 5120 = 11,841,976,320."""
    oa, pythia = resolve_model("OpenAssistant/oasst-sft-4-pythia-12b-epoch-3.5"), resolve_model("EleutherAI/pythia-12b")
    assert pythia.params is not None and pythia.params.total == 11_846_072_320
    assert oa.params is not None and oa.params.total == 11_846_072_320 - 2 * 400 * 5120 == 11_841_976_320
    assert oa.approximate == () and (oa.num_kv_heads, oa.head_dim, oa.max_model_len) == (40, 128, 2048)
    assert page_bytes("OpenAssistant/oasst-sft-4-pythia-12b-epoch-3.5") == 644


def test_orion_14b_base_is_the_chat_models_network() -> None:
    """Orion-14B-Base (a DPO fine-tune's re-save of its config.json): the widths of the bundled Orion-14B-Chat, so
    the same 14,498,288,640 parameters counted with RMSNorm-sized norms and the same approximation (orion is outside
    the architecture table)."""
    base, chat = resolve_model("OrionStarAI/Orion-14B-Base"), resolve_model("OrionStarAI/Orion-14B-Chat")
    assert base.params is not None and base.params == chat.params and base.params.total == 14_498_288_640
    assert (base.num_kv_heads, base.head_dim, base.max_model_len) == (40, 128, 4096)
    assert any("'orion' is not in vllm-plan's architecture table" in reason for reason in base.approximate)


def _nemotron_h(h: int, heads: int, mamba_heads: int, state: int, ffn: int, pattern: str) -> int:
    """A Nemotron-H base model by hand: Mamba-2 mixers of mamba_heads x 64 (d_inner 2 h, 8 groups of `state`:
    in_proj h x (2 d_inner + 2 x 8 x state + heads), a 4-wide conv with biases over d_inner + 2 x 8 x state
    channels, A/D/dt per head, a gated norm of d_inner, out_proj), squared-ReLU MLPs 2 x h x ffn, GQA attention of
    `heads` x 128 with 8 KV heads; one RMSNorm a block, untied 131,072-row embedding and head, final norm."""
    d_inner, groups = mamba_heads * 64, 8
    conv = d_inner + 2 * groups * state
    mamba = h * (2 * d_inner + 2 * groups * state + mamba_heads) + conv * 4 + conv + 3 * mamba_heads
    mamba += d_inner + d_inner * h
    attention = h * heads * 128 + 2 * h * 8 * 128 + heads * 128 * h
    counts = {kind: pattern.count(kind) for kind in "M-*"}
    blocks = counts["M"] * mamba + counts["-"] * 2 * h * ffn + counts["*"] * attention
    return blocks + len(pattern) * h + 2 * 131072 * h + h


def test_nemotron_h_8b_and_47b_base_by_hand() -> None:
    """Nemotron-H-8B/47B-Base-8K (reconstructed from NVIDIA's Megatron-Bridge providers in the keys of the bundled
    56B's real config.json, whose values that file's 56B provider reproduces): 8B, 52 blocks of 4096 (24 Mamba of
    128 heads with state 128, 24 MLPs of 21504, 4 attention of 32 heads): 8,100,852,736 parameters; 47B, 98 blocks of
    8192 (45 Mamba of 256 heads with state 256, 48 MLPs of 30720, 5 attention of 64 heads): 46,791,554,816
    (NVIDIA's "8B" and "47B"). Only the attention blocks cache K/V."""
    p8 = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-"
    p47 = "M-M-M-M-M-M-M-M-M*-M-M-M-M-M-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M-M-M---MM---M-M*-M-M-M-M-M-"
    for model_id, total, pattern, attention_layers in (
        ("nvidia/Nemotron-H-8B-Base-8K", _nemotron_h(4096, 32, 128, 128, 21504, p8), p8, 4),
        ("nvidia/Nemotron-H-47B-Base-8K", _nemotron_h(8192, 64, 256, 256, 30720, p47), p47, 5),
    ):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.layer_kinds.count("full") == attention_layers == pattern.count("*"), model_id
        assert spec.max_model_len == 8192 and reconstructed(model_id)
    assert _nemotron_h(4096, 32, 128, 128, 21504, p8) == 8_100_852_736
    assert _nemotron_h(8192, 64, 256, 256, 30720, p47) == 46_791_554_816
    # the same formula on the bundled 56B's real config.json: the providers' translation is checked on it
    p56 = "M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*-M-M-M-M-M*"
    p56 += "-M-M-M-M-M-"
    real = resolve_model("nvidia/Nemotron-H-56B-Base-8K")
    assert real.params is not None and real.params.total == _nemotron_h(8192, 64, 256, 256, 32768, p56)


def test_nemotron_nano_9b_v2_base_and_japanese_are_the_9b_v2_network() -> None:
    """vLLM's Nemotron-Nano-9B-v2 recipe lists the pre-RL Base checkpoint and the Japanese fine-tune as variants of
    the model at the same precision and memory floor: reconstructed as the bundled 9B-v2 architecture (8,888,227,328
    parameters, 4 attention layers), approximate."""
    nano = resolve_model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")
    for model_id in ("nvidia/NVIDIA-Nemotron-Nano-9B-v2-Base", "nvidia/NVIDIA-Nemotron-Nano-9B-v2-Japanese"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params == nano.params and spec.params.total == 8_888_227_328
        assert spec.layer_kinds == nano.layer_kinds and reconstructed(model_id)


def test_qvq_72b_preview_is_qwen2_vl_72b_with_128000_positions() -> None:
    """QVQ-72B-Preview (reconstructed: unsloth's re-save of its config.json up to rms_norm_eps, the rest as the
    bundled Qwen2-VL-72B-Instruct): the Qwen2-VL-72B network, 72,706,203,648 language-model parameters (the GGUF
    conversion's 72.7B), and 128,000 positions where Qwen2-VL-72B-Instruct has 32,768."""
    qvq, vl = resolve_model("Qwen/QVQ-72B-Preview"), resolve_model("Qwen/Qwen2-VL-72B-Instruct")
    assert qvq.params is not None and qvq.params == vl.params
    assert qvq.params.total - qvq.params.vision == 72_706_203_648
    assert (qvq.max_model_len, vl.max_model_len) == (128000, 32768) and reconstructed("Qwen/QVQ-72B-Preview")


def test_xverse_13b_and_65b_chat_by_hand() -> None:
    """XVERSE-13B/65B-Chat (the publisher's config.json files; the 65B's is 684 bytes as its page prints): Llama-
    style decoders with full KV heads, q/k/v/o 4 x h^2, gated MLP, two RMSNorms, untied embedding and head, final
    norm. 13B: 40 layers of 5120, MLP 13824, 100,278 rows: 13,715,031,040; 65B: 80 layers of 8192, MLP 22016,
    100,534 rows: 66,408,521,728 (XVERSE's "13B" and "65B"). xverse is outside the architecture table, said so."""

    def xverse(h: int, layers: int, mlp: int, vocab: int) -> int:
        return layers * (4 * h * h + 3 * h * mlp + 2 * h) + 2 * vocab * h + h

    for model_id, total, positions in (
        ("xverse/XVERSE-13B-Chat", xverse(5120, 40, 13824, 100278), 8192),
        ("xverse/XVERSE-65B-Chat", xverse(8192, 80, 22016, 100534), 16384),
    ):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.max_model_len == positions
        assert any("'xverse' is not in vllm-plan's architecture table" in reason for reason in spec.approximate)
    assert xverse(5120, 40, 13824, 100278) == 13_715_031_040
    assert xverse(8192, 80, 22016, 100534) == 66_408_521_728
    assert page_bytes("xverse/XVERSE-65B-Chat") == 684


def test_falcon_mamba_7b_instruct_is_the_base_network() -> None:
    """Falcon-Mamba-7B-Instruct (reconstructed: TII's own 4-bit re-save shows the widths, the rest is the bundled
    base's): the base's 7,272,665,088 parameters and Mamba-1 mixers of d_inner 8192, approximate."""
    inst, base = resolve_model("tiiuae/falcon-mamba-7b-instruct"), resolve_model("tiiuae/falcon-mamba-7b")
    assert inst.params is not None and inst.params == base.params and inst.params.total == 7_272_665_088
    assert inst.mamba == base.mamba and reconstructed("tiiuae/falcon-mamba-7b-instruct")


def test_xverse_7b_chat_is_its_base_network() -> None:
    """XVERSE-7B-Chat (reconstructed as XVERSE-7B's config, which two copies keep; the publisher's 13B and 13B-Chat
    files at the cited revisions are the same): 32 layers of 4096, MLP 11008, untied 100,534-row embedding and head:
    7,299,846,144 parameters, 8,192 positions."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 100534 * h + h
    assert total == 7_299_846_144
    spec = resolve_model("xverse/XVERSE-7B-Chat")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 8192
    assert reconstructed("xverse/XVERSE-7B-Chat")
