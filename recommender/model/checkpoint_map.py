"""The tensors vLLM allocates, read from the checkpoint's own tensor list (safetensors headers), pure.

Every header entry is mapped to the parameter vLLM loads it into, in the same `Tensor` terms the architecture
formula (model/tensors.py) uses, so that memory/weights.py applies one set of rules to either list:
- the parallel style comes from the module's name, as vLLM's model classes build it (q/k/v and gate/up column
  parallel with K/V split by KV head, o/down row parallel, embeddings and lm_head vocab parallel, routers and
  norms replicated, experts stacked per layer and split by TP or EP);
- a quantized module's logical [out, in] shape is recovered from its packed form (GPTQ qweight [in x bits/32, out],
  AWQ qweight [in, out x bits/32], compressed-tensors weight_packed, ModelOpt NVFP4 uint8 [out, in/2], MXFP4
  blocks [out, in/32, 16], FP8/INT8 weight [out, in]); its scales, zero points and g_idx are the quantization
  method's own, which memory/weights.py `quantized_bytes` sizes as vLLM keeps them after loading (Marlin drops
  g_idx without act-order and symmetric zero points), so they are not counted twice;
- what vLLM's loader skips is dropped: layers past num_hidden_layers and `mtp.` modules (multi-token prediction,
  loaded only for speculative decoding), rotary inv_freq buffers, a tied lm_head, the K/V of KV-sharing layers;
- what vLLM allocates but the checkpoint does not ship (Gemma-4's V filled from K) comes from the formula.
A tensor whose role is unknown is counted whole on every GPU in the model dtype (the conservative reading) and
named; when such tensors are more than 1% of the checkpoint, or when the headers cannot give the shapes
(bitsandbytes stores its 4-bit weights flattened), the whole model falls back to the architecture formula.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from math import prod

from recommender.model.spec import CheckpointTensor, ModelSpec, QuantSpec
from recommender.model.tensor import Group, Shard, Tensor
from recommender.model.tensors import model_tensors

UNKNOWN_SHARE = 0.01  # unknown tensors above this share of the checkpoint bytes: the formula is used instead

_DTYPE_BYTES = {"F64": 8, "F32": 4, "I64": 8, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2}
_QUANT_AUX = frozenset(
    {
        "qzeros",
        "scales",
        "g_idx",
        "weight_scale",
        "weight_scale_inv",
        "weight_scale_2",
        "input_scale",
        "weight_zero_point",
        "weight_g_idx",
        "weight_shape",
        "weight_global_scale",
        "input_global_scale",
        "input_zero_point",
        "SCB",
        "weight_format",
        "k_scale",
        "v_scale",
        "q_scale",
        "prob_scale",
        "mx_scales",
    }
)
_MAIN = ("weight", "qweight", "weight_packed", "blocks", "")
_PARAMS = frozenset({*_MAIN, "bias", "e_score_correction_bias", *_QUANT_AUX}) - {""}
_BNB = re.compile(r"\.weight\.(?:absmax|quant_map|nested_absmax|nested_quant_map|quant_state\..*)$")
_PREFIXES = (
    ("model.language_model.", "model."),
    ("language_model.model.", "model."),
    ("language_model.lm_head.", "lm_head."),
    ("language_model.", "model."),
)
_VISION = re.compile(
    r"^(?:model\.)?(?:visual|vision_tower|vision_model|vision_encoder|vision|multi_modal_projector|mm_projector|"
    r"audio_tower|audio_model|embed_vision|embed_audio|image_newline|vision_embed_tokens)(?:\.|$)"
)
_LAYER = re.compile(r"^(?:[\w.]*?\.)?(?:layers|h|blocks)\.(\d+)\.(.+)$")
_EXPERT = re.compile(r"^(.*\.experts)\.(\d+)\.(\w+)$")
_STACKED = re.compile(r"^(.*\.experts)\.(gate_up_proj|down_proj|w13_weight|w2_weight)$")

_Q = frozenset({"q_proj", "wq", "query", "q"})
_KV = frozenset({"k_proj", "v_proj", "wk", "wv", "key", "value", "k", "v"})
_QKV = frozenset({"qkv_proj", "query_key_value", "c_attn", "Wqkv", "W_pack", "qkv"})
_ROW = frozenset(
    {"o_proj", "out_proj", "dense", "down_proj", "fc2", "w2", "c_proj", "dense_4h_to_h", "wo", "proj", "x_proj"}
    | {"linear_fc2", "attn_out"}
)
_COLUMN = frozenset(
    {"gate_proj", "up_proj", "gate_up_proj", "fc1", "w1", "w3", "c_fc", "dense_h_to_4h", "q_b_proj", "kv_b_proj"}
    | {"in_proj", "in_proj_qkvz", "in_proj_ba", "in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "dt_proj"}
    | {"linear_fc1", "f_b_proj", "g_b_proj", "b_proj", "qkv_proj"}
)
_COLUMN_VECTORS = frozenset({"conv1d", "A_log", "D", "dt_bias"})  # column-sharded, not quantizable
_REPLICATED_LINEAR = frozenset(
    {"q_a_proj", "kv_a_proj_with_mqa", "f_a_proj", "g_a_proj", "per_layer_input_gate", "per_layer_projection"}
    | {"fc1_latent_proj", "fc2_latent_proj"}
)
_EMBED = frozenset({"embed_tokens", "wte", "word_embeddings", "embed_in", "tok_embeddings", "embeddings"})
_HEAD = frozenset({"lm_head", "embed_out", "output"})


@dataclass(frozen=True, slots=True)
class CheckpointInventory:
    """What vLLM allocates according to the checkpoint's tensors, or why the formula is used instead."""

    tensors: tuple[Tensor, ...]
    params: int  # logical parameters the loaded tensors hold (packed forms unpacked)
    unknown: tuple[str, ...] = ()  # tensors without a known role (counted whole on every GPU)
    unknown_bytes: int = 0
    dropped: tuple[str, ...] = ()  # tensors vLLM's loader skips
    fallback: str = ""  # non-empty: why the architecture formula is used for every tensor

    @property
    def usable(self) -> bool:
        """The tensor list replaces the formula."""
        return not self.fallback


