"""Weight bytes per GPU, tensor by tensor: TP sharding, PP stage ranges, quantization formats.

This is what vLLM logs as "Model loading took X GiB" (torch memory allocated by loading, after
process_weights_after_loading), including the rotary cos/sin cache buffer.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from recommender.memory.mxfp4 import Mxfp4Layout
from recommender.model.checkpoint_map import inventory_of
from recommender.model.quark import layer_scheme
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.model.tensor import Tensor
from recommender.model.tensors import model_tensors, padded_vocab
from recommender.units import cdiv

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4, "half": 2, "float": 4}


@dataclass(frozen=True, slots=True)
class Parallel:
    """How one replica is spread over GPUs."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    expert_parallel: bool = False


def pp_layer_ranges(num_layers: int, pp: int) -> list[range]:
    """vllm/distributed/utils.py:get_pp_indices: L//pp each, the remainder one each to the ranks before the last."""
    base = num_layers // pp
    sizes = [base] * pp
    remainder = num_layers % pp
    for i in range(2, remainder + 2):
        sizes[-i] += 1
    ranges, start = [], 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


def sharded_shape(t: Tensor, par: Parallel, vocab_padded: int) -> tuple[int, int, int]:
    """(rows, cols, count) held by one rank."""
    tp = par.tp
    if t.shard == "column":
        return cdiv(t.rows, tp), t.cols, t.count
    if t.shard == "head":
        return cdiv(t.rows, tp), t.cols, t.count
    if t.shard == "kv":
        per_head = t.rows // max(t.heads, 1)
        heads_rank = max(1, t.heads // tp)
        return heads_rank * per_head, t.cols, t.count
    if t.shard == "row":
        return t.rows, cdiv(t.cols, tp), t.count
    if t.shard == "vocab":
        return cdiv(vocab_padded, tp), t.cols, t.count
    if t.shard in ("expert_w13", "expert_w2", "expert_vec"):
        ranks = tp * par.dp
        if par.expert_parallel:
            return t.rows, t.cols, cdiv(t.count, ranks)
        if t.module.endswith(
            "w2_bias"
        ):  # [experts, hidden] whole on every rank (unquantized_fused_moe_method.py create_weights)
            return t.rows, t.cols, t.count
        if t.shard == "expert_w13" or t.shard == "expert_vec":
            return cdiv(t.rows, ranks), t.cols, t.count
        return t.rows, cdiv(t.cols, ranks), t.count
    return t.rows, t.cols, t.count


# vLLM's loaders fuse checkpoint modules (packed_modules_mapping); a quantization ignore list names the checkpoint's
# shards, so a fused module is kept unquantized when its shards are (quant_utils.py is_layer_skipped, 0.33).
FUSED_SHARDS = {
    "qkv_proj": ("q_proj", "k_proj", "v_proj"),
    "gate_up_proj": ("gate_proj", "up_proj"),
    "in_proj_qkvz": ("in_proj_qkv", "in_proj_z"),  # Qwen3.5's gated DeltaNet; Qwen3-Next stores it fused
    "in_proj_ba": ("in_proj_b", "in_proj_a"),
}


# a multimodal checkpoint names its text model's modules under a prefix (Llama 4, LLaVA: `language_model.model.`;
# Qwen2.5-VL/Qwen3-VL/Qwen3.5: `model.language_model.`); the tensor list here names them as a text model does
# (`model.layers.N...`, `lm_head`), so an ignore entry with the prefix names the same module
_MULTIMODAL_TEXT_PREFIX = ((re.compile(r"^(?:model\.language_model|language_model\.model)\."), "model."),)
_MULTIMODAL_HEAD_PREFIX = re.compile(r"^language_model\.(?=lm_head\b)")


def _text_model_name(pattern: str) -> str:
    """An ignore-list entry of a multimodal checkpoint as the text model's module name."""
    for rx, repl in _MULTIMODAL_TEXT_PREFIX:
        pattern = rx.sub(repl, pattern)
    return _MULTIMODAL_HEAD_PREFIX.sub("", pattern)


@lru_cache(maxsize=64)
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One compiled regex for a modules_to_not_convert / ignore list: a glob naming the module, a parent or a child
    path (the whole name), or a compressed-tensors `re:` entry (matched from the start, as re.match does)."""
    if not patterns:
        return None
    parts = []
    for p in patterns:
        if p.startswith("re:"):
            parts.append(f"(?:{p[3:]}).*")
            continue
        glob = fnmatch.translate(_text_model_name(p)).removesuffix("\\Z")
        parts.append(rf"(?:.*\.)?{glob}(?:\..*)?")
    return re.compile("(?:" + "|".join(f"(?:{x})" for x in parts) + r")\Z")


def _matches(module: str, patterns: tuple[str, ...]) -> bool:
    """True when `module` is named (exactly, by a parent path, or by a glob) in `patterns`, or is a fused module
    whose every checkpoint shard is."""
    rx = _matcher(patterns)
    if rx is None:
        return False
    module = _text_model_name(module)  # a checkpoint's own tensor names carry the multimodal prefix too
    if rx.match(module):
        return True
    parent, _, leaf = module.rpartition(".")
    shards = FUSED_SHARDS.get(leaf, ())
    return bool(shards) and all(rx.match(f"{parent}.{shard}" if parent else shard) for shard in shards)


# ModelOpt MIXED_PRECISION: the module kinds a `quantized_layers` key of layer N names, by the path segment the
# checkpoint gives them (Qwen3.5's gated DeltaNet is `linear_attn`, Nemotron-H's Mamba mixer `mixer`)
_MIXED_KINDS = {
    "experts": (".experts.",),  # mlp.experts.N (Qwen-MoE style), block_sparse_moe.experts.N (Mixtral, MiniMax)
    "shared_experts": (".shared_expert",),
    "attention": (".self_attn.",),
    "mixer": (".linear_attn.", ".mixer."),
    "mlp": (".mlp.",),
}


def _mixed_algo(q: QuantSpec, t: Tensor) -> str | None:
    """ModelOpt MIXED_PRECISION: the algorithm `quantized_layers` lists for this module, or None (left unquantized).

    vLLM (ModelOptMixedPrecisionConfig._resolve_quant_algo, 0.23 / 0.24) looks the module's own name up, then for a
    fused module its checkpoint shards (packed_modules_mapping: qkv_proj <- q/k/v_proj, in_proj_qkvz <- in_proj_qkv /
    in_proj_z, ...); a linear named by neither stays 16-bit (UnquantizedLinearMethod). So a dense or attention tensor
    takes an entry of its layer and kind whose last segment is its own name or one of its shards' (Qwen3.6-27B's
    `in_proj_ba` is not listed beside the FP8 `in_proj_qkv` / `in_proj_z`: bfloat16). RoutedExperts are found by
    prefix (any key under the experts' parent), so an expert tensor takes any entry of its layer's experts.
    ParallelLMHead takes the linear method too: a `lm_head` key (`language_model.lm_head` found as `lm_head`,
    _quantized_layer_prefix_candidates) quantizes the output head.
    """
    if t.group == "lm_head":
        return next((algo for name, algo in q.mixed if _text_model_name(name) == "lm_head"), None)
    if t.layer is None:
        return None
    kinds = _MIXED_KINDS.get(t.group)
    if kinds is None:
        return None
    leaf = t.module.rsplit(".", 1)[-1]
    names = (leaf, *FUSED_SHARDS.get(leaf, ()))
    for name, algo in q.mixed:
        if name.startswith("mtp") or f"layers.{t.layer}." not in name:
            continue
        if not any(kind in name + "." for kind in kinds):
            continue
        if t.group == "experts" or name.rsplit(".", 1)[-1] in names:
            return algo
    return None


def quantized_bytes(q: QuantSpec, rows: int, cols: int, method: str | None = None) -> int:
    """Bytes of one quantized [rows, cols] linear weight with its scales / zero points."""
    n = rows * cols
    m = method or q.method
    if m in ("fp8", "FP8"):
        if q.block:
            scales = cdiv(rows, q.block[0]) * cdiv(cols, q.block[1]) * 4
        elif q.group_size == -1:
            scales = rows * 4
        else:
            scales = 4 + (4 if q.static_input_scales else 0)
        return n + scales
    if m == "int8":
        return n + rows * 4
    if m in ("gptq", "awq"):
        groups = 1 if q.group_size <= 0 else cdiv(cols, q.group_size)
        packed = n * q.bits // 8
        scales = groups * rows * 2
        zeros = groups * rows * q.bits // 8 if q.has_zero_points else 0
        return packed + scales + zeros
    if m in ("nvfp4", "NVFP4", "W4A16_NVFP4"):
        return n // 2 + n // 16 + 8
    if m == "mxfp4":
        return n // 2 + n // 32
    if m in ("MXFP8", "mxfp8"):  # ModelOpt MXFP8 (whole model or MIXED_PRECISION layers): float8 weight, one
        return n + rows * cdiv(cols, 32)  # uint8 (e8m0) scale per 32 inputs: kMxfp8StaticScale, GroupShape(1, 32)
    if m.startswith(("ocp-mx", "fp8-")):
        return _quark_bytes(m, rows, cols, q.bits)
    if m == "bitsandbytes" and q.bits == 8:
        return n + rows * 4  # LLM.int8(): int8 weight and one float32 scale (SCB) per output row
    if m == "bitsandbytes":
        blocks = cdiv(n, 64)
        # Double quantization keeps one uint8 absmax per block and a float32 absmax per 256 of them (the
        # release decides whether it is dequantized at load: memory/precision.py resolve_precision).
        absmax = blocks + cdiv(blocks, 256) * 4 if q.double_quant else blocks * 4
        return n * q.bits // 8 + absmax
    raise ValueError(f"unknown quantization method {m}")


def _quark_bytes(method: str, rows: int, cols: int, bits: int) -> int:
    """Quark's schemes (model/quark.py scheme_key): OCP MX packs fp4 two to a byte / fp6 four to three bytes with a
    uint8 e8m0 scale [N, K // 32] (quark_ocp_mx.py create_weights); a layer_quant_config FP8 layer has float32
    per-channel row scales, or one tensor scale (and an input scale when static)."""
    if method.startswith("ocp-mx"):
        width = int(method[-1]) if method != "ocp-mx" else bits
        return rows * (cols * width // 8) + rows * (cols // 32)
    scales = rows * 4 if method == "fp8-channel" else 4 + (4 if method.endswith("static") else 0)
    return rows * cols + scales


def _mxfp4_expert_bytes(s: ModelSpec, t: Tensor, par: Parallel, dtype_bytes: int, layout: Mxfp4Layout) -> int:
    """An MXFP4 expert tensor (w13, w2 or their biases) as the backend stores it on one rank (memory/mxfp4.py).

    The backend pads the hidden and the per-partition intermediate size before creating the weights
    (RoutedExperts.maybe_roundup_sizes), so padding applies after TP sharding; with expert parallelism
    each rank holds whole experts.
    """
    assert s.moe is not None
    m = s.moe
    ranks = par.tp * par.dp
    experts = cdiv(m.num_experts, ranks) if par.expert_parallel else m.num_experts
    inter = m.expert_intermediate if par.expert_parallel else cdiv(m.expert_intermediate, ranks)
    h, i = layout.padded(s.hidden_size, inter)
    up = 2 * i if m.gated else i
    name = t.module.rsplit(".", 1)[-1]
    if name == "w13":
        return experts * layout.weight_bytes(up, h)
    if name == "w2":
        return experts * layout.weight_bytes(h, i)
    return experts * (up if name == "w13_bias" else h) * (layout.bias_bytes or dtype_bytes)


def _quark_mx4_experts(quant: QuantSpec, t: Tensor) -> bool:
    """Routed experts a Quark checkpoint stores in MXFP4 (the global scheme, or their layer_quant_config one)."""
    if quant.checkpoint_format != "quark" or t.group != "experts":
        return False
    own = layer_scheme(quant.mixed, t.module, (), experts=True) if quant.mixed else None
    return own == "ocp-mx4" or (own is None and quant.method == "ocp-mx" and quant.bits == 4)


def tensor_bytes(
    s: ModelSpec,
    t: Tensor,
    par: Parallel,
    dtype_bytes: int,
    quant: QuantSpec | None,
    mxfp4: Mxfp4Layout | None = None,
) -> int:
    """Bytes of one tensor on one rank (`mxfp4`: the MXFP4 MoE backend's layout, when known)."""
    mxfp4_experts = quant is not None and (
        "mxfp4" in (quant.method, quant.expert_method) or _quark_mx4_experts(quant, t)
    )
    if mxfp4 is not None and mxfp4_experts and t.group == "experts":
        if t.module.rsplit(".", 1)[-1] in ("w13", "w2", "w13_bias", "w2_bias"):
            return _mxfp4_expert_bytes(s, t, par, dtype_bytes, mxfp4)
    rows, cols, count = sharded_shape(t, par, padded_vocab(s.vocab_size))
    plain = rows * cols * count * dtype_bytes
    if quant is None:
        return plain
    if t.module == "lm_head" and quant.lm_head_quantized:
        # GPTQ/AWQ `lm_head: true`: ParallelLMHead takes the linear method (get_quant_method in gptq_utils.py and
        # auto_awq.py); the input embedding never does. Its [vocab/TP, hidden] shard is quantized like any linear.
        return plain if _matches(t.module, quant.keep_unquantized) else quantized_bytes(quant, rows, cols)
    if t.group == "lm_head" and quant.method == "modelopt-mixed":
        # ModelOpt MIXED_PRECISION lists the head in quantized_layers when it is quantized (nvidia/Qwen3.6-27B-NVFP4:
        # lm_head W4A16_NVFP4); ParallelLMHead then takes that linear method (modelopt.py get_quant_method).
        head_algo = None if _matches(t.module, quant.keep_unquantized) else _mixed_algo(quant, t)
        return plain if head_algo is None else count * quantized_bytes(quant, rows, cols, head_algo)
    if not t.linear:
        return plain
    if _matches(t.module, quant.keep_unquantized):
        return plain
    if quant.method in ("mxfp4", "experts_int8") and t.group != "experts":
        return plain
    method: str | None = quant.expert_method if t.group == "experts" else None
    if quant.checkpoint_format == "quark" and quant.mixed:
        leaf = t.module.rsplit(".", 1)[-1]
        method = layer_scheme(quant.mixed, t.module, FUSED_SHARDS.get(leaf, ()), t.group == "experts")
    if quant.method == "modelopt-mixed":
        method = _mixed_algo(quant, t)
        if method is None:
            return plain
    return count * quantized_bytes(quant, rows, cols, method)


def weight_tensors(s: ModelSpec) -> list[Tensor] | tuple[Tensor, ...]:
    """The checkpoint's own tensors when its headers were read and every role is known, else the formula's."""
    if s.checkpoint_tensors:
        inventory = inventory_of(s)
        if inventory.usable:
            return inventory.tensors
    return model_tensors(s)


def stage_tensors(s: ModelSpec, par: Parallel, stage: int, *, skip_towers: bool = False) -> list[Tensor]:
    """Tensors held by pipeline stage `stage`: its layers, embedding on the first, norm + lm_head on the last, the
    multimodal towers on the first unless vLLM skips them (`skip_towers`)."""
    layers = pp_layer_ranges(s.num_layers, par.pp)[stage]
    first, last = stage == 0, stage == par.pp - 1
    held = []
    for t in weight_tensors(s):
        if not t.loaded or (s.pooling and t.group == "lm_head"):  # the pooling runner has no LM head
            continue
        if t.layer is not None:
            if t.layer in layers:
                held.append(t)
        elif t.group == "embedding":
            if first or (last and s.tie_word_embeddings):
                held.append(t)
        elif t.group == "vision":
            if first and not skip_towers:
                held.append(t)
        elif last:
            held.append(t)
    return held


def rotary_cache_bytes(s: ModelSpec, dtype_bytes: int) -> int:
    """RotaryEmbedding.cos_sin_cache: [max_position, rotary_dim] in the model dtype, one shared buffer."""
    if s.rotary_dim <= 0 or not any(k in ("full", "sliding", "chunked", "mla") for k in s.layer_kinds):
        return 0
    return s.rope_max_position * s.rotary_dim * dtype_bytes


# vLLM 0.5.1 to 0.5.4 built a GemmaRotaryEmbedding in every Gemma and Gemma-2 attention layer (gemma.py, gemma2.py:
# "TODO(woosuk): Use the `get_rope` interface"), each registering its own cos/sin cache [max_position, head_dim] in the
# model dtype on every GPU, where get_rope shares one per model; vllm#7638 ("[Misc] Remove Gemma RoPE", 0.5.5) moved
# both onto get_rope. gemma-2-9b at TP 8 on 0.5.4 (field4 J001): 41 more caches of 8,192 x 256 x 2 B, +0.16 GiB a GPU
# (2.3463 GiB logged; 2.16 predicted with one cache, 2.32 with 42; the same model at TP 1 on 0.19, F006, is exact).
PER_LAYER_ROPE_ARCHITECTURES = ("GemmaForCausalLM", "Gemma2ForCausalLM")
PER_LAYER_ROPE_RELEASES = ((0, 5, 1), (0, 5, 5))  # (major, minor, patch): from, fixed in
# MRotaryEmbedding (get_rope's choice when the rope parameters carry `mrope_section`: Qwen2-VL, Qwen2.5/3-VL, Qwen3.5)
# builds its cos/sin cache over 4 x max_position rows ("In Qwen2.5-VL, the maximum index value is related to the
# duration of the input video. We enlarge max_position_embeddings to 4 times", rotary_embedding/mrope.py
# `cache_max_position_num = max_position_embeddings * 4`), from the Qwen2.5-VL pull request (vllm#12604, v0.7.2):
# Qwen3-VL-30B-A3B (262,144 x 128 x 2 B x 4 = 256 MiB, where one cache is 64) logs 0.21 GiB more weights a GPU at TP 4
# (field16 X004: 14.7708) and 0.29 at TP 2 (field6 L013) than one cache leaves.
MROPE_ENLARGED = (0, 7, 2)
MROPE_ROWS = 4


def rotary_caches_on_stage(s: ModelSpec, release: tuple[int, int, int], layers_on_stage: int) -> int:
    """How many cos/sin caches' worth one GPU holds: one shared buffer, one per attention layer where the `release`
    (major, minor, patch) built them per layer, or one buffer four caches long (an MRotaryEmbedding from 0.7.2)."""
    first, fixed = PER_LAYER_ROPE_RELEASES
    if s.architecture in PER_LAYER_ROPE_ARCHITECTURES and first <= release < fixed:
        return max(1, layers_on_stage)
    if s.rope_mrope and release >= MROPE_ENLARGED:
        return MROPE_ROWS
    return 1


def weight_bytes_per_gpu(
    s: ModelSpec,
    par: Parallel,
    *,
    dtype_bytes: int,
    quant: QuantSpec | None,
    stage: int = 0,
    cpu_offload_bytes: int = 0,
    mxfp4: Mxfp4Layout | None = None,
    skip_towers: bool = False,
    rotary_caches: int = 1,
    towers_replicated: bool = False,
    layer_extra: tuple[int, ...] = (),
) -> int:
    """Bytes of weights one GPU of pipeline stage `stage` holds ("Model loading took").

    `--cpu-offload-gb` moves decoder-layer parameters to pinned CPU memory one whole tensor at a time, in layer
    order, while less than the limit has been moved (vllm/model_executor/models/utils.py maybe_offload_to_cpu),
    so the last tensor can overshoot the limit. `mxfp4`: how this GPU's MXFP4 MoE backend stores the experts
    (None: the checkpoint's own packing). `skip_towers`: --language-model-only or every modality limited to 0.
    `rotary_caches`: the cos/sin caches the GPU holds (rotary_caches_on_stage). `towers_replicated`:
    --mm-encoder-tp-mode data, the towers' linears built with disable_tp (whole on every rank). `layer_extra`: bytes
    process_weights_after_loading adds beside decoder layer i (indexed by layer; memory/mla_absorption.py), built on
    the GPU only for a layer none of whose tensors was offloaded.
    """
    total = 0
    offloaded = 0
    on_cpu: set[int] = set()
    whole = replace(par, tp=1, dp=1, expert_parallel=False)
    for t in stage_tensors(s, par, stage, skip_towers=skip_towers):
        size = tensor_bytes(
            s, t, whole if towers_replicated and t.group == "vision" else par, dtype_bytes, quant, mxfp4
        )
        if t.layer is not None and offloaded < cpu_offload_bytes:
            offloaded += size
            on_cpu.add(t.layer)
            continue
        total += size
    layers = pp_layer_ranges(s.num_layers, par.pp)[stage]
    total += sum(layer_extra[i] for i in layers if i < len(layer_extra) and i not in on_cpu)
    return total + rotary_caches * rotary_cache_bytes(s, dtype_bytes)
