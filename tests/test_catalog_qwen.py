"""Catalog entries of the Qwen family (Qwen v1, Qwen2/2.5, QwQ, Qwen3, Qwen3-Next, Qwen3-VL, Qwen3.6 and their
quantized and distilled builds). Entries and aliases are checked against their sources by hand; each test's
docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from dataclasses import replace

from recommender.catalog import find_model, load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed


def test_catalog_round_7_qwq_preview_is_qwen2_5_32b_layout() -> None:
    """QwQ-32B-Preview keeps Qwen2.5-32B-Instruct's widths (its card: 32.5B parameters, 64 layers, 40 query and 8 KV
    heads, 32,768 positions), so its count equals the bundled Qwen2.5-32B-Instruct's."""
    preview, base = resolve_model("Qwen/QwQ-32B-Preview"), resolve_model("Qwen/Qwen2.5-32B-Instruct")
    assert preview.params == base.params
    attention = 5120 * 5120 * 2 + 5120 * 1024 * 2 + (5120 + 1024 + 1024)  # q, o; k, v; q/k/v biases
    layer = attention + 3 * 5120 * 27648 + 2 * 5120
    assert preview.params is not None
    assert preview.params.total == 64 * layer + 2 * 152064 * 5120 + 5120 == 32_763_876_352


def test_catalog_round_7_qwen_v1_layout_by_hand() -> None:
    """Qwen-7B (QWenLMHeadModel, vLLM's qwen.py until 0.23.0): the config's intermediate_size 22016 counts both halves
    of the gated MLP, so each half is 11008 wide; c_attn is a fused q/k/v with a bias and 32 K/V heads. By hand: 32 x
    (c_attn 4096 x 12288 + 12288, c_proj 4096 x 4096, MLP 3 x 4096 x 11008, two norms) + embedding and head
    2 x 151936 x 4096 + final norm = 7,721,324,544, Qwen-7B's published 7.7B; the context is seq_length, 8192."""
    qwen = resolve_model("Qwen/Qwen-7B")
    layer = 4096 * 12288 + 12288 + 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096
    assert qwen.params is not None and not qwen.approximate
    assert qwen.params.total == 32 * layer + 2 * 151936 * 4096 + 4096 == 7_721_324_544
    assert qwen.max_model_len == 8192 and qwen.num_kv_heads == 32


def test_catalog_round_7_qwen3_4b_thinking_2507_reconstructed_from_its_tensors() -> None:
    """Qwen3-4B-Thinking-2507 is its Instruct-2507 sibling's config (reconstructed, and said so): the BF16 GGUF tensor
    lists of both (github:Thireus/GGUF-Tool-Suite models/Qwen3-4B-{Thinking,Instruct}-2507/group0/tensors.bf16.map)
    hold the same 398 tensors, 4,022,468,096 elements with the head tied to the embedding, which the planner's count
    must equal; 262,144 positions as its card and LM Studio's summary state."""
    spec = resolve_model("Qwen/Qwen3-4B-Thinking-2507")
    assert spec.params is not None and spec.params.total == 4_022_468_096 and spec.params.lm_head == 0
    assert spec.params == resolve_model("Qwen/Qwen3-4B-Instruct-2507").params
    assert spec.max_model_len == 262144
    assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate)