_PREFIX_STARTS = tuple(old for old, _ in _PREFIXES)


def _normalized(name: str) -> str:
    if not name.startswith(_PREFIX_STARTS):  # the common case, in one call
        return name
    for old, new in _PREFIXES:
        if name.startswith(old):
            return new + name[len(old) :]
    return name


def _split(name: str) -> tuple[str, str]:
    """(module, parameter): `a.b.q_proj.qweight` -> (`a.b.q_proj`, `qweight`); a bare parameter keeps its name."""
    if name.endswith(("_blocks", "_scales", "_bias")) and ".experts." in name:  # gpt-oss stacked MXFP4 experts
        base, suffix = name.rsplit("_", 1)
        return base, {"blocks": "blocks", "scales": "mx_scales", "bias": "bias"}[suffix]
    module, _, param = name.rpartition(".")
    return (module, param) if module and param in _PARAMS else (name, "")


def _logical(params: Mapping[str, CheckpointTensor], quant: QuantSpec | None) -> tuple[int, int] | None:
    """The module's logical [out, in] shape from its stored (possibly packed) main tensor."""
    bits = quant.bits if quant is not None and quant.bits in (2, 3, 4, 8) else 4
    if (q := params.get("qweight")) is not None and len(q.shape) == 2:
        awq = quant.method == "awq" if quant is not None else "g_idx" not in params
        return (q.shape[1] * 32 // bits, q.shape[0]) if awq else (q.shape[1], q.shape[0] * 32 // bits)
    if (p := params.get("weight_packed")) is not None and len(p.shape) == 2:
        return p.shape[0], p.shape[1] * (2 if p.dtype == "U8" else 32 // bits)
    if (b := params.get("blocks")) is not None and len(b.shape) >= 3:
        return b.shape[-3], b.shape[-2] * b.shape[-1] * 2
    w = params.get("weight", params.get(""))
    if w is None:
        return None
    if w.dtype == "U8" and len(w.shape) == 2 and ("weight_scale_2" in params or "weight_scale" in params):
        return w.shape[0], w.shape[1] * 2  # ModelOpt NVFP4: two 4-bit values a byte
    if not w.shape:
        return 1, 1
    return w.shape[0], prod(w.shape[1:]) if len(w.shape) > 1 else 1


def _stored_bytes(t: CheckpointTensor) -> int:
    if t.dtype == "F4":
        return prod(t.shape) // 2
    return prod(t.shape) * _DTYPE_BYTES.get(t.dtype, 1)


def group_modules(tensors: tuple[CheckpointTensor, ...]) -> tuple[dict[str, dict[str, CheckpointTensor]], list[str]]:
    """Checkpoint tensors by module (normalized names), and the bitsandbytes tensors found (flattened packing)."""
    modules: dict[str, dict[str, CheckpointTensor]] = {}
    bnb: list[str] = []
    for t in tensors:
        name = _normalized(t.name)
        if _BNB.search(name):
            bnb.append(t.name)
            continue
        module, param = _split(name)
        modules.setdefault(module, {})[param] = t
    return modules, bnb


@dataclass(frozen=True, slots=True)
class _Role:
    group: Group
    shard: Shard
    linear: bool
    heads: int = 0
    loaded: bool = True


def _group_of(rest: str) -> Group:
    if "shared_expert" in rest:
        return "shared_experts"
    if "mixer" in rest or "mamba" in rest or "linear_attn" in rest:
        return "mixer"
    if "attn" in rest or "attention" in rest:
        return "attention"
    return "mlp"


def _projection_role(s: ModelSpec, i: int, leaf: str, group: Group) -> _Role | None:
    """A projection's parallel style by its name: query heads, K/V heads, row, column (and the Mamba vectors split
    like a column), or replicated."""
    if leaf in _Q:
        return _Role(group, "head", True, heads=s.num_heads)
    if leaf in _KV:
        return _Role(group, "kv", True, heads=s.kv_heads_at(i), loaded=s.has_kv_cache(i))
    if leaf in _ROW:
        return _Role(group, "row", True)
    if leaf in _COLUMN:
        return _Role(group, "column", True)
    if leaf in _COLUMN_VECTORS:
        return _Role("mixer", "column", False)
    if leaf in _REPLICATED_LINEAR:
        return _Role(group, "replicated", True)
    return None


def _layer_role(s: ModelSpec, i: int, rest: str) -> _Role | None:
    """The parallel style of a decoder-layer module (`rest`: its path inside the layer)."""
    leaf = rest.rsplit(".", 1)[-1]
    if (
        rest == "mixer.norm"
    ):  # Mamba2's gated RMSNorm over the inner width, split like it (mamba_mixer2.py Mixer2RMSNormGated)
        return _Role("norms", "column", False)
    if "norm" in leaf or leaf in ("ln_1", "ln_2", "ln_attn", "ln_mlp"):
        return _Role("norms", "replicated", False, loaded=leaf != "k_norm" or s.has_kv_cache(i))
    if ".indexer." in f".{rest}":  # DeepseekV32Indexer: only wq_b takes the quantization
        return _Role("attention", "replicated", leaf == "wq_b")
    if (leaf in ("gate", "router") and s.mlp_kinds[i] == "moe") or leaf in ("shared_expert_gate", "per_expert_scale"):
        return _Role("router", "replicated", False)
    role = _projection_role(s, i, leaf, _group_of(rest))
    if role is not None:
        return role
    if leaf == "scale" and ".router." in f".{rest}":  # Gemma-4 Gemma4Router.scale
        return _Role("router", "replicated", False)
    if leaf == "sinks":
        return _Role("attention", "head", False, heads=s.num_heads)
    if leaf == "layer_scalar":
        return _Role("norms", "replicated", False)
    return None


def _top_role(module: str) -> tuple[str, _Role] | None:
    """(name as the formula spells it, role) of a module outside the decoder layers; None when unknown."""
    leaf = module.rsplit(".", 1)[-1]
    if leaf in _EMBED:
        return "model.embed_tokens", _Role("embedding", "vocab", False)
    if leaf == "embed_tokens_per_layer":
        return "model.embed_tokens_per_layer", _Role("embedding", "vocab", False)
    if leaf in ("wpe", "embed_positions"):
        return "model.embed_positions", _Role("embedding", "replicated", False)
    if leaf in _HEAD:
        return "lm_head", _Role("lm_head", "vocab", False)
    if leaf == "per_layer_model_projection":
        return module, _Role("mlp", "column", True)
    if "norm" in leaf or leaf == "ln_f":
        return module, _Role("norms", "replicated", False)
    return None


def _vision_role(module: str, *, whole: bool = False) -> _Role:
    """Vision encoders and projectors stay 16-bit (model/encoder_tensors.py vision_tensors); attention and MLP shard.
    Audio towers, and every tower when `whole` (Gemma-4's vision tower), are transformers modules vLLM builds as is
    with replicated linears (qwen2_audio.py, gemma4_mm.py): whole on every rank."""
    if whole or module.removeprefix("model.").startswith("audio_tower."):
        return _Role("vision", "replicated", False)
    leaf = module.rsplit(".", 1)[-1]
    if leaf in ("qkv", "qkv_proj", "q_proj", "k_proj", "v_proj", "fc1", "linear_fc1", "gate_proj", "up_proj"):
        return _Role("vision", "column", False)
    if leaf in ("proj", "o_proj", "out_proj", "fc2", "linear_fc2", "down_proj"):
        return _Role("vision", "row", False)
    return _Role("vision", "replicated", False)


def _qkv(s: ModelSpec, i: int, module: str, rows: int, cols: int) -> list[Tensor]:
    """A fused q/k/v projection split as vLLM's QKVParallelLinear shards it (K and V by KV head)."""
    hd, kvh = s.head_dim_at(i), s.kv_heads_at(i)
    q = s.num_heads * hd * (2 if s.attn_output_gate else 1)
    k, v = kvh * hd, kvh * s.v_head_dim_at(i)
    if rows != q + k + v:
        return [Tensor(module, "attention", rows, cols, "column", i)]
    return [
        Tensor(f"{module}.q", "attention", q, cols, "head", i, heads=s.num_heads),
        Tensor(f"{module}.k", "attention", k, cols, "kv", i, heads=kvh),
        Tensor(f"{module}.v", "attention", v, cols, "kv", i, heads=kvh),
    ]


def _module_tensors(
    s: ModelSpec, name: str, params: Mapping[str, CheckpointTensor], layer: int | None, role: _Role
) -> list[Tensor]:
    """The main tensor (logical shape) and the bias-like vectors of one module."""
    out: list[Tensor] = []
    shape = _logical(params, s.quant)
    if shape is not None:
        rows, cols = shape
        if layer is not None and name.rsplit(".", 1)[-1] in _QKV and role.group == "attention":
            out += _qkv(s, layer, name, rows, cols)
        else:
            out.append(Tensor(name, role.group, rows, cols, role.shard, layer, role.linear, 1, role.heads, role.loaded))
    for key in ("bias", "e_score_correction_bias"):
        if (b := params.get(key)) is not None:
            shard: Shard = "replicated" if role.shard == "row" else role.shard
            out.append(Tensor(f"{name}.{key}", role.group, prod(b.shape) or 1, 1, shard, layer, False, 1, role.heads))
    return out


_W13_LEAVES = frozenset({"gate_proj", "up_proj", "w1", "w3", "gate_up_proj", "w13_weight"})


@dataclass(slots=True)
class _ExpertSet:
    """One layer's routed experts, gathered from per-expert modules (experts.<e>.<proj>) or stacked tensors."""

    layer: int
    ids: dict[str, set[str]] = field(default_factory=dict)  # "w13" | "w2" -> expert ids seen
    shapes: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)  # (kind, leaf) -> one expert's
    biases: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, expert: str, leaf: str, shape: tuple[int, int] | None, bias: int | None) -> None:
        kind = "w13" if leaf in _W13_LEAVES else "w2"
        self.ids.setdefault(kind, set()).add(expert)
        if shape is not None:
            self.shapes.setdefault((kind, leaf), shape)
        if bias is not None:
            self.biases.setdefault((kind, leaf), bias)

    def tensors(self, prefix: str) -> list[Tensor]:
        out: list[Tensor] = []
        pairs: tuple[tuple[str, Shard], ...] = (("w13", "expert_w13"), ("w2", "expert_w2"))
        for kind, shard in pairs:
            count = len(self.ids.get(kind, ()))
            shapes = [v for (k, _), v in sorted(self.shapes.items()) if k == kind]
            if count and shapes:
                rows = sum(r for r, _ in shapes)
                out.append(Tensor(f"{prefix}.{kind}", "experts", rows, shapes[0][1], shard, self.layer, count=count))
            bias = sum(v for (k, _), v in self.biases.items() if k == kind)
            if count and bias:
                out.append(Tensor(f"{prefix}.{kind}_bias", "experts", bias, 1, "expert_vec", self.layer, False, count))
        return out


