"""Models of field rounds 9 and 10 that did not resolve offline (issue #11), session 11: entries and aliases checked
against their sources by hand."""

from __future__ import annotations

from recommender.catalog import find_model, load_gpus, load_model
from recommender.hardware import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

V033 = VllmVersion.parse("0.33.0")
H100 = resolve_gpu("h100", load_gpus())


def _reconstructed(model_id: str) -> bool:
    spec = resolve_model(model_id)
    return any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def _qwen3_vl_tower(depth: int, h: int, i: int, out: int) -> int:
    """Qwen3-VL's vision tower: patch embedding (3 x 2 x 16 x 16 -> h, with bias), 2,304 learned positions, `depth`
    blocks (biased qkv and proj, biased fc1/fc2 MLP, two LayerNorms), the merger (LayerNorm over h, 4h -> 4h -> out,
    biased) and three deepstack mergers (the same, LayerNorm over 4h)."""
    patch = 3 * 2 * 16 * 16 * h + h
    block = (3 * h * h + 3 * h) + (h * h + h) + (i * h + i) + (h * i + h) + 4 * h
    merger = 4 * h * 4 * h + 4 * h + 4 * h * out + out
    return patch + 2304 * h + depth * block + (2 * h + merger) + 3 * (2 * 4 * h + merger)


def test_qwen3_vl_4b_instruct_fp8_is_the_4b_in_qwen_block_fp8() -> None:
    """Qwen3-VL-4B-Instruct-FP8 (reconstructed): the 4B's 4,437,815,808 parameters (a local load of
    Qwen3-VL-4B-Instruct reports total_parameters 4437815808, read_file id 59607822170): 36 layers of 2560 (q 4096,
    k/v 1024, o, q/k norms of 128, gated MLP 3 x 2560 x 9728, two RMSNorms), a tied 151,936-row embedding, the final
    norm and a 24-block vision tower of 1024, in Qwen's 128 x 128 block FP8 with the tower and embedding in 16 bit."""
    h, vocab = 2560, 151936
    text = 36 * (h * 4096 + 2 * h * 1024 + 4096 * h + 2 * 128 + 3 * h * 9728 + 2 * h) + vocab * h + h
    total = text + _qwen3_vl_tower(24, 1024, 4096, 2560)
    assert total == 4_437_815_808
    spec = resolve_model("Qwen/Qwen3-VL-4B-Instruct-FP8")
    assert spec.params is not None and spec.params.total == total
    assert spec.params == resolve_model("Qwen/Qwen3-VL-4B-Instruct").params
    assert spec.quant is not None and spec.quant.bits == 8 and spec.quant.block == (128, 128)
    assert _reconstructed("Qwen/Qwen3-VL-4B-Instruct-FP8")


def test_qwen3_vl_30b_a3b_instruct_fp8_is_the_moe_in_qwen_block_fp8() -> None:
    """Qwen3-VL-30B-A3B-Instruct-FP8 (reconstructed): 31,070,754,032 parameters (Fireworks' model list gives
    paramCount 31070754032 for qwen3-vl-30b-a3b-instruct, read_file id 66729435508): 48 layers of 2048 (q 4096, k/v
    512, o, q/k norms, router 2048 x 128, 128 experts of 3 x 2048 x 768, two RMSNorms), untied 151,936-row embedding
    and head, final norm, and a 27-block vision tower of 1152. At TP=1 the FP8 checkpoint loads a bit over half of
    the BF16 one (embedding, head, routers and tower stay 16-bit)."""
    h, vocab = 2048, 151936
    layer = h * 4096 + 2 * h * 512 + 4096 * h + 2 * 128 + h * 128 + 128 * 3 * h * 768 + 2 * h
    total = 48 * layer + 2 * vocab * h + h + _qwen3_vl_tower(27, 1152, 4304, 2048)
    assert total == 31_070_754_032
    fp8, bf16 = resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct-FP8"), resolve_model("Qwen/Qwen3-VL-30B-A3B-Instruct")
    assert fp8.params is not None and fp8.params.total == total and fp8.params == bf16.params
    assert fp8.quant is not None and fp8.quant.block == (128, 128)
    flags = EngineFlags(max_model_len=8192)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.56
    for base_id, variant in (
        ("Qwen/Qwen3-VL-30B-A3B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct-FP8"),
        ("Qwen/Qwen3-VL-4B-Instruct", "Qwen/Qwen3-VL-4B-Instruct-FP8"),
    ):
        base, entry = load_model(base_id), load_model(variant)
        assert base is not None and entry is not None
        assert variant in base.variants and entry.base_model == base_id
    assert _reconstructed("Qwen/Qwen3-VL-30B-A3B-Instruct-FP8")