def test_lorbus_qwen3_6_autoround_keeps_its_deltanet_gates_16_bit() -> None:
    """Lorbus's AutoRound INT4 of Qwen3.6-27B (field6 L018-L020): GPTQ-packed 4-bit in groups of 128 over the bundled
    Qwen3.6-27B layout, read as vLLM's INCConfig; every linear-attention layer's in_proj_b / in_proj_a (fused
    in_proj_ba, 2 x 48 value heads wide) stays 16-bit, the full-attention projections and MLPs are packed, lm_head is
    not quantized."""
    from recommender.memory.weights import Parallel, tensor_bytes
    from recommender.model.tensors import model_tensors

    spec = resolve_model("Lorbus/Qwen3.6-27B-int4-AutoRound")
    assert spec.quant is not None and spec.quant.checkpoint_format == "auto-round"
    assert (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("gptq", 4, 128)
    assert spec.params == resolve_model("Qwen/Qwen3.6-27B").params
    tensors = {t.module: t for t in model_tensors(spec)}
    ba = tensors["model.layers.0.linear_attn.in_proj_ba"]
    assert tensor_bytes(spec, ba, Parallel(), 2, spec.quant) == ba.rows * ba.cols * 2 == 96 * 5120 * 2
    down = tensors["model.layers.3.mlp.down_proj"]
    assert (
        tensor_bytes(spec, down, Parallel(), 2, spec.quant)
        == down.cols // 8 * down.rows * 4 + down.cols // 128 * down.rows * 2
    )
    head = tensors["lm_head"]
    assert tensor_bytes(spec, head, Parallel(), 2, spec.quant) == head.rows * head.cols * 2


def test_catalog_round_8_qwen2_57b_a14b_by_hand() -> None:
    """Qwen2-57B-A14B: 28 layers, each attention (q/o 3584 x 3584 with q bias, k/v 3584 x 512 with biases), 64 experts
    of 3 x 3584 x 2560, a shared expert of 3 x 3584 x 20480 with its 3584 x 1 gate, a 3584 x 64 router and two
    norms; untied 151,936-row embedding and head: 57,408,658,944 (the card's 57B). The instruct release keeps it."""
    attention = 2 * 3584 * 3584 + 3584 + 2 * (3584 * 512 + 512)
    moe = 64 * 3 * 3584 * 2560 + 3 * 3584 * 20480 + 3584 + 3584 * 64
    layer = attention + moe + 2 * 3584
    base, instruct = resolve_model("Qwen/Qwen2-57B-A14B"), resolve_model("Qwen/Qwen2-57B-A14B-Instruct")
    assert base.params is not None and base.params == instruct.params
    assert base.params.total == 28 * layer + 2 * 151936 * 3584 + 3584 == 57_408_658_944
    assert (base.max_model_len, instruct.max_model_len) == (131072, 32768)


def test_catalog_round_8_qwen2_5_1m_keep_their_base_widths() -> None:
    """The 1M releases keep Qwen2.5-7B/14B-Instruct's widths exactly (same counts as the bundled releases) and differ
    in the context: 1,010,000 positions (rope_theta 1e7 with Dual Chunk Attention)."""
    for long, short in (
        ("Qwen/Qwen2.5-7B-Instruct-1M", "Qwen/Qwen2.5-7B-Instruct"),
        ("Qwen/Qwen2.5-14B-Instruct-1M", "Qwen/Qwen2.5-14B-Instruct"),
    ):
        spec, ref = resolve_model(long), resolve_model(short)
        assert spec.params == ref.params and spec.num_kv_heads == ref.num_kv_heads, long
        assert spec.max_model_len == 1_010_000 and ref.max_model_len == 32768
        match = find_model(long)
        assert match is not None and match.entry.config["dual_chunk_attention_config"] == {
            "chunk_size": 262144,
            "local_size": 8192,
            "original_max_position_embeddings": 262144,
        }


def test_catalog_round_8_qwen_7b_chat_is_qwen_7b() -> None:
    """Qwen-7B-Chat keeps Qwen-7B's architecture (7,721,324,544 by the Qwen v1 reader) and its 8,192-token context."""
    chat, base = resolve_model("Qwen/Qwen-7B-Chat"), resolve_model("Qwen/Qwen-7B")
    assert chat.params == base.params and chat.params is not None and chat.params.total == 7_721_324_544
    assert chat.max_model_len == base.max_model_len == 8192


def test_r1_0528_qwen3_8b_by_hand() -> None:
    """DeepSeek-R1-0528-Qwen3-8B (the keys vLLM issue #23141 quotes from its NVFP4 re-quantization): Qwen3-8B's
    36 layers of 4096 (q/o 4096^2, k/v 4096 x 1024, q/k norms of 128, gated MLP 3 x 4096 x 12288, two RMSNorms), an
    untied 151,936-row embedding and head, final norm: 8,190,735,360 parameters; YaRN factor 4 over 32,768 positions
    gives 131,072 where Qwen3-8B has 40,960."""
    h, layers, vocab = 4096, 36, 151936
    layer = 2 * h * h + 2 * h * 1024 + 2 * 128 + 3 * h * 12288 + 2 * h
    total = layers * layer + 2 * vocab * h + h
    assert total == 8_190_735_360
    spec, qwen = resolve_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B"), resolve_model("Qwen/Qwen3-8B")
    assert spec.params is not None and spec.params.total == total and spec.params == qwen.params
    assert (spec.max_model_len, qwen.max_model_len) == (131072, 40960) and spec.quant is None
    entry = load_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    assert entry is not None and entry.config["rope_scaling"]["factor"] * 32768 == 131072
    assert reconstructed("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")


def test_r1_0528_qwen3_8b_loads_what_its_vllm_log_says() -> None:
    """The vLLM 0.8.5 log of this model (TP=4, float16) says 'Model loading took 3.8459 GiB' on each GPU."""
    spec = resolve_model("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B")
    flags = EngineFlags(max_model_len=65536, tensor_parallel_size=4, dtype="float16")
    weights_gib = explain(spec, H100, flags, VllmVersion.parse("0.8.5")).stage.weights / 2**30
    assert abs(weights_gib - 3.8459) < 0.004


def test_eslzzyl_qwen3_4b_instruct_2507_awq_by_hand() -> None:
    """Eslzzyl's AutoAWQ of Qwen3-4B-Instruct-2507: 36 layers of q 2560 x 4096, k/v 2560 x 1024, o 4096 x 2560, q/k
    norms of 128, a gated MLP of 9728 and two norms; a tied 151,936 x 2560 embedding: 4,022,468,096 parameters, 4-bit
    in groups of 128 with zero points (the block the readers of its config.json quote); marked reconstructed."""
    layer = 2 * 2560 * 4096 + 2 * 2560 * 1024 + 3 * 2560 * 9728 + 2 * 128 + 2 * 2560
    spec = resolve_model("Eslzzyl/Qwen3-4B-Instruct-2507-AWQ")
    assert spec.params is not None
    assert spec.params.total == 36 * layer + 151936 * 2560 + 2560 == 4_022_468_096
    assert spec.params == resolve_model("Qwen/Qwen3-4B-Instruct-2507").params
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
    assert spec.quant.has_zero_points and spec.max_model_len == 262144
    entry = load_model("Eslzzyl/Qwen3-4B-Instruct-2507-AWQ")
    assert entry is not None and entry.reconstructed


def test_club_3090_model_directory_is_lorbus_autoround() -> None:
    """club-3090's setup downloads Lorbus's AutoRound INT4 into `qwen3.6-27b-autoround-int4`, and its logs show that
    directory as the model: the bare name and the cache path resolve to the very checkpoint (a local-dir alias)."""
    for written in ("qwen3.6-27b-autoround-int4", "~/.cache/huggingface/qwen3.6-27b-autoround-int4/"):
        match = find_model(written)
        assert match is not None and match.entry.id == "Lorbus/Qwen3.6-27B-int4-AutoRound"
        assert match.same_model and match.via is not None and "(local-dir)" in match.via
    assert find_model("qwen3.6-27b-autoround-int8") is None  # another directory name is not guessed


def test_unsloth_qwen3_8b_bnb_4bit_is_qwen3_8b_in_nf4() -> None:
    """unsloth/Qwen3-8B-bnb-4bit (reconstructed): Qwen3-8B's 8,190,735,360 parameters (36 layers of 4096, q/k norms
    of 128, gated MLP 3 x 4096 x 12288, untied 151,936-row embedding and head) in bitsandbytes NF4."""
    h, vocab = 4096, 151936
    total = 36 * (2 * h * h + 2 * h * 1024 + 2 * 128 + 3 * h * 12288 + 2 * h) + 2 * vocab * h + h
    assert total == 8_190_735_360
    spec = resolve_model("unsloth/Qwen3-8B-bnb-4bit")
    assert spec.params is not None and spec.params.total == total
    assert spec.quant is not None and spec.quant.method == "bitsandbytes" and spec.quant.bits == 4
    assert spec.max_model_len == 40960 and reconstructed("unsloth/Qwen3-8B-bnb-4bit")


def test_qwen3_next_instruct_fp8_is_block_fp8_of_the_instruct_release() -> None:
    """Qwen3-Next-80B-A3B-Instruct-FP8 (reconstructed): the Instruct release's parameters in Qwen's 128 x 128 block
    FP8; at TP=2 each GPU loads a bit over half of the 16-bit checkpoint (embedding, lm_head, routers and
    shared-expert gates stay 16-bit). It is listed as a variant of the Instruct entry."""
    fp8, bf16 = resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8"), resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert fp8.params is not None and fp8.params == bf16.params
    assert fp8.quant is not None and fp8.quant.bits == 8 and fp8.quant.block == (128, 128)
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=2)
    w8, w16 = explain(fp8, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.5 < w8 / w16 < 0.53
    base = load_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert base is not None and "Qwen/Qwen3-Next-80B-A3B-Instruct-FP8" in base.variants
    assert reconstructed("Qwen/Qwen3-Next-80B-A3B-Instruct-FP8")


def test_qwen3_coder_next_is_the_qwen3_next_80b_a3b_architecture() -> None:
    """Qwen3-Coder-Next (reconstructed from its re-saves): every sizing key equals Qwen3-Next-80B-A3B-Instruct's
    (48 layers of 2048, 36 Gated DeltaNet + 12 gated-attention layers, 512 experts of 512 with 10 active, a shared
    expert of 512), only rope_theta differs: the same parameters, KV cache and Mamba-style state."""
    coder, nxt = resolve_model("Qwen/Qwen3-Coder-Next"), resolve_model("Qwen/Qwen3-Next-80B-A3B-Instruct")
    assert coder.params is not None and coder.params == nxt.params
    assert coder.moe == nxt.moe and coder.linear_attention == nxt.linear_attention
    entry = load_model("Qwen/Qwen3-Coder-Next")
    assert entry is not None and entry.config["rope_theta"] == 5_000_000
    assert coder.max_model_len == 262144 and reconstructed("Qwen/Qwen3-Coder-Next")


def test_qwen3_235b_awq_is_4_bit_qwen3_235b() -> None:
    """cognitivecomputations/Qwen3-235B-A22B-AWQ (reconstructed): Qwen3-235B-A22B's parameters in 4-bit group-128
    weights (embedding, lm_head and routers 16-bit): 233.8B weights at 0.5 byte plus a 2-byte scale and a 4-bit zero
    point per 128 (0.52 byte), 2.5 GB in 16 bits: at TP=4 each GPU loads 0.26-0.27 of the 16-bit shard, 31 GB, more
    than a 24 GB A10 holds (vLLM issue #18156's OOM on four A10s)."""
    awq, bf16 = resolve_model("cognitivecomputations/Qwen3-235B-A22B-AWQ"), resolve_model("Qwen/Qwen3-235B-A22B")
    assert awq.params is not None and awq.params == bf16.params
    assert awq.quant is not None and awq.quant.bits == 4 and awq.quant.group_size == 128
    assert awq.quant.has_zero_points and not awq.quant.lm_head_quantized
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=4)
    w4, w16 = explain(awq, H100, flags, V033).stage.weights, explain(bf16, H100, flags, V033).stage.weights
    assert 0.26 < w4 / w16 < 0.27 and 30e9 < w4 < 32e9
    assert reconstructed("cognitivecomputations/Qwen3-235B-A22B-AWQ")


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
    assert reconstructed("Qwen/Qwen3-VL-4B-Instruct-FP8")


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
    assert reconstructed("Qwen/Qwen3-VL-30B-A3B-Instruct-FP8")


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
    assert reconstructed("RedHatAI/Qwen3.6-35B-A3B-NVFP4")


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