def _stacked_shape(s: ModelSpec, leaf: str, params: Mapping[str, CheckpointTensor]) -> tuple[int, int, int] | None:
    """(experts, out, in) of a stacked expert tensor: [E, in, out] as transformers saves gpt-oss / Llama-4,
    [E, out, in] as vLLM names it (w13_weight), MXFP4 blocks [E, out, in/32, 16]."""
    main = params.get("blocks", params.get("", params.get("weight")))
    if main is None or len(main.shape) < 3:
        return None
    shape = _logical(params, s.quant)
    assert shape is not None
    rows, cols = shape[0], shape[1]
    if "blocks" not in params and len(main.shape) == 3:
        width = (s.moe.latent_size if s.moe else 0) or s.hidden_size
        a, b = main.shape[1], main.shape[2]
        transposed = (leaf in _W13_LEAVES and a == width and b != width) or (leaf not in _W13_LEAVES and b == width)
        rows, cols = (b, a) if transposed else (a, b)
    return main.shape[0], rows, cols


def _experts(
    s: ModelSpec, module: str, params: Mapping[str, CheckpointTensor], sets: dict[str, _ExpertSet], layer: int
) -> list[Tensor] | None:
    """Expert modules: gathered into `sets` (per-expert) or returned at once (stacked); None: not an expert."""
    if m := _EXPERT.match(module):
        prefix, expert, leaf = m.groups()
        shape = _logical(params, s.quant)
        bias = prod(params["bias"].shape) if "bias" in params else None
        sets.setdefault(prefix, _ExpertSet(layer)).add(expert, leaf, shape, bias)
        return []
    if m := _STACKED.match(module):
        prefix, leaf = m.groups()
        kind = "w13" if leaf in _W13_LEAVES else "w2"
        shard: Shard = "expert_w13" if kind == "w13" else "expert_w2"
        out: list[Tensor] = []
        if (stacked := _stacked_shape(s, leaf, params)) is not None:
            count, rows, cols = stacked
            out.append(Tensor(f"{prefix}.{kind}", "experts", rows, cols, shard, layer, count=count))
        if (b := params.get("bias")) is not None and len(b.shape) == 2:
            out.append(
                Tensor(f"{prefix}.{kind}_bias", "experts", b.shape[1], 1, "expert_vec", layer, False, b.shape[0])
            )
        return out
    return None


