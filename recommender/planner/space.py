"""The search space: weights options, KV-cache dtypes, parallel shapes and their product (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from recommender.hardware import Gpu
from recommender.memory.precision import auto_dtype, auto_kv_is_fp8
from recommender.model.spec import ModelSpec
from recommender.planner.types import Candidate, Hardware, WeightOption

TP_SIZES = (1, 2, 4, 8)
GPU_BUDGETS = (1, 2, 4, 8)  # without a GPU count: one node, smallest first


def gpu_budgets(gpu: Gpu) -> tuple[int, ...]:
    """The GPU counts searched without a count given: one node of up to 8, or the one GPU a single-GPU system has."""
    return tuple(n for n in GPU_BUDGETS if n <= (gpu.max_per_node or GPU_BUDGETS[-1]))


def precision_of(model: ModelSpec, quantization_flag: str | None, gpu: Gpu) -> tuple[int, str]:
    """Precision rank (lower is better) and label of a weights option: the dtype vLLM loads on this GPU."""
    q = model.quant
    if q is None and quantization_flag:
        return 1, f"{quantization_flag.upper()} (online)"
    if q is None and model.dtype == "float32":  # --dtype auto serves a float32 checkpoint in 16 bits (explain's dtype)
        return 0, "16-bit (float32 checkpoint)"
    if q is None:  # a bfloat16 checkpoint loads as float16 where the GPU has no bfloat16 (a T4, a V100)
        served = auto_dtype(model.dtype, gpu)
        return 0, model.dtype if served == model.dtype else f"{served} ({model.dtype} checkpoint)"
    if q.method == "fp8":
        return 1, q.label
    if q.bits >= 8:
        return 2, q.label
    return 3, q.label


def weight_options(
    base: ModelSpec,
    variants: Sequence[ModelSpec],
    gpu: Gpu,
    *,
    allow_quantization: bool = True,
    only: str | None = None,
) -> list[WeightOption]:
    """Native weights, online FP8 where vLLM runs it on this GPU, and the catalog's pre-quantized variants."""
    options: list[tuple[ModelSpec, str | None]] = [(base, None)]
    cc = gpu.cc_major_minor
    if allow_quantization:
        if base.quant is None and (cc is None or cc >= (8, 0)):
            options.append((base, "fp8"))  # FP8 W8A8 on Ada/Hopper+, FP8 weight-only Marlin on Ampere
        options += [(v, None) for v in variants]
    out = []
    for model, flag in options:
        rank, label = precision_of(model, flag, gpu)
        if only is not None and only.lower() not in _names(model, flag, label):
            continue
        out.append(WeightOption(model, flag, label, rank, provenance_of(base, model, flag)))
    return out


def _names(model: ModelSpec, flag: str | None, label: str) -> tuple[str, ...]:
    """What `--quantization` may say to pick this option: its label, the native dtype, the online flag, the
    checkpoint's method."""
    native = model.dtype if model.quant is None and flag is None else ""  # `bfloat16` names the T4's float16 too
    return (label.lower(), native, flag or "", model.quant.method if model.quant else "")


def no_option_matches(
    only: str, base: ModelSpec, variants: Sequence[ModelSpec], gpu: Gpu, *, allow_quantization: bool
) -> str:
    """The error for a --quantization no option has, listing the names the options answer to."""
    names = sorted(
        {
            n
            for o in weight_options(base, variants, gpu, allow_quantization=allow_quantization)
            for n in _names(o.model, o.quantization_flag, o.label)[1:]
            if n
        }
    )
    return f"no weights option matches --quantization {only} (for {base.name} on {gpu.name}: {', '.join(names)})"


def provenance_of(base: ModelSpec, model: ModelSpec, quantization_flag: str | None) -> int:
    """0 for the model's own weights or a checkpoint of its publisher (the organisation of its id), 1 for another
    publisher's checkpoint, 2 for weights quantized online at load."""
    if quantization_flag is not None and model.quant is None:
        return 2
    if model is base or model.name.split("/", 1)[0].lower() == base.name.split("/", 1)[0].lower():
        return 0
    return 1


def kv_dtypes(gpu: Gpu, *, allow_fp8: bool = True) -> tuple[str, ...]:
    """`auto`, plus `fp8` where the GPU supports an fp8 KV cache in vLLM (compute capability 8.0+ / CDNA3)."""
    cc = gpu.cc_major_minor
    return ("auto", "fp8") if allow_fp8 and (cc is None or cc >= (8, 0)) else ("auto",)


def parallel_shapes(model: ModelSpec, hw: Hardware) -> list[tuple[int, int]]:
    """(TP, PP) pairs: TP within a node (heads must divide), PP across nodes."""
    shapes = [(tp, 1) for tp in TP_SIZES if tp <= hw.gpus_per_node and model.num_heads % tp == 0]
    if hw.nodes > 1 and model.num_heads % hw.gpus_per_node == 0 and hw.nodes <= model.num_layers:
        shapes.append((hw.gpus_per_node, hw.nodes))
    return shapes


def candidates(options: Sequence[WeightOption], model: ModelSpec, hw: Hardware, kv: Sequence[str]) -> list[Candidate]:
    """The full search space, in a deterministic order."""
    out = []
    for w in options:
        # Where `auto` already stores fp8 (DeepSeek-V4, a checkpoint's FP8 KV scheme), `fp8` is the same engine.
        kv_here = [k for k in kv if not (k == "fp8" and "auto" in kv and auto_kv_is_fp8(w.model, w.model.quant))]
        if model.encoder_only:  # no KV cache to store in fp8 (memory/no_kv.py)
            kv_here = kv_here[:1]
        for k in kv_here:
            for tp, pp in parallel_shapes(model, hw):
                out.append(Candidate(w, k, tp, pp))
                # MoE over several GPUs: experts held whole per GPU (--enable-expert-parallel) instead of sliced.
                if model.is_moe and tp > 1:
                    out.append(Candidate(w, k, tp, pp, expert_parallel=True))
    return out