def test_unsloth_qwen2_5_0_5b_dynamic_bnb_4bit() -> None:
    """unsloth's dynamic NF4 upload of Qwen2.5-0.5B-Instruct (reconstructed: the base layout with the quantization
    block vLLM 0.8.5 printed when it loaded it, field11 R019). The layout by hand: 24 layers of 896 (q, o 896^2; k, v
    896 x 128; q/k/v biases 1,152; MLP 3 x 896 x 4864; two norms), the tied 151,936 x 896 embedding and the final
    norm: 494,032,768 parameters, Qwen's 0.49B. Layer 0's attention and the MLPs of layers 0, 2, 3 and 21 stay
    16-bit; vLLM 0.8.5 loaded 0.5153 GiB on an RTX 4090 D (with LoRA enabled, whose buffers are not counted here)."""
    h, layers, kv, ffn, vocab = 896, 24, 128, 4864, 151936
    total = layers * (2 * h * h + 2 * h * kv + h + 2 * kv + 3 * h * ffn + 2 * h) + vocab * h + h
    assert total == 494_032_768
    spec = resolve_model("unsloth/qwen2.5-0.5b-instruct-unsloth-bnb-4bit")
    assert (
        spec.params is not None
        and spec.params.total == total == resolve_model("Qwen/Qwen2.5-0.5B-Instruct").params.total
    )
    assert spec.quant is not None and (spec.quant.method, spec.quant.bits, spec.quant.double_quant) == (
        "bitsandbytes",
        4,
        True,
    )
    assert "model.layers.21.mlp" in spec.quant.keep_unquantized and "lm_head" in spec.quant.keep_unquantized
    entry = load_model("unsloth/Qwen2.5-0.5B-Instruct-unsloth-bnb-4bit")
    assert entry is not None and entry.base_model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert reconstructed("unsloth/Qwen2.5-0.5B-Instruct-unsloth-bnb-4bit")
    e = explain(spec, H100, EngineFlags(max_model_len=4096), VllmVersion.parse("0.8.5"))
    assert abs(e.stage.weights / 2**30 - 0.5153) / 0.5153 < 0.035