def _dropped(s: ModelSpec, module: str, params: Mapping[str, CheckpointTensor]) -> bool:
    """Checkpoint tensors vLLM's loader skips (see the module docstring; GPT-2's causal-mask buffers attn.bias and
    attn.masked_bias: gpt2.py load_weights)."""
    if module.endswith(("inv_freq", ".masked_bias")) or module.startswith("mtp.") or ".mtp." in f".{module}":
        return True
    if module.endswith(".attn") and set(params) == {"bias"}:
        return True
    if s.tie_word_embeddings and module.rsplit(".", 1)[-1] in _HEAD:
        return True
    layer = _LAYER.match(module)
    return layer is not None and not _VISION.match(module) and int(layer.group(1)) >= s.num_layers


def _place(
    s: ModelSpec, module: str, params: Mapping[str, CheckpointTensor], sets: dict[str, _ExpertSet]
) -> list[Tensor] | None:
    """The tensors one checkpoint module becomes in vLLM's model; None when its role is unknown."""
    if _VISION.match(module):
        whole = s.vision is not None and s.vision.style == "gemma4"
        return _module_tensors(s, module, params, None, _vision_role(module, whole=whole))
    if layer := _LAYER.match(module):
        i, rest = int(layer.group(1)), layer.group(2)
        if ".experts." in f".{rest}." and (experts := _experts(s, module, params, sets, i)) is not None:
            return experts
        role = _layer_role(s, i, rest)
        return None if role is None else _module_tensors(s, module, params, i, role)
    top = _top_role(module)
    return None if top is None else _module_tensors(s, top[0], params, None, top[1])


