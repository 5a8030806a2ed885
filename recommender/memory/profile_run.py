"""vLLM's profiling run on one GPU (pure): the CUDA graphs every stage captures, the multimodal encoder's profiling
pass, and the transient activation peak of determine_available_memory's dummy forward (memory/overheads.py's
generic terms, V0's multimodal dummy batch, DeepSeek-V4's sparse-attention workspace).
"""

from __future__ import annotations

from recommender.hardware import Gpu
from recommender.memory import capture_config, dsv4_profile, model_runner, overheads
from recommender.memory.encoder_profile import (
    EncoderPass,
    V0Batch,
    encoder_pass,
    towers_data_parallel,
    v0_profile_batch,
)
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.precision import Precision, tower_modalities
from recommender.memory.scheduler import SchedulerLimits
from recommender.model.spec import ModelSpec


def engine_passes(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, limits: SchedulerLimits, version: VllmVersion, *, v0: bool = False
) -> tuple[int, EncoderPass]:
    """What every stage shares: the number of CUDA graphs captured and the multimodal encoder's profiling pass."""
    v = (version.major, version.minor)
    graphs = graph_count(model, gpu, flags, limits, version, v0=v0)
    if flags.towers_skipped(version, tower_modalities(model)):
        return graphs, EncoderPass(0, 0)
    encoder = encoder_pass(
        model,
        max_num_batched_tokens=limits.max_num_batched_tokens,
        max_num_seqs=limits.max_num_seqs,
        max_model_len=limits.max_model_len,
        tp=flags.tensor_parallel_size,
        version=v,
        video=flags.modality_limit("video") != 0,
        data_parallel=towers_data_parallel(model, flags),
        compiled=not flags.enforce_eager,
    )
    return graphs, encoder


def graph_count(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, limits: SchedulerLimits, version: VllmVersion, *, v0: bool = False
) -> int:
    """The sizes of the (PIECEWISE or only) capture list, 0 without CUDA graphs: V0's decode list, or the list the
    launch gives (memory/capture_config.py)."""
    if flags.enforce_eager:
        return 0
    if v0:
        given = flags.capture_request().sizes
        return len(set(given)) if given else overheads.v0_cudagraph_capture_count(limits.max_num_seqs)
    sizes, _ = capture_lists(model, gpu, flags, limits, version)
    return len(sizes or ())


def capture_lists(
    model: ModelSpec, gpu: Gpu, flags: EngineFlags, limits: SchedulerLimits, version: VllmVersion, *, v0: bool = False
) -> tuple[tuple[int, ...] | None, tuple[int, ...] | None]:
    """The V1 capture lists, (PIECEWISE or the mode's only list, FULL decode), whose tokens scale vLLM's graph
    estimate (overheads.cudagraph_bytes): the release's defaults (overheads.cudagraph_capture_sizes /
    cudagraph_decode_sizes), or what --compilation-config, --cudagraph-capture-sizes, --max-cudagraph-capture-size
    and cudagraph_mode ask for (memory/capture_config.py). ((), None) without graphs (cudagraph_mode NONE, -O0, an
    empty list); (None, None) on V0, whose estimate is not profiled."""
    if v0:
        return None, None
    release = (version.major, version.minor, version.patch)
    req = flags.capture_request()
    default = "FULL_AND_PIECEWISE" if release >= overheads.FULL_DECODE_GRAPHS_FROM else "PIECEWISE"
    mode = capture_config.effective_mode(req, default=default, release=release)
    if mode == "NONE" or flags.enforce_eager:
        return (), None
    mbt, seqs = limits.max_num_batched_tokens, limits.max_num_seqs
    if req.sizes is not None:
        sizes = capture_config.explicit_sizes(req.sizes, max_num_batched_tokens=mbt, release=release)
        decode: tuple[int, ...] | None = tuple(n for n in sizes if n <= seqs)
    else:
        top = overheads.cudagraph_max_capture(model, gpu.cc_major_minor, release, seqs)
        if req.max_size is not None:  # --max-cudagraph-capture-size, or one --cuda-graph-sizes value before 0.13
            top = req.max_size
        sizes = overheads.cudagraph_capture_sizes(top, max_num_batched_tokens=mbt, version=release)
        decode = overheads.cudagraph_decode_sizes(top, max_num_seqs=seqs, max_num_batched_tokens=mbt, version=release)
        if decode is None:  # a FULL mode asked for before it was the default: the sizes a decode batch fills
            decode = tuple(n for n in sizes if n <= seqs)
    # one list where the release's default captures two (FULL_AND_PIECEWISE, from 0.11.0, the regime the graph fit
    # saw): an empty FULL list, so the one list's graphs count against the fit's two (overheads.cudagraph_bytes); the
    # per-graph cost of a FULL and a PIECEWISE graph is taken as alike, as in that fit
    other: tuple[int, ...] | None = () if default == "FULL_AND_PIECEWISE" else None
    if mode == "FULL_DECODE_ONLY":
        return decode or (), other
    if mode in ("PIECEWISE", "FULL"):
        return sizes, other
    return sizes, decode or other