def test_cyankiwi_qwen3_5_9b_int8_keeps_attention_and_deltanet_16_bit() -> None:
    """cyankiwi's W8A16 build of Qwen3.5-9B (reconstructed): a serving report measured 12.19 GiB for its language
    model at vLLM 0.30.0 (--language-model-only) against 16.80 for the bf16 release; INT8 MLPs alone (groups of 32)
    give 12.49 by the formula, INT8 attention and DeltaNet as well about 10.7, so the entry keeps those 16-bit (the
    'BF16' of the name). Same layout as the base; field11 R010 loaded 13.04 GiB with the vision tower at 0.16.1.
    Since the MRotaryEmbedding's cache is counted at vLLM's 4 x max_position rows (memory/weights.py MROPE_ROWS,
    +0.09 GiB to both), the bf16 release is within 0.02 % of its 16.80 and the reconstructed INT8 build 3.2 % over."""
    spec, base = resolve_model("cyankiwi/Qwen3.5-9B-AWQ-BF16-INT8"), resolve_model("Qwen/Qwen3.5-9B")
    assert spec.params is not None and base.params is not None and spec.params.total == base.params.total
    assert spec.quant is not None and (spec.quant.bits, spec.quant.group_size) == (8, 32)
    assert reconstructed("cyankiwi/Qwen3.5-9B-AWQ-BF16-INT8")
    v030 = VllmVersion.parse("0.30.0")
    lm_only = EngineFlags(max_model_len=4096, language_model_only=True)
    int8, bf16 = (explain(s, H100, lm_only, v030).stage.weights / 2**30 for s in (spec, base))
    assert abs(int8 - 12.19) / 12.19 < 0.035 and abs(bf16 - 16.80) / 16.80 < 0.002