def checkpoint_inventory(s: ModelSpec) -> CheckpointInventory:
    """What vLLM allocates for this checkpoint, tensor by tensor (see the module docstring)."""
    modules, bnb = group_modules(s.checkpoint_tensors)
    if bnb:
        reason = "bitsandbytes stores its weights flattened, so the headers do not give their shapes"
        return CheckpointInventory((), 0, fallback=reason)
    tensors: list[Tensor] = []
    unknown: list[str] = []
    dropped: list[str] = []
    unknown_bytes = 0
    sets: dict[str, _ExpertSet] = {}
    for module, params in modules.items():
        if _dropped(s, module, params):
            dropped += [t.name for t in params.values()]
            continue
        placed = _place(s, module, params, sets)
        if placed is None:
            unknown += [t.name for t in params.values()]
            unknown_bytes += sum(_stored_bytes(t) for t in params.values())
            layer = _LAYER.match(module)
            numel = sum(prod(t.shape) for t in params.values())
            at = int(layer.group(1)) if layer and not _VISION.match(module) else None
            placed = [Tensor(module, "norms" if at is None else "mlp", numel, 1, "replicated", at, linear=False)]
        tensors += placed
    for prefix, experts in sets.items():
        tensors += experts.tensors(prefix)
    tensors += [t for t in model_tensors(s) if not t.in_checkpoint and t.loaded]  # allocated, never shipped
    params_total = sum(t.numel for t in tensors if t.in_checkpoint)
    inventory = CheckpointInventory(tuple(tensors), params_total, tuple(unknown), unknown_bytes, tuple(dropped))
    if not any(t.layer is not None for t in tensors):
        return _fallback(inventory, "no decoder-layer tensor in the checkpoint has a name vLLM's models use")
    total_bytes = s.checkpoint_bytes or sum(_stored_bytes(t) for t in s.checkpoint_tensors)
    if unknown_bytes > UNKNOWN_SHARE * max(total_bytes, 1):
        share = unknown_bytes / max(total_bytes, 1)
        n = len(unknown)
        return _fallback(inventory, f"{n} tensor{'s' * (n != 1)} ({share:.1%} of the checkpoint) with no known role")
    return inventory


_INVENTORIES: dict[tuple[int, ModelSpec], tuple[tuple[CheckpointTensor, ...], CheckpointInventory]] = {}


def inventory_of(s: ModelSpec) -> CheckpointInventory:
    """`checkpoint_inventory`, computed once per tensor list and architecture (a large MoE checkpoint lists 10^5
    tensors; the spec's notes and name do not change it)."""
    key = (id(s.checkpoint_tensors), replace(s, checkpoint_tensors=(), notes=(), approximate=(), name="", source=""))
    hit = _INVENTORIES.get(key)
    if hit is not None and hit[0] is s.checkpoint_tensors:
        return hit[1]
    inventory = checkpoint_inventory(s)
    if len(_INVENTORIES) >= 16:
        _INVENTORIES.pop(next(iter(_INVENTORIES)))
    _INVENTORIES[key] = (s.checkpoint_tensors, inventory)
    return inventory


def _fallback(inventory: CheckpointInventory, reason: str) -> CheckpointInventory:
    return CheckpointInventory(
        inventory.tensors, inventory.params, inventory.unknown, inventory.unknown_bytes, inventory.dropped, reason
    )
