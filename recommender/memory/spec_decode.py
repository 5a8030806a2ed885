"""Speculative decoding at startup: what a drafter adds to vLLM's memory (pure).

`--speculative-config` (a JSON object; vLLM 0.8.2+), its `--spec-method / --spec-model / --spec-tokens` shorthands and
the flags that preceded it (`--speculative-model`, `--num-speculative-tokens`, removed in 0.8.3) describe a drafter.
What vLLM 0.33 allocates for it, from its source (/work/vllm-src/vllm):

- method (config/speculative.py SpeculativeConfig.__post_init__): `*_mtp` names are "mtp"; with no method a model
  named like `...eagle-...` is "eagle", `...eagle3...` "eagle3", `...dflash...` "dflash", `...dspark...` "dspark",
  `ngram` "ngram", anything else "draft_model". n-gram and suffix decoding load no model: nothing is added.
- weights (v1/worker/gpu_model_runner.py load_model): the drafter is loaded inside the same DeviceMemoryProfiler as
  the target, so "Model loading took" includes it. An MTP drafter (model_executor/models/*_mtp.py) holds
  num_nextn_predict_layers (Qwen3.5/3.6: mtp_num_hidden_layers) decoder layers shaped like the target's, the
  2H -> H projection (eh_proj / fc) and its norms; its embedding and lm_head are deleted and replaced by the
  target's (v1/spec_decode/llm_base_proposer.py _maybe_share_embeddings / _maybe_share_lm_head: "Detected MTP model.
  Sharing ..."), and the current-allocation profiler (platforms/cuda.py get_current_memory_usage) does not see them.
  The checkpoint's `mtp.*` tensors follow the target's quantization unless its ignore list names them (Qwen's FP8
  checkpoints keep `mtp.fc` in 16 bit). An EAGLE / draft model's weights are its own (a catalog spec when named).
- KV cache: the drafter's attention layers register in the same forward context and join vLLM's KV-cache groups by
  kind (v1/core/kv_cache_planning.py: "gpt-oss-20b + eagle, with 12 sw + 13 full"): Qwen3.6-27B's 16 full layers
  become 17 beside 48 DeltaNet layers, so every group holds 17 layer slots (kv_cache.py _grouped).
- Mamba state (model_executor/layers/mamba/abstract.py get_kv_cache_spec): MambaSpec.num_speculative_blocks =
  num_speculative_tokens, so one request holds 1 + k state blocks per Mamba group (2 + k with prefix caching's
  align mode; v1/kv_cache_interface.py max_memory_usage_bytes), from vLLM 0.10.2 (the first tag whose MambaSpec has
  the field, li2haipeng/vllm mirror).
- num_speculative_tokens defaults to the drafter's n_predict (the MTP layer count).

DeepSeek-V4's MTP layer registers a sliding-window cache only (models/deepseek_v4/attention.py: "MTP layer is not
included in the compress ratio list", compress_ratio 1), packed with the others (memory/kv_dsv4.py).
Not modelled: the drafter's share of the profiling run and of CUDA-graph capture (one or a few layers beside the
target's). A drafter that is neither MTP nor found in the
catalog is counted as nothing and the answer says so (approximate, not refused).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from recommender.errors import FlagError
from recommender.memory.kv_cache import DS_MLA_TOKEN_BYTES, LayerKv, layer_kv
from recommender.memory.weights import Parallel, tensor_bytes, weight_bytes_per_gpu
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.model.tensor import Tensor
from recommender.model.tensors import model_tensors

# config/speculative.py MTPModelTypes (0.33): every name is read as "mtp"
MTP_METHODS = frozenset(
    {
        "mtp",
        "deepseek_mtp",
        "dots3_note_mtp",
        "mimo_mtp",
        "mimo_v2_mtp",
        "glm4_moe_mtp",
        "glm4_moe_lite_mtp",
        "glm_ocr_mtp",
        "ernie_mtp",
        "nemotron_h_mtp",
        "exaone_moe_mtp",
        "exaone4_5_mtp",
        "qwen3_next_mtp",
        "qwen4_exp_mtp",
        "qwen3_5_mtp",
        "longcat_flash_mtp",
        "bailing_hybrid_v3_mtp",
        "minimax_m3_mtp",
        "bailing_hybrid_mtp",
        "kimi_k3_mtp",
        "pangu_ultra_moe_mtp",
        "step3p5_mtp",
        "step5_mtp",
        "hy_v3_mtp",
        "hy_v4_mtp",
        "gemma4_mtp",
        "inkling_mtp",
        "glm5_next_mtp",
    }
)
NO_MODEL_METHODS = frozenset({"ngram", "ngram_gpu", "suffix"})  # no drafter weights, no KV layers
# model-based drafters; medusa and mlp_speculator were methods of the releases before 0.11 (not sized here)
DRAFT_MODEL_METHODS = frozenset(
    {"eagle", "eagle3", "dflash", "dspark", "draft_model", "extract_hidden_states", "medusa", "mlp_speculator"}
)
METHODS = MTP_METHODS | NO_MODEL_METHODS | DRAFT_MODEL_METHODS | {"custom_class"}
ATTENTION_KINDS = ("full", "mla", "sliding", "chunked")
SHARDED_FC_MODEL_TYPES = ("qwen3_5", "qwen3_next", "exaone", "nemotron_h")  # *_mtp.py: ColumnParallelLinear fc


@dataclass(frozen=True, slots=True)
class SpeculativeConfig:
    """The drafter a command line asks for (method resolved as vLLM does; tokens None: the drafter's default)."""

    method: str
    num_speculative_tokens: int | None = None
    model: str | None = None
    draft_tensor_parallel_size: int | None = None


def resolve_method(method: str | None, model: str | None) -> str:
    """SpeculativeConfig.__post_init__ / the draft-model branch: the method vLLM runs."""
    if method is not None:
        return "mtp" if method in MTP_METHODS else method
    name = (model or "").lower()
    for needle, found in (("eagle-", "eagle"), ("eagle3", "eagle3"), ("dflash", "dflash"), ("dspark", "dspark")):
        if needle in name:
            return found
    return "ngram" if name in ("ngram", "[ngram]") else "draft_model"


def _positive(data: dict[str, object], key: str, text: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise FlagError(f"--speculative-config {text!r}: {key} must be a positive integer, got {value!r}")
    return value


def parse_speculative_config(text: str | None) -> SpeculativeConfig | None:
    """--speculative-config as vLLM reads it: a JSON object (null / None / {}: no speculative decoding)."""
    if text is None or text.strip() in ("", "null", "None", "{}"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        raise FlagError(f'--speculative-config {text!r}: expected a JSON object like \'{{"method": "mtp"}}\'') from None
    if not isinstance(data, dict):
        raise FlagError(f'--speculative-config {text!r}: expected a JSON object like \'{{"method": "mtp"}}\'')
    method, model = data.get("method"), data.get("model")
    if method is not None and (not isinstance(method, str) or method not in METHODS):
        raise FlagError(f"--speculative-config: unsupported speculative method {method!r}")
    if model is not None and not isinstance(model, str):
        raise FlagError(f"--speculative-config: model must be a string, got {model!r}")
    if method is None and model is None:
        raise FlagError("--speculative-config: give a method (mtp, eagle3, ngram, ...) or a draft model")
    return SpeculativeConfig(
        resolve_method(method, model),
        _positive(data, "num_speculative_tokens", text),
        model,
        _positive(data, "draft_tensor_parallel_size", text),
    )


@dataclass(frozen=True, slots=True)
class Drafter:
    """What the drafter adds on each GPU of the last pipeline stage."""

    method: str
    num_speculative_tokens: int
    weight_bytes: int = 0
    kv_layers: tuple[LayerKv, ...] = ()  # its attention layers, joining the KV-cache groups
    missing: str | None = None  # what could not be sized (the answer is then approximate)
    hidden: int = 0  # the proposer's hidden width (its persistent per-token buffers); 0: no proposer model


def mtp_reference_layer(model: ModelSpec) -> int | None:
    """The target layer an MTP layer is shaped like: the last attention layer (an MoE one when the model routes)."""
    attention = [i for i, kind in enumerate(model.layer_kinds) if kind in ATTENTION_KINDS]
    routed = [i for i in attention if model.mlp_kinds[i] == "moe"]
    candidates = routed or attention
    return candidates[-1] if candidates else None


def _mtp_tensors(model: ModelSpec, ref: int) -> list[Tensor]:
    """One MTP layer's tensors, named as the checkpoint names them (`mtp.layers.0...`, so an ignore list that
    names the MTP module keeps it in 16 bit), plus the 2H -> H projection and its two input norms."""
    prefix = f"model.layers.{ref}."
    layer = [
        replace(t, module="mtp.layers.0." + t.module.removeprefix(prefix), layer=None)
        for t in model_tensors(model)
        if t.layer == ref and t.loaded
    ]
    h = model.hidden_size
    # Qwen3.5 / Qwen3-Next / EXAONE / Nemotron-H: a ColumnParallelLinear fc under the checkpoint's quantization;
    # DeepSeek, GLM, Step, Hunyuan and the others: eh_proj is a plain nn.Linear, whole on every GPU in the model dtype
    sharded = model.model_type.startswith(SHARDED_FC_MODEL_TYPES)
    fc = Tensor("mtp.fc", "mlp", h, 2 * h, "column" if sharded else "replicated", None, linear=sharded)
    norms = [Tensor(f"mtp.{n}", "norms", h, 1, "replicated", None, linear=False) for n in ("enorm", "hnorm", "norm")]
    return [*layer, fc, *norms]


def mtp_weight_bytes(model: ModelSpec, par: Parallel, *, dtype_bytes: int, quant: QuantSpec | None) -> int:
    """Bytes of the MTP module on one GPU (0 when the model has no MTP layer or no attention layer)."""
    ref = mtp_reference_layer(model)
    if not model.mtp_layers or ref is None:
        return 0
    per_layer = sum(tensor_bytes(model, t, par, dtype_bytes, quant) for t in _mtp_tensors(model, ref))
    return model.mtp_layers * per_layer


@dataclass(frozen=True, slots=True)
class KvShape:
    """How the target's KV cache is laid out (for the drafter's layers): TP, block size, KV and model bytes."""

    tp: int
    block_size: int
    kv_bytes: int
    model_bytes: int


def mtp_drafter(
    model: ModelSpec, cfg: SpeculativeConfig, par: Parallel, kv: KvShape, quant: QuantSpec | None
) -> Drafter:
    """An MTP drafter: the model's own MTP layers (weights and one KV layer each)."""
    ref = mtp_reference_layer(model)
    k = cfg.num_speculative_tokens or max(1, model.mtp_layers)
    if not model.mtp_layers or ref is None:
        missing = f"{model.name} declares no MTP layers: the MTP drafter is not counted"
        return Drafter("mtp", k, missing=missing, hidden=model.hidden_size)
    weights = mtp_weight_bytes(model, par, dtype_bytes=kv.model_bytes, quant=quant)
    if (c := model.compressed_attention) is not None:  # DeepSeek-V4: its MTP layers are window-only (ratio 1)
        window = LayerKv("sliding", kv.block_size * DS_MLA_TOKEN_BYTES, DS_MLA_TOKEN_BYTES, c.window)
        return Drafter("mtp", k, weights, (window,) * model.mtp_layers, hidden=model.hidden_size)
    one = layer_kv(model, ref, tp=kv.tp, block_size=kv.block_size, kv_bytes=kv.kv_bytes, model_bytes=kv.model_bytes)
    layers = (one,) * model.mtp_layers if one is not None else ()
    return Drafter("mtp", k, weights, layers, hidden=model.hidden_size)


def model_drafter(
    model: ModelSpec, cfg: SpeculativeConfig, draft: ModelSpec | None, par: Parallel, kv: KvShape
) -> Drafter:
    """An EAGLE / DFlash / draft model: its own weights (at the draft TP, in its own quantization) and its attention
    layers, when its spec is known; else nothing counted, and said. Its proposer's buffers are as wide as the
    target's hidden state when the draft is not known."""
    k = cfg.num_speculative_tokens or 1
    if draft is None:
        name = cfg.model or "the drafter"
        missing = f"{name} ({cfg.method}) is not in the catalog: its weights and KV layers are not counted"
        return Drafter(cfg.method, k, missing=missing, hidden=model.hidden_size)
    tp = cfg.draft_tensor_parallel_size or par.tp
    weights = weight_bytes_per_gpu(draft, Parallel(tp=tp), dtype_bytes=kv.model_bytes, quant=draft.quant)
    shape = {"tp": tp, "block_size": kv.block_size, "kv_bytes": kv.kv_bytes, "model_bytes": kv.model_bytes}
    layers = tuple(x for i in range(draft.num_layers) if (x := layer_kv(draft, i, **shape)) is not None)
    return Drafter(cfg.method, k, weights, layers, hidden=draft.hidden_size)


def drafter_of(
    model: ModelSpec,
    cfg: SpeculativeConfig | None,
    par: Parallel,
    kv: KvShape,
    quant: QuantSpec | None,
    draft: ModelSpec | None = None,
) -> Drafter | None:
    """What `cfg` adds on each GPU (None without speculative decoding)."""
    if cfg is None:
        return None
    if cfg.method in NO_MODEL_METHODS:
        return Drafter(cfg.method, cfg.num_speculative_tokens or 1)
    if cfg.method == "mtp":
        return mtp_drafter(model, cfg, par, kv, quant)
    if cfg.method == "custom_class":
        return Drafter(cfg.method, cfg.num_speculative_tokens or 1, missing="a custom proposer class is not sized")
    return model_drafter(model, cfg, draft, par, kv)


MAMBA_SPECULATIVE_BLOCKS_FROM = (0, 10, 2)  # the first tag whose MambaSpec has num_speculative_blocks


def mamba_speculative_blocks(drafter: Drafter | None, version: tuple[int, int, int], *, v0: bool) -> int:
    """MambaSpec.num_speculative_blocks: the draft tokens' extra state blocks per request (V1, from 0.10.2; every
    method, n-gram included: VllmConfig.num_speculative_tokens)."""
    if drafter is None or v0 or version < MAMBA_SPECULATIVE_BLOCKS_FROM:
        return 0
    return drafter.num_speculative_tokens


def with_draft_state(model: ModelSpec, num_spec: int) -> ModelSpec:
    """The model as its KV-cache spec sees it with `num_spec` draft tokens: a GDN / KDA / Mamba2 conv state keeps
    conv_kernel - 1 + num_spec columns (mamba_utils.py MambaStateShapeCalculator gated_delta_net_state_shape,
    kda_state_shape, mamba2_state_shape: `conv_kernel - 1 + num_spec`; Mamba1's has no such term). Qwen3.6-27B at
    TP 2 with 3 draft tokens: 5,120 x (3 + 3) x 2 bytes = 61,440 conv bytes beside the 1,572,864-byte SSM state,
    so the attention block grows from 1,568 to 1,600 tokens (field4 J052 logs 205 blocks of that size)."""
    if num_spec <= 0:
        return model
    la, mamba = model.linear_attention, model.mamba
    return replace(
        model,
        linear_attention=replace(la, conv_kernel=la.conv_kernel + num_spec) if la is not None else None,
        mamba=replace(mamba, conv_kernel=mamba.conv_kernel + num_spec) if mamba and mamba.version == 2 else mamba,
    )


def proposer_buffer_bytes(drafter: Drafter, max_num_batched_tokens: int, dtype_bytes: int) -> int:
    """The persistent buffers a model-based proposer allocates when the runner is built, before the profiling run
    (v1/spec_decode/llm_base_proposer.py __init__): hidden_states and inputs_embeds, [max_num_batched_tokens,
    hidden] each in the model dtype (the int32/int64 index buffers beside them are ignored). Qwen3.6-27B at 8,192
    tokens: 2 x 8,192 x 5,120 x 2 B = 167,772,160 bytes (160 MiB)."""
    return 2 * max_num_batched_tokens * drafter.hidden * dtype_bytes


def drafter_summary(drafter: Drafter, mamba_blocks: int) -> str | None:
    """What the drafter adds, in one line for explain and check (None when it adds nothing that is counted)."""
    parts = [f"{drafter.weight_bytes / 2**30:.2f} GiB of weights"] if drafter.weight_bytes else []
    if drafter.kv_layers:
        n = len(drafter.kv_layers)
        parts.append(f"{n} KV-cache layer{'s' if n > 1 else ''} in the groups")
    if drafter.hidden:
        parts.append("its proposer's per-token buffers in the profile")
    if mamba_blocks:
        parts.append(f"{mamba_blocks} more Mamba state block{'s' if mamba_blocks > 1 else ''} per request")
    if not parts:
        return None
    tokens = f"{drafter.num_speculative_tokens} draft token{'s' if drafter.num_speculative_tokens > 1 else ''}"
    return f"speculative decoding ({drafter.method}, {tokens}) counted on the last stage's GPUs: " + ", ".join(parts)