def test_qwen3_5_small_and_base_releases_share_their_post_trained_architecture() -> None:
    """Qwen3.5-0.8B/2B/4B/9B and their -Base checkpoints (config.json from KinChow/model-structure-viewer): each
    Base counts what its post-trained release counts, the 9B-Base what the bundled Qwen3.5-9B (tt-metal's copy of
    the same file) counts, and the sizes round to the names (0.85B, 2.21B, 4.54B, 9.41B)."""
    sizes = {"0.8B": 0.85, "2B": 2.21, "4B": 4.54, "9B": 9.41}
    for name, billions in sizes.items():
        post, base = resolve_model(f"Qwen/Qwen3.5-{name}"), resolve_model(f"Qwen/Qwen3.5-{name}-Base")
        assert post.params is not None and post.params == base.params
        assert round(post.params.total / 1e9, 2) == billions


def test_qwen3_5_gptq_int4_keeps_what_its_dynamic_rules_name() -> None:
    """Qwen's Qwen3.5 GPTQ-Int4 configs keep modules out of GPTQ with GPTQModel `dynamic` keys `-:.*attn.*`,
    `-:.*shared_expert.*`, `-:.*mtp.*`, `-:.*visual.*` (vLLM's gptq_utils.get_dynamic_override: a negative match is
    UnquantizedLinearMethod). The dense 27B keeps its attention 16-bit: its weights are over half the BF16
    checkpoint's (the MLP alone in 4-bit), against about a third if every linear were 4-bit."""
    entry = load_model("Qwen/Qwen3.5-27B-GPTQ-Int4")
    assert entry is not None and entry.base_model == "Qwen/Qwen3.5-27B"
    spec = resolve_model(entry.id)
    assert spec.quant is not None and "re:.*attn.*" in spec.quant.keep_unquantized
    flags = EngineFlags(max_model_len=4096)
    w4 = explain(spec, H100, flags, V033).stage.weights
    w16 = explain(resolve_model("Qwen/Qwen3.5-27B"), H100, flags, V033).stage.weights
    all_4bit = replace(spec, quant=replace(spec.quant, keep_unquantized=()))
    w4_all = explain(all_4bit, H100, flags, V033).stage.weights
    assert 0.5 < w4 / w16 < 0.56 and w4_all / w16 < 0.36
    for size in ("35B-A3B", "122B-A10B", "397B-A17B"):
        q, b = resolve_model(f"Qwen/Qwen3.5-{size}-GPTQ-Int4"), resolve_model(f"Qwen/Qwen3.5-{size}")
        assert q.params == b.params and q.quant is not None and q.quant.method == "gptq"