def graph_estimate(
    model: ModelSpec,
    gpu: Gpu,
    setup: tuple[EngineFlags, SchedulerLimits],
    version: VllmVersion,
    layers_on_gpu: int,
    *,
    graphs: int,
    v0: bool,
) -> int:
    """vLLM's CUDA-graph estimate for a stage of `layers_on_gpu` layers (overheads.cudagraph_bytes) over the capture
    lists of the release (capture_lists; `graphs`: the count engine_passes gives, V0's own list)."""
    flags, limits = setup
    sizes, full_sizes = capture_lists(model, gpu, flags, limits, version, v0=v0)
    if sizes == () or graphs == 0:
        return 0
    return overheads.cudagraph_bytes(
        layers_on_gpu=layers_on_gpu,
        enforce_eager=flags.enforce_eager,
        graphs=graphs,
        sizes=sizes,
        full_sizes=full_sizes,
    )


def activation_bytes(
    model: ModelSpec,
    gpu: Gpu,
    flags: EngineFlags,
    setup: tuple[Precision, SchedulerLimits],
    version: VllmVersion,
    encoder: EncoderPass | None,
    *,
    stage: tuple[int, int],
    v0: bool,
) -> int:
    """The profiling run's transient peak on one GPU of pipeline stage `stage` = (k, pp): the generic forward,
    sampler and MoE terms (memory/overheads.py) and DeepSeek-V4's sparse-attention workspace (memory/dsv4_profile.py)."""
    precision, limits = setup
    k, pp = stage
    v = (version.major, version.minor)
    rocm = gpu.vendor.lower() == "amd"
    batch = V0Batch(limits.max_num_batched_tokens, limits.max_num_seqs)
    uncompiled = flags.enforce_eager or flags.capture_request().level0
    if v0:  # V0's dummy sequences carry the multimodal items whole (memory/encoder_profile.py)
        batch = v0_profile_batch(
            model,
            max_num_batched_tokens=batch.tokens,
            max_num_seqs=batch.seqs,
            max_model_len=limits.max_model_len,
            items=(flags.modality_limit("image"), flags.modality_limit("video")),
            version=(version.major, version.minor, version.patch),
        )
    return (
        batch.pixel_bytes
        + overheads.activation_peak_bytes(
            model,
            max_num_batched_tokens=batch.tokens,
            max_num_seqs=batch.seqs,
            tp=flags.tensor_parallel_size,
            last_stage=k == pp - 1,
            version=v,
            moe_kernel_without_workspace=precision.mxfp4_triton,
            # FP8 experts on a card without FP8 tensor cores (Ampere) run Marlin's weight-only MoE, not Triton's
            triton_experts=precision.triton_experts and (precision.quant is None or gpu.fp8),
            expert_parallel=flags.enable_expert_parallel,
            v0=v0,
            encoder=None if v0 or k else encoder,
            flashinfer_sampler=bool(flags.flashinfer_sampler) and not v0,
            dp=flags.data_parallel_size,
            v2_runner=not v0 and uncompiled and model_runner.runs_v2(model, flags, version),
            logits_bytes=precision.dtype_bytes,
        )
        + dsv4_profile.workspace_bytes(
            model,
            max_model_len=limits.max_model_len,
            max_num_batched_tokens=limits.max_num_batched_tokens,
            max_num_seqs=limits.max_num_seqs,
            rocm=rocm,
            decode_rows_bounded=not rocm or version >= dsv4_profile.ROCM_DECODE_ROWS_BOUNDED_FROM,
        )
    )
