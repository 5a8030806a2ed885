"""Speculative decoding at startup (memory/spec_decode.py): the flags, the MTP drafter's weights, its KV layer, the
Mamba state it makes vLLM keep per draft token; hand-checked numbers and a real log (field4 J052)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchmarks import fidelity
from recommender.catalog import load_gpus
from recommender.errors import FlagError
from recommender.gpu_names import resolve_gpu
from recommender.memory import spec_decode as sd
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import build_layout
from recommender.memory.kv_dsv4 import dsv4_layout
from recommender.memory.startup_issues import IssueKind
from recommender.memory.weights import Parallel, tensor_bytes
from recommender.serve_args import parse_serve_argv
from recommender.sources.resolve import resolve_model
from recommender.startup_log import read_startup_log

QWEN36_FP8 = resolve_model("Qwen/Qwen3.6-27B-FP8")
V033 = VllmVersion(0, 33)
MTP3 = '{"method": "mtp", "num_speculative_tokens": 3}'


# --- the flags --------------------------------------------------------------------------------------------------


def test_the_speculative_config_is_read_as_vllm_resolves_it() -> None:
    """config/speculative.py: `*_mtp` is "mtp"; without a method the draft model's name decides (eagle-, eagle3,
    dflash, [ngram]), else a draft model; null is no speculative decoding."""
    assert sd.parse_speculative_config(MTP3) == sd.SpeculativeConfig("mtp", 3)
    assert sd.parse_speculative_config('{"method": "qwen3_5_mtp"}') == sd.SpeculativeConfig("mtp")
    named = sd.parse_speculative_config('{"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 4}')
    assert named is not None and named.method == "eagle3"
    assert sd.resolve_method(None, "z-lab/Qwen3.5-27B-DFlash") == "dflash"
    assert sd.resolve_method(None, "[ngram]") == "ngram"
    assert sd.resolve_method(None, "meta-llama/Llama-3.2-1B-Instruct") == "draft_model"
    assert sd.parse_speculative_config('{"method": "medusa", "model": "x/medusa"}') == sd.SpeculativeConfig(
        "medusa", None, "x/medusa"
    )  # an older release's method: accepted, its drafter not sized
    for none in (None, "null", "None", "{}"):
        assert sd.parse_speculative_config(none) is None


@pytest.mark.parametrize(
    "text", ['{"method": "medusa2"}', '{"method": "mtp", "num_speculative_tokens": 0}', "[1, 2]", "{mtp}", '{"x": 1}']
)
def test_a_malformed_speculative_config_is_a_one_line_flag_error(text: str) -> None:
    with pytest.raises(FlagError, match="speculative"):
        EngineFlags(speculative_config=text).validate()


def test_serve_commands_fold_the_shorthand_and_the_old_flags_into_the_config() -> None:
    """--spec-method/--spec-tokens (0.33, exclusive with the JSON's key) and --speculative-model /
    --num-speculative-tokens (before 0.8.3) become one --speculative-config."""
    cmd = parse_serve_argv(f"vllm serve Qwen/Qwen3.6-27B-FP8 -tp 2 --speculative-config '{MTP3}'")
    assert cmd.engine_flags().speculative() == sd.SpeculativeConfig("mtp", 3)
    short = parse_serve_argv("vllm serve m --spec-method mtp --spec-tokens 2").engine_flags().speculative()
    assert short == sd.SpeculativeConfig("mtp", 2)
    old = parse_serve_argv("vllm serve m --speculative-model [ngram] --num-speculative-tokens 5").engine_flags()
    assert old.speculative() == sd.SpeculativeConfig("ngram", 5, "[ngram]")
    both = parse_serve_argv(f"vllm serve m --speculative-config '{MTP3}' --spec-method eagle")
    assert "--spec-method and --speculative-config['method'] are mutually exclusive" in both.errors


def test_the_fidelity_harness_reads_the_drafter_from_the_records() -> None:
    """The logged non-default args' dict (K009), a collector's "MTP n=3" (L023), an explicit 'null' (L025) and a
    disabled MTP (L004)."""
    k009 = {"other_flags": "{'tp': 2, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}"}
    assert sd.parse_speculative_config(fidelity.record_speculative(k009)) == sd.SpeculativeConfig("mtp", 3)
    l023 = {"other_flags": "--max-num-seqs 2 --enable-prefix-caching, MTP n=3 (speculative method mtp), ASYNC_SCHED"}
    assert sd.parse_speculative_config(fidelity.record_speculative(l023)) == sd.SpeculativeConfig("mtp", 3)
    assert fidelity.record_speculative({"other_flags": "--speculative-config 'null' (B12X)"}) is None
    assert fidelity.record_speculative({"other_flags": "MTP disabled (GLM51_DISABLE_MTP=1)"}) is None


# --- the terms --------------------------------------------------------------------------------------------------


def test_the_mtp_module_weights_of_qwen36_27b_fp8_at_tp2_by_hand() -> None:
    """One MTP layer shaped like layer 63 (full attention, dense MLP) in FP8 128 x 128 blocks, on one of two GPUs:
    q_proj (gated: 2 x 24 heads x 256 = 12,288 rows, 6,144 here) 6,144 x 5,120 + 48 x 40 x 4 B scales = 31,464,960;
    k_proj and v_proj (2 of 4 KV heads x 256) 512 x 5,120 + 4 x 40 x 4 = 2,622,080 each; o_proj 5,120 x 3,072 +
    40 x 24 x 4 = 15,732,480; gate_up 17,408 x 5,120 + 136 x 40 x 4 = 89,150,720; down 5,120 x 8,704 + 40 x 68 x 4 =
    44,575,360; two layer norms 20,480 and the q/k norms 1,024 (bf16); `mtp.fc` (2H -> H, kept bf16 by the
    checkpoint's ignore list, column-parallel) 2,560 x 10,240 x 2 = 52,428,800; enorm, hnorm and norm 30,720.
    Total 238,648,704 bytes (0.222 GiB); the embedding and lm_head are the target's (not counted again)."""
    par = Parallel(tp=2)
    assert sd.mtp_reference_layer(QWEN36_FP8) == 63
    assert QWEN36_FP8.mtp_layers == 1
    got = sd.mtp_weight_bytes(QWEN36_FP8, par, dtype_bytes=2, quant=QWEN36_FP8.quant)
    assert (
        got == 31_464_960 + 2 * 2_622_080 + 15_732_480 + 89_150_720 + 44_575_360 + 20_480 + 1_024 + 52_428_800 + 30_720
    )
    assert got == 238_648_704


def test_the_mtp_layer_and_draft_tokens_reshape_the_hybrid_pool_as_field4_j052_logged() -> None:
    """Qwen3.6-27B-FP8, TP 2, fp8 KV, MTP with 3 draft tokens. DeltaNet state per layer on one GPU: conv 5,120
    channels x (4 - 1 + 3) x 2 B = 61,440 (the conv state keeps the draft tokens) + SSM 24 x 128 x 128 x 4 B =
    1,572,864 = 1,634,304 bytes; full attention 2 heads x (256 + 256) x 1 B = 1,024 bytes a token, so the block grows
    to 16 x cdiv(1,634,304, 16 x 1,024) = 1,600 tokens (1,568 without the drafter). The MTP layer makes 17 full layers
    beside 48 DeltaNet: groups of 17 (4 groups, 3 padding slots), a block of 17 x 1,600 x 1,024 = 27,852,800 bytes.
    A 262,144-token request: cdiv(262,144, 1,600) = 164 attention blocks + 3 Mamba groups x (1 + 3) = 176 (with
    prefix caching's align mode 3 x (2 + 3): 179). J052 logged 5.33 GiB -> 205 blocks (5.33 GiB / 27,852,800 =
    205.5) and "GPU KV cache size: 300,220 tokens" = int(205 / 179 x 262,144), exactly."""
    kv = sd.KvShape(tp=2, block_size=16, kv_bytes=1, model_bytes=2)
    drafter = sd.drafter_of(QWEN36_FP8, sd.SpeculativeConfig("mtp", 3), Parallel(tp=2), kv, QWEN36_FP8.quant)
    assert drafter is not None and drafter.missing is None and len(drafter.kv_layers) == 1
    blocks = sd.mamba_speculative_blocks(drafter, (0, 24, 0), v0=False)
    assert blocks == 3
    model = sd.with_draft_state(QWEN36_FP8, blocks)
    layers = range(QWEN36_FP8.num_layers)
    layout = build_layout(model, layers, tp=2, block_size=None, kv_bytes=1, model_bytes=2, extra=drafter.kv_layers)
    layout = replace(layout, speculative_blocks=blocks)
    assert (layout.block_size, len(layout.groups), layout.group_size) == (1600, 4, 17)
    assert layout.bytes_per_block == 27_852_800
    assert layout.blocks_per_request(262_144, 8192, prefix_caching=False) == 176
    assert layout.blocks_per_request(262_144, 8192, prefix_caching=True) == 179
    assert int(205 / 179 * 262_144) == 300_220
    plain = build_layout(QWEN36_FP8, layers, tp=2, block_size=None, kv_bytes=1, model_bytes=2)
    assert (plain.block_size, plain.group_size, plain.blocks_per_request(262_144, 8192, prefix_caching=False)) == (
        1568,
        16,
        171,
    )


def test_mamba_speculative_blocks_start_with_vllm_0_10_2_and_count_every_method() -> None:
    """MambaSpec.num_speculative_blocks first appears in v0.10.2; it is VllmConfig.num_speculative_tokens, so an
    n-gram drafter holds the extra blocks too; the V0 engine kept no such blocks."""
    ngram = sd.Drafter("ngram", 5)
    assert sd.mamba_speculative_blocks(ngram, (0, 10, 2), v0=False) == 5
    assert sd.mamba_speculative_blocks(ngram, (0, 10, 1), v0=False) == 0
    assert sd.mamba_speculative_blocks(ngram, (0, 33, 0), v0=True) == 0
    assert sd.mamba_speculative_blocks(None, (0, 33, 0), v0=False) == 0


# --- explain ----------------------------------------------------------------------------------------------------


def test_explain_counts_the_drafter_and_says_what_it_could_not_size() -> None:
    """With MTP the weights grow by the module (hand-checked above) and the pool by one KV layer; an n-gram drafter
    loads nothing; a DFlash drafter that is not in the catalog is named as not counted (approximate, not refused)."""
    gpu = resolve_gpu("rtx3090", load_gpus())
    base = EngineFlags(tensor_parallel_size=2, kv_cache_dtype="fp8", max_model_len=65536, max_num_seqs=2)
    plain = explain(QWEN36_FP8, gpu, base, V033)
    mtp = explain(QWEN36_FP8, gpu, replace(base, speculative_config=MTP3), V033)
    assert mtp.stage.weights - plain.stage.weights == 238_648_704
    said = mtp.issue(IssueKind.SPECULATIVE_DRAFTER)
    assert said is not None and said.needed_bytes == 238_648_704 and not said.fatal
    assert "0.22 GiB of weights, 1 KV-cache layer" in said.message and "3 more Mamba state blocks" in said.message
    assert plain.issue(IssueKind.SPECULATIVE_DRAFTER) is None
    assert mtp.stage.activation_peak - plain.stage.activation_peak == 2 * mtp.max_num_batched_tokens * 5120 * 2
    assert (mtp.stage.layout.group_size, plain.stage.layout.group_size) == (17, 16)
    assert mtp.blocks_per_request > plain.blocks_per_request
    ngram = explain(
        QWEN36_FP8, gpu, replace(base, speculative_config='{"method": "ngram", "num_speculative_tokens": 4}'), V033
    )
    assert ngram.stage.weights == plain.stage.weights and ngram.stage.layout.speculative_blocks == 4
    dflash = explain(QWEN36_FP8, gpu, replace(base, speculative_config='{"model": "z-lab/Qwen3.6-27B-DFlash"}'), V033)
    notes = [i.message for i in dflash.issues if i.kind is IssueKind.APPROXIMATE_MODEL]
    assert any("z-lab/Qwen3.6-27B-DFlash (dflash) is not in the catalog" in n for n in notes)


def test_a_named_draft_model_from_the_catalog_adds_its_weights_and_layers() -> None:
    """A draft model the catalog holds: its own weights at the draft TP and its attention layers in the pool."""
    target = resolve_model("Qwen/Qwen3.5-9B")
    draft = resolve_model("Qwen/Qwen3.5-9B")  # any catalog spec serves to check the bookkeeping
    gpu = resolve_gpu("h100", load_gpus())
    flags = EngineFlags(
        max_model_len=8192, speculative_config='{"model": "Qwen/Qwen3.5-9B", "num_speculative_tokens": 2}'
    )
    plain = explain(target, gpu, EngineFlags(max_model_len=8192), V033)
    with_draft = explain(target, gpu, flags, V033, draft=draft)
    assert with_draft.stage.weights > 1.9 * plain.stage.weights
    assert with_draft.stage.layout.bytes_per_token == 2 * plain.stage.layout.bytes_per_token


def test_the_proposer_buffers_by_hand() -> None:
    """hidden_states and inputs_embeds, [max_num_batched_tokens, hidden] in the model dtype: Qwen3.6-27B at 8,192
    tokens, 2 x 8,192 x 5,120 x 2 B = 167,772,160 bytes; an n-gram drafter has no proposer model."""
    kv = sd.KvShape(tp=2, block_size=16, kv_bytes=1, model_bytes=2)
    mtp = sd.drafter_of(QWEN36_FP8, sd.SpeculativeConfig("mtp", 3), Parallel(tp=2), kv, QWEN36_FP8.quant)
    assert mtp is not None and sd.proposer_buffer_bytes(mtp, 8192, 2) == 167_772_160
    ngram = sd.drafter_of(QWEN36_FP8, sd.SpeculativeConfig("ngram", 3), Parallel(tp=2), kv, None)
    assert ngram is not None and sd.proposer_buffer_bytes(ngram, 8192, 2) == 0


def test_deepseek_v4_mtp_layer_is_window_only_and_fills_a_padding_slot() -> None:
    """DeepSeek-V4's MTP layer is built with compress_ratio 1 (models/deepseek_v4/attention.py: the MTP layer is not
    in the compress-ratio list): one more 64-token sliding-window cache of 584-byte latents. V4-Flash's 43 window
    caches sit in two groups of 22 and 21 beside 62-member compressed groups; the 44th fills the second group's
    padding slot, so a block (the widest group's 1,002,240 bytes) and a request's blocks are unchanged."""
    v4 = resolve_model("deepseek-ai/DeepSeek-V4-Flash")
    assert v4.compressed_attention is not None and v4.mtp_layers == 1
    kv = sd.KvShape(tp=2, block_size=256, kv_bytes=1, model_bytes=2)
    drafter = sd.drafter_of(v4, sd.SpeculativeConfig("mtp"), Parallel(tp=2), kv, v4.quant)
    assert drafter is not None and drafter.missing is None
    assert [(x.kind, x.bytes_per_token, x.window) for x in drafter.kv_layers] == [("sliding", 584, 128)]
    plain = dsv4_layout(v4.compressed_attention, range(v4.num_layers))
    with_mtp = dsv4_layout(v4.compressed_attention, range(v4.num_layers), mtp=1)
    assert [g.layers for g in plain.groups][:2] == [22, 21]
    assert [g.layers for g in with_mtp.groups][:2] == [22, 22]
    assert with_mtp.bytes_per_block == plain.bytes_per_block == 1_002_240
    assert with_mtp.blocks_per_request(262_144, 8192, prefix_caching=False) == plain.blocks_per_request(
        262_144, 8192, prefix_caching=False
    )


def test_a_logged_speculative_config_is_read_from_the_non_default_args() -> None:
    """field5 K009's non-default args (vLLM 0.20.1, club-3090's dual recipe): the nested dict becomes the
    --speculative-config `explain --log` passes on, and its keys are not read as top-level arguments."""
    line = (
        "(APIServer pid=1) INFO [utils.py:233] non-default args: {'dtype': 'float16', 'max_model_len': 262144, "
        "'quantization': 'auto_round', 'tensor_parallel_size': 2, 'kv_cache_dtype': 'fp8_e5m2', "
        "'enable_prefix_caching': True, 'max_num_batched_tokens': 8192, 'max_num_seqs': 2, "
        "'enable_chunked_prefill': True, 'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}"
    )
    logged = read_startup_log(line)
    assert logged.option("speculative_config") == '{"method": "mtp", "num_speculative_tokens": 3}'
    assert logged.option("num_speculative_tokens") is None and logged.option("max_num_seqs") == "2"


def test_deepseek_mtp_eh_proj_is_a_plain_linear_whole_on_every_gpu() -> None:
    """deepseek_mtp.py: `self.eh_proj = nn.Linear(2H, H)`, not a vLLM parallel linear, so neither sharded nor
    quantized: DeepSeek-V3 (H 7,168, FP8 checkpoint) holds 7,168 x 14,336 x 2 B = 205,520,896 bytes of it on each of
    8 GPUs; Qwen3.5's fc is a ColumnParallelLinear (split by TP, above)."""
    v3 = resolve_model("deepseek-ai/DeepSeek-V3")
    ref = sd.mtp_reference_layer(v3)
    assert ref == v3.num_layers - 1 and v3.mlp_kinds[ref] == "moe"
    (fc,) = [t for t in sd._mtp_tensors(v3, ref) if t.module == "mtp.fc"]
    assert tensor_bytes(v3, fc, Parallel(tp=8), 2, v3.quant) == 205_520_896