def test_redhat_qwen3_6_35b_a3b_nvfp4_is_the_llm_compressor_recipe() -> None:
    """RedHatAI/Qwen3.6-35B-A3B-NVFP4 (reconstructed): Qwen3.6-35B-A3B's 35,107,181,936 parameters (Fireworks'
    model list: paramCount 35107181936 for qwen3p6-35b-a3b, read_file id 66729435508), of which the 40 layers' 256
    routed experts are 40 x 256 x 3 x 2048 x 512 = 32,212,254,720, in compressed-tensors NVFP4 (groups of 16) as
    llm-compressor's qwen3_6_example.py writes it: embedding, lm_head, vision tower, routers, shared-expert gates and
    the linear-attention (DeltaNet) layers stay 16-bit. Field10 Q017 logs 21.86 GiB loaded at TP=1."""
    spec, base = resolve_model("RedHatAI/Qwen3.6-35B-A3B-NVFP4"), resolve_model("Qwen/Qwen3.6-35B-A3B")
    assert spec.params is not None and spec.params == base.params
    assert spec.params.total == 35_107_181_936 and spec.params.experts == 40 * 256 * 3 * 2048 * 512
    assert spec.quant is not None and spec.quant.method == "nvfp4" and spec.quant.group_size == 16
    flags = EngineFlags(max_model_len=8192)
    weights = explain(spec, H100, flags, V033).stage.weights / 2**30
    assert 21.5 < weights < 22.0  # 21.77 GiB: the 16-bit DeltaNet, embedding and head are ~4.7 GiB of it
    assert _reconstructed("RedHatAI/Qwen3.6-35B-A3B-NVFP4")


def test_club_3090_nvfp4_directory_stays_nvidia_s_build() -> None:
    """With RedHatAI's build bundled, the bare name Qwen3.6-35B-A3B-NVFP4 names two entries; club-3090's registry
    downloads nvidia/Qwen3.6-35B-A3B-NVFP4 into `qwen3.6-35b-a3b-nvfp4` (calibration C061/C062 show that directory),
    so the directory (bare or as its cache path) resolves to NVIDIA's checkpoint, by the local-dir alias."""
    for written in ("qwen3.6-35b-a3b-nvfp4", "~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4"):
        match = find_model(written)
        assert match is not None and match.entry.id == "nvidia/Qwen3.6-35B-A3B-NVFP4"
        assert match.via is not None and "(local-dir)" in match.via
    match = find_model("RedHatAI/Qwen3.6-35B-A3B-NVFP4")
    assert match is not None and match.entry.id == "RedHatAI/Qwen3.6-35B-A3B-NVFP4" and match.via is None


def test_north_mini_code_w4a16_is_cohere2_moe_with_nvfp4_experts() -> None:
    """CohereLabs/North-Mini-Code-1.0-w4a16 (reconstructed): 49 layers of 2048 (q 4096, k/v 512, o; one norm before
    the parallel attention and MLP), layer 0 a dense MLP of 3 x 2048 x 3072, the other 48 a router 2048 x 128 and
    128 experts of 3 x 2048 x 768, a 262,144-row embedding that is also the head (cohere2_moe.py has no lm_head),
    the final norm: 30,484,303,872 parameters ("~30.5B" on the cards, 30.5 in the hub's listing). Its KV layout
    is 13 full-attention layers and 36 with a 4,096-token window: one 65,536-token request needs 2.24 GiB, what
    field10 Q005's report quotes vLLM 0.30 asking for ("64K needs 2.24 GiB")."""
    h = 2048
    attention = h * 4096 + 2 * h * 512 + 4096 * h
    total = 49 * (attention + h) + 3 * h * 3072 + 48 * (h * 128 + 128 * 3 * h * 768) + 262144 * h + h
    assert total == 30_484_303_872
    spec = resolve_model("CohereLabs/North-Mini-Code-1.0-w4a16")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.params.mlp == 3 * h * 3072 and not any("architecture table" in a for a in spec.approximate)
    assert spec.quant is not None and spec.quant.method == "nvfp4"
    rtx3090 = resolve_gpu("rtx 3090", load_gpus())
    e = explain(spec, rtx3090, EngineFlags(max_model_len=65536, enforce_eager=True), VllmVersion.parse("0.30.0"))
    need = e.blocks_per_request * e.stage.layout.bytes_per_block
    assert round(need / 2**30, 2) == 2.24
    # experts in NVFP4, attention, the dense layer and the embedding in 16 bit: 19.42 GB, the listed 19.3-19.4 GB
    assert 19.3e9 < e.stage.weights < 19.5e9
    assert _reconstructed("CohereLabs/North-Mini-Code-1.0-w4a16")


def test_cohere2_moe_is_pinned_to_vllm_0_21() -> None:
    """Cohere2MoeForCausalLM shipped in vLLM 0.21.0 (the enablement pull 44707, per vllm-project/recipes' North Mini
    Code recipe): a plan for 0.20 is refused for the architecture, 0.30 (field10 Q003's build) carries no such issue
    nor the "release not pinned" warning."""
    spec = resolve_model("CohereLabs/North-Mini-Code-1.0-w4a16")
    rtx3090 = resolve_gpu("rtx 3090", load_gpus())
    flags = EngineFlags(max_model_len=8192)
    old = explain(spec, rtx3090, flags, VllmVersion.parse("0.20.0"))
    assert "architecture-not-in-release" in [k.value for k in old.error_kinds]
    new = explain(spec, rtx3090, flags, VllmVersion.parse("0.30.0"))
    assert "architecture-not-in-release" not in [k.value for k in new.error_kinds]
    assert not any("may not load Cohere2MoeForCausalLM" in str(w) for w in new.warnings)
