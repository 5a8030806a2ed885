"""The terms vLLM measures rather than computes: activation peak, non-torch memory, CUDA-graph memory.

Each is a small documented model fitted to the real startup logs in shared/calibration
(`benchmarks/fidelity.py` prints the residuals). Constants name the records they come from.
"""

from __future__ import annotations

from recommender.memory.encoder_profile import EncoderPass
from recommender.model.spec import ModelSpec
from recommender.units import GiB, MiB

# --- activation peak of the profiling run --------------------------------------------------------
# vLLM's profile_run does one forward over max_num_batched_tokens (T) spread over
# min(max_num_seqs, T) dummy requests (S), attention skipped, then the sampler over one row per request with
# logits [S, vocab] converted to fp32 (v1/sample/sampler.py). Fitted to the llm-d-planner v0.19.0 H100 sweep
# (T = 8192, S = 1024) across vocabularies of 32k to 262k and hidden sizes of 2k to 8k: the peak follows the
# vocabulary, not the model width (Qwen2.5-7B, Qwen3-8B and the 72B Kimi-Dev all log 2.2-2.3 GiB with a
# 152k vocabulary; CodeLlama-7B with 32k logs 0.77, gemma-7b and gemma-2-27b with 256k log 3.63 and 3.66).
# Forward part: bytes per scheduled token (the intercept of that fit: 0.36 GiB at T = 8192).
ACT_BYTES_PER_TOKEN = 47_000
# Sampler part: bytes per logit of the [S, vocab] work (the slope of that fit).
SAMPLER_BYTES_PER_LOGIT = 13.5
# Releases up to 0.11 held several more fp32 copies of the logits in the dummy sampler run: 5.56 GiB for
# Qwen3-0.6B with 1024 x 151,936 logits (C055, C058), 5.64 for Qwen3-32B (C056), 4.84 for Llama-3.3-70B
# (C057), 5.58 for Qwen3-Next on v0.10.2 (C001): about 36 bytes per logit. By 0.17 the RTX 3090 records
# (C004-C009) fit the lower figure; the exact release of the change is not known (see below).
# Which path ran depends on the environment, not only the release: V1 used FlashInfer's top-k/top-p kernel when
# flashinfer was installed (vLLM PR 11394, Dec 2024) and PyTorch's sort-based path otherwise, until FlashInfer's
# was switched off by default (PR 26859, Oct 2025). The sort path is the 36 bytes; an image without flashinfer
# leaves 1.5 GiB less KV than one with it (flashinfer-ai/flashinfer issue 1180, LMCache's vLLM image, as in C066).
# The A100 logs of vLLM 0.10.1 (C010-C012, field F030/F031) fit a far smaller figure, presumably FlashInfer's path;
# the vllm/vllm-openai v0.11.0 image records (C055-C058) show the sort path's, so which environment ran which is
# not known record by record. The larger figure is kept for every release before 0.17: it never calls a crash
# safe, at the price of KV under-predicted (up to ~1 GiB at 256 requests, more at 1,024) where FlashInfer sampled.
# Releases 0.12 and 0.13 still show it (round-2 field records, vllm serve with known flags): Qwen3-30B-A3B-Instruct-
# 2507 on an RTX PRO 6000 at 0.12.0, 1,024 requests, leaves 18.15 GiB of KV (G003: 17.84 predicted with 36 bytes,
# 21.10 with 13.5) and Qwen2.5-14B-AWQ on an RTX A5000 at 0.13.0, 256 requests, 10.39 (G030: 10.37 against 11.18);
# 0.17.1 fits the lower figure (C004-C009); no log of 0.14-0.16 shows which.
SAMPLER_BYTES_PER_LOGIT_OLD = 36.0
SAMPLER_CHANGED_IN = (0, 17)
# MoE layers add the fused-MoE intermediate cache, T x top_k x 2 x expert width (sharded by TP) in 16 bit:
# Mixtral-8x7B at TP=2 logs 0.44 GiB above a dense model of its vocabulary (C033), Qwen1.5-MoE 0.16 (C038).
# vLLM allocates that cache once for the gate-up output [T, top_k, 2 I] and the down output [T, top_k, H]
# (fused_moe.py intermediate_cache13), so the wider of the two counts; with --enable-expert-parallel every rank
# holds whole experts, so the width is not divided by TP (DeepSeek-R1 at TP=16 with expert parallelism and a
# 32,768-token profile: field record F051).
MOE_WORKSPACE_BYTES = 2
# Data parallelism: every DP rank runs the profiling forward on its own T tokens at once, and a MoE layer gathers
# the tokens of all DP ranks before its experts (v0.10-0.11 `naive` all2all backend: naive_multicast into a
# [sum of DP tokens, hidden] buffer, fused_moe/layer.py forward_impl do_naive_dispatch_combine when dp_size > 1;
# from 0.12 and in 0.33 `allgather_reducescatter`: all_gatherv, distributed/device_communicators/all2all.py). So the
# fused-MoE cache is sized on DP x T tokens, beside the gathered [DP x T, hidden] 16-bit input. The triton
# fused_experts_impl runs at most VLLM_FUSED_MOE_CHUNK_SIZE (32,768) tokens at a time up to 0.14 (fused_moe.py
# `M = min(num_tokens, CHUNK_SIZE)`, v0.10.1 ... v0.14.0rc0); 0.33 has no such variable (the modular kernel's
# M_chunk = M_full), and the releases between are not read: no cap there (more activation, the safe side). Without
# expert parallelism the experts are sharded over DP x TP ranks (FusedMoEParallelConfig's flattened TP).
MOE_CHUNK_TOKENS = 32_768
MOE_CHUNKED_UNTIL = (0, 14)
# From 0.14 the Triton experts run through the modular kernel (vLLM pull request 31052, "[MoE Refactor][9/N] Use
# modular kernel for unquantized Triton MoE", merged 2025-12-20; the FP8 and INT8 Triton paths are TritonExperts'
# subclasses). TritonExperts.workspace_shapes asks for two buffers at once: workspace1 = (M, topk, max(N // 2, K)),
# which holds the activated half (intermediate_cache2), and workspace2 = (M, topk, max(N, K)), which holds the gate-up
# output and then the down output (intermediate_cache1 and 3); N = 2 x the expert width, K = hidden. So the profile
# holds M x top_k x (max(N/2, K) + max(N, K)) where the monolithic fused_experts_impl above held one cache13. The
# fine-grained experts show it: Qwen3-235B-A22B-Instruct-2507-FP8 at TP 4 with expert parallelism on vLLM 0.20, whose
# per-GPU prefill activation a benchmark report measures at 12.78 GiB with 65,536 batched tokens and 4.08 with 8,192
# (field17 Y012, Y013: KV +103.8 % and +23.9 % with one cache, +7 % with both). Other expert kernels (Marlin's
# weight-only MoE, the FP4 kernels) keep the one-cache term.
MOE_MODULAR_FROM = (0, 14)
# Before 0.8.0 fused_experts_impl allocated the gate-up output intermediate_cache1 [M, top_k, N] and the down output
# intermediate_cache3 [M, top_k, H] as two tensors (fused_moe.py of v0.7.0-v0.7.3: three torch.empty calls); 0.8.0
# carves both out of one cache13 of M x top_k x max(N, H) (v0.8.0 fused_moe.py), the shape the fit above holds. So the
# earlier releases hold both widths at once: N + H where 0.8 holds the wider.
MOE_SHARED_CACHE_FROM = (0, 8)
# V0 (before 0.8) ran the profiling forward eagerly (no torch.compile): its transient peak follows the dense MLP
# width, about 8 bytes per scheduled token and intermediate channel on one GPU (the gate-up output, 4 bytes a
# channel, the activated half, 2, and copies around them): Qwen2.5-7B prefilling 32,768 tokens in one step on
# vLLM 0.6.3 leaves KV room for 64,400 tokens on an RTX 4090 (F042), 4.6 GiB of activations. V0 computed the
# logits after the forward's transients were freed, so the peak is the larger of the two parts, not their sum:
# 1.42 and 1.43 GiB logged for Qwen2.5-7B at 4096 and 6600 tokens (C064, F045), where the sampler's 1.31 GiB
# dominates, and 1.26 GiB for Llama-3-8B at 8192 (F036).
V0_FORWARD_BYTES_PER_CHANNEL = 8
# Of those 8 bytes only the MLP's own tensors are sharded by TP: Qwen2MLP.forward (model_executor/models/qwen2.py,
# llama.py alike) keeps the gate-up output (2 x I/TP values) referenced while SiluAndMul's output (I/TP) and down_proj
# run, 6 bytes per channel. The rest of the fit, the residual stream and the hidden states (full width on every
# rank, expressed per intermediate channel at TP=1), is not divided. Before this split TP=2 halved the whole peak:
# Qwen2.5-14B at 32,768 tokens logs 3.79 GiB at TP=1 and 2.84 at TP=2 (round-2 records G023 and G022, measured, not
# fitted on; the split predicts 3.38 and 2.11, the undivided part is larger than the TP=1 fit says).
V0_FORWARD_SHARDED_BYTES_PER_CHANNEL = 6
V1_ENGINE_FROM = (0, 8)
# Llama-3.2-Vision (mllama) on V0: enc_dec_model_runner.py profile_run gives each of the max_num_seqs dummy
# requests an image of max_num_tiles tiles of (image_size / patch)^2 + 1 tokens, and the vision encoder runs over
# all of them in the one profiling forward; its activations and the cross-attention states stay beside the
# decoder's. Fitted on the one log that prints the peak: 36.63 GiB at 128 requests on an H100, TP=1, 65,536
# tokens (field record F035; 819,712 vision tokens, 7.0 GiB of it the decoder's own V0 forward). Not divided by
# TP (the residual stream and the cross-attention states are replicated): an upper bound at TP > 1, where the
# logs show it running out of memory (F055 on V100s, F056 on A10s).
MLLAMA_V0_BYTES_PER_VISION_TOKEN = 38_800


# Model Runner V2's profile_run gives its dummy requests no sampling parameters (v1/worker/gpu/model_runner.py
# _dummy_sampler_run: compute_logits, then the Sampler over InputBatch.make_dummy, whose rows map to request slots that
# were never added, so every per-request state is the default: temperature 1, no top-k / top-p / min-p, no penalties,
# bias or bad words, no logprobs). What the profiled sampler allocates then depends on the release's
# Sampler.apply_sampling_params (v1/worker/gpu/sample/sampler.py):
# - 0.24.0 and 0.25.0 wheels (0.25: the first release with V2 the default for dense models, #44443): the logits are
#   always copied to a new fp32 tensor before the in-place ops, so the profile holds the model-dtype logits and that
#   fp32 copy: 2 + 4 = 6 bytes per logit (Gumbel's per-block maxima are [rows, vocab / 1024]).
# - 0.26.0 wheel: no copy ("The ops below upcast to fp32 internally, so the input dtype is kept and mutated in
#   place"; a clone only for raw logprobs); 0.27.0, 0.28.0 and 0.29.0 wheels: `if not
#   self._requires_logits_processing(...)` / `if not np.any(self.needs_logits_processing[...])`: return logits` before
#   the fp32 copy (#47711, merged 2026-07-27). Either way the profile holds only the [rows, vocab] logits in the model
#   dtype.
# - 0.30: the same, read in the logs (field3 H021, Qwen2.5-3B-AWQ eager, 256 requests x 151,936 logits: a 0.15 GiB
#   peak, the 0.09 GiB forward plus 0.07 GiB of 16-bit logits, where 13.5 B per logit gives 0.58).
# - 0.31 on: _dummy_sampler_run profiles the sampler a second time with the parameters the warm-up uses (vLLM pull
#   request 57926, "Profile the sampler with the params the warm-up actually uses"; field3 H007: 0.79 GiB peak less
#   its printed 0.35 GiB graph estimate, 0.44): the fitted figure again.
# V1's runner (the releases before 0.25, MoE and hybrid models up to 0.28, the drafters V2 does not run) keeps its
# sampler's figure above.
SAMPLER_V2_FP32_COPY_BYTES = 4.0
SAMPLER_V2_COPY_UNTIL = (0, 25)
SAMPLER_V2_LOGITS_ONLY_UNTIL = (0, 30)


def sampler_bytes_per_logit(
    version: tuple[int, int], *, flashinfer: bool = False, v2_runner: bool = False, logits_bytes: int = 2
) -> float:
    """Bytes per logit of the profiling run's sampler for a vLLM release (major, minor). `flashinfer`: the engine is
    known to sample with FlashInfer's top-k/top-p kernel, which holds the later releases' figure (the A100 logs of
    0.10.1 above fit a smaller one still). `v2_runner`: Model Runner V2 runs the model (memory/model_runner.py), whose
    profiled sampler holds the logits in the model dtype (`logits_bytes`), and up to 0.25 their fp32 copy."""
    if v2_runner and version <= SAMPLER_V2_LOGITS_ONLY_UNTIL:
        copy = SAMPLER_V2_FP32_COPY_BYTES if version <= SAMPLER_V2_COPY_UNTIL else 0.0
        return logits_bytes + copy
    old = version < SAMPLER_CHANGED_IN and not flashinfer
    return SAMPLER_BYTES_PER_LOGIT_OLD if old else SAMPLER_BYTES_PER_LOGIT


def moe_workspace_bytes(
    s: ModelSpec,
    tokens: int,
    tp: int,
    expert_parallel: bool,
    *,
    dp: int = 1,
    version: tuple[int, int] = (0, 33),
    triton_experts: bool = False,
) -> int:
    """The fused-MoE intermediate cache of the profiling run on one GPU (0 for a dense model), and with data
    parallelism the gathered input of all DP ranks' tokens (MOE_CHUNK_TOKENS above). `triton_experts`: the experts
    run vLLM's Triton kernel (16-bit or 8-bit weights), whose modular form holds two workspaces (MOE_MODULAR_FROM)."""
    if s.moe is None or not s.is_moe:
        return 0
    shard = 1 if expert_parallel else tp * dp
    up = 2 * s.moe.expert_intermediate // shard
    h = s.hidden_size
    if triton_experts and version >= MOE_MODULAR_FROM:
        width = max(up // 2, h) + max(up, h)
    else:
        width = max(up, h) if version >= MOE_SHARED_CACHE_FROM else up + h
    gathered = tokens * dp
    experts_tokens = min(gathered, MOE_CHUNK_TOKENS) if version <= MOE_CHUNKED_UNTIL else gathered
    dispatch = gathered * s.hidden_size * 2 if dp > 1 else 0
    return experts_tokens * s.moe.top_k * width * MOE_WORKSPACE_BYTES + dispatch


def mllama_v0_encoder_bytes(s: ModelSpec, max_num_seqs: int) -> int:
    """The vision-encoder part of V0's profiling forward for Llama-3.2-Vision (0 for other models)."""
    v = s.vision
    if v is None or v.style != "mllama":
        return 0
    return max_num_seqs * v.tiles * v.positions * MLLAMA_V0_BYTES_PER_VISION_TOKEN


def v0_forward_bytes(s: ModelSpec, tokens: int, tp: int) -> int:
    """The dense part of V0's eager profiling forward on one GPU: the MLP's tensors sharded by TP, the rest not."""
    width = max(s.layer_intermediate or (s.intermediate_size,))
    sharded = V0_FORWARD_SHARDED_BYTES_PER_CHANNEL
    return tokens * ((V0_FORWARD_BYTES_PER_CHANNEL - sharded) * width + sharded * width // tp)


# V1's profile_run runs the dummy forward over max_num_batched_tokens first and the sampler over max_num_seqs rows
# after it (v1/worker/gpu_model_runner.py profile_run: _dummy_run, then _dummy_sampler_run on the last hidden states),
# so the forward's own transients and the sampler's do not add up. The fit above (per token + per logit) is the
# sampler's side, where it dominates; with few sequences and many tokens the forward's MLP peak is the larger: a dense
# gated MLP (Qwen2MLP/LlamaMLP forward) keeps the gate-up output [T, 2 I / TP] alive while SiluAndMul writes [T, I / TP]
# (2 bytes each in 16 bit: 6 bytes per token and sharded channel), beside the layer's hidden states and residual
# [T, H] (4 bytes per token and hidden channel). field12 S003 (Qwen3-14B-AWQ on an L40S at 0.28, 8 sequences, 8,192
# tokens): 8,192 x (6 x 17,408 + 4 x 5,120) B = 0.95 GiB against the fit's 0.37. MoE models keep the fit (their
# experts' cache is the MoE term).
V1_FORWARD_BYTES_PER_SHARDED_CHANNEL = 6
V1_FORWARD_BYTES_PER_HIDDEN_CHANNEL = 4


def v1_forward_bytes(s: ModelSpec, tokens: int, tp: int) -> int:
    """The V1 profiling forward's dense-MLP peak on one GPU (0 for MoE models: their term is the MoE workspace)."""
    if s.moe is not None:
        return 0
    width = max(s.layer_intermediate or (s.intermediate_size,))
    return tokens * (
        V1_FORWARD_BYTES_PER_SHARDED_CHANNEL * width // tp + V1_FORWARD_BYTES_PER_HIDDEN_CHANNEL * s.hidden_size
    )


def activation_peak_bytes(
    s: ModelSpec,
    *,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    tp: int,
    last_stage: bool,
    version: tuple[int, int] = (0, 33),
    moe_kernel_without_workspace: bool = False,
    triton_experts: bool = False,
    expert_parallel: bool = False,
    v0: bool | None = None,
    encoder: EncoderPass | None = None,
    flashinfer_sampler: bool = False,
    dp: int = 1,
    v2_runner: bool = False,
    logits_bytes: int = 2,
) -> int:
    """Transient torch peak of the profiling run on one GPU (`v0`: the V0 engine ran it; default: before 0.8).
    `encoder`: the V1 engine's multimodal encoder pass (memory/encoder_profile.py), run before the language model's:
    the peak is the larger of the two, its cached outputs counted beside the language model's pass.

    The dense part does not shrink with TP: the logs show the same peak at TP=1, 2 and 4 (C020, C029, C030).
    `moe_kernel_without_workspace`: the experts run on a kernel without the fused-MoE intermediate cache (the OAI
    triton_kernels MXFP4 path: gpt-oss-20b logs the same 2.87 GiB peak at TP=1 and TP=2 on v0.19.0, llm-d-planner
    sweep, where the workspace term would add 0.35 and 0.18 GiB). `triton_experts`: they run vLLM's Triton kernel
    (moe_workspace_bytes).
    `v2_runner`: Model Runner V2 runs the model, whose profiled sampler holds `logits_bytes` a logit (the model dtype;
    sampler_bytes_per_logit).
    """
    t = max_num_batched_tokens
    moe = (
        0
        if moe_kernel_without_workspace
        else moe_workspace_bytes(s, t, tp, expert_parallel, dp=dp, version=version, triton_experts=triton_experts)
    )
    sampler = 0.0
    if last_stage and not s.pooling:  # a pooling model's profile runs the pooler, not the sampler (model/pooling.py)
        num_reqs = min(max_num_seqs, t)
        per_logit = sampler_bytes_per_logit(
            version, flashinfer=flashinfer_sampler, v2_runner=v2_runner, logits_bytes=logits_bytes
        )
        sampler = per_logit * num_reqs * s.vocab_size
    if (version < V1_ENGINE_FROM) if v0 is None else v0:
        forward = v0_forward_bytes(s, t, tp) + moe + mllama_v0_encoder_bytes(s, max_num_seqs)
        return int(max(forward, sampler))
    lm = int(max(t * ACT_BYTES_PER_TOKEN + moe + sampler, v1_forward_bytes(s, t, tp)))
    if encoder is None:
        return lm
    return max(lm + encoder.cached_outputs, encoder.peak)


# --- non-torch memory ----------------------------------------------------------------------------
# CUDA context growth, cuBLAS workspaces and, with TP > 1 on NVLink, custom all-reduce and NCCL buffers.
# From 0.19: TP=1 0.24-0.26 GiB on H100 (C013-C048); TP>1 over NVLink 2.06-2.21 GiB (C029, C030, C046, C047).
# Before 0.19 the logs show less: 0.13-0.14 GiB at TP=1 (C055-C058, v0.11), 0.55-1.38 GiB at TP=2 over NVLink
# (C059 v0.11, C001 v0.10.2), and 0.21 GiB at TP=4 over PCIe, where there is no custom all-reduce (C002, L40S,
# v0.11). No record shows TP>1 over PCIe from 0.19 on: that figure is C002's 0.21 GiB plus the 0.12 GiB by which
# the single-GPU figure grew from v0.11 to v0.19 (0.13 -> 0.25), i.e. 0.33, rounded to 0.3 GiB; an estimate.
NON_TORCH_SINGLE_GPU = int(0.25 * GiB)
NON_TORCH_TP_NVLINK = int(2.1 * GiB)
NON_TORCH_TP_PCIE = int(0.3 * GiB)
NON_TORCH_SINGLE_GPU_OLD = int(0.13 * GiB)
NON_TORCH_TP_NVLINK_OLD = int(1.0 * GiB)
NON_TORCH_TP_PCIE_OLD = int(0.21 * GiB)
NON_TORCH_CHANGED_IN = (0, 19)


# NCCL's NVLS buffers, set up at communicator init before NCCL 2.22. On Hopper over NVSwitch (the device reports
# CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED) NCCL runs its NVLS algorithm for more than two GPUs (src/transport/nvls.cc
# ncclNvlsInit returns without it when `gpuCount <= 2`) and ncclNvlsSetup binds, on every GPU of the communicator,
# nChannels x 2 x (buffSize + NVLS_MEM_ALIGN_SIZE) x nHeads bytes: 16 channels (NVLS_NCHANNELS on SM90) x 2 x (4 MiB
# SIMPLE buffer + 2 MiB) x 8 heads = 1.5 GiB for an 8-GPU node. Up to NCCL 2.21 a communicator connected every
# algorithm at init; 2.22 connects lazily (NCCL_RUNTIME_CONNECT, "significantly reducing GPU memory overhead", NVIDIA's
# 2.22 release blog). vLLM shipped NCCL 2.20-2.21 with torch 2.3.1-2.6.0 up to 0.8.x and 2.26 with torch 2.7.0 from
# 0.9.0 (requirements/cuda.txt of v0.8.5 and v0.9.0). vLLM opens at least two communicators over the TP group
# (PyNcclCommunicator, and torch's ProcessGroupNCCL for the group's device_group, which V0's broadcast_tensor_dict and
# the eager all-reduces use): >= 3 GiB of NVLS buffers beside the ring/tree buffers and the CUDA context. Logged:
# field F043 (Llama-3.1-70B, TP 8 on H200, V0 0.6.4.post1) prints non-torch 5.21-5.68 GiB on the seven worker ranks
# and 7.71 on the driver rank (rank 0, in the engine's own process), whose smaller block count vLLM gives every rank
# (executor determine_num_available_blocks: the min over workers). V0 takes the driver's figure; V1 (0.8.x) runs
# every rank in a worker process and takes the largest worker's. Checked against: field9 P007 (V0 0.5.3, TP 8 on H100;
# its 79,392 KV tokens imply 7.7 GiB with the logged weights), field F051 (V1 0.8.4, TP 16 over two 8 x H800 nodes;
# its tokens imply 5.1 GiB) and vllm-project/vllm#9699 (Llama-3.1-405B, TP 8 on H200, Oct 2024: 17,595 GPU blocks with
# NVLS, 227xx with NCCL_NVLS_ENABLE=0, i.e. 4.9-5.0 GiB of 1,032,192-byte blocks). The NVLS buffers grow with nHeads,
# the communicator's GPUs in the node (ncclNvlsSetup above; "nHeads 8 ... nvlsTotalSize 1610612736" in NCCL's own
# log), so a group of fewer than 8 such GPUs takes the excess of these figures over the 1.0 GiB NVLink one in
# proportion (no log of 3 to 7 of them before 0.9 has been read: that share is the assumption).
NVLS_EAGER_UNTIL = (0, 9)
NON_TORCH_NVLS_EAGER_V0 = int(7.71 * GiB)
NON_TORCH_NVLS_EAGER = int(5.68 * GiB)
NVLS_LOGGED_GPUS = 8


def nvls_eager(*, tp: int, multicast: bool, version: tuple[int, int]) -> bool:
    """NCCL builds its NVLS buffers at init: a TP group of more than two GPUs over NVSwitch with multicast (Hopper
    NVLink boards), on a release that ships NCCL <= 2.21 (vLLM < 0.9)."""
    return multicast and tp > 2 and version < NVLS_EAGER_UNTIL


def non_torch_bytes(
    *, tp: int, nvlink: bool, version: tuple[int, int] = (0, 33), multicast: bool = False, v0: bool = False
) -> int:
    """Memory vLLM reports as non-torch on one GPU (`multicast`: NVLink over NVSwitch with NVLS, Hopper and later;
    `v0`: the V0 engine, whose rank 0 runs in the engine's process)."""
    if nvls_eager(tp=tp, multicast=multicast, version=version):
        logged = NON_TORCH_NVLS_EAGER_V0 if v0 else NON_TORCH_NVLS_EAGER
        heads = min(tp, NVLS_LOGGED_GPUS)
        return NON_TORCH_TP_NVLINK_OLD + (logged - NON_TORCH_TP_NVLINK_OLD) * heads // NVLS_LOGGED_GPUS
    old = version < NON_TORCH_CHANGED_IN
    if tp <= 1:
        return NON_TORCH_SINGLE_GPU_OLD if old else NON_TORCH_SINGLE_GPU
    if not nvlink:
        return NON_TORCH_TP_PCIE_OLD if old else NON_TORCH_TP_PCIE
    return NON_TORCH_TP_NVLINK_OLD if old else NON_TORCH_TP_NVLINK


# --- CUDA-graph memory ---------------------------------------------------------------------------
# What vLLM >= 0.21 subtracts before sizing the KV cache is its own estimate (profile_cudagraph_memory), which
# grows with the number of layers captured per graph. Least-squares fit to the "Estimated CUDA graph memory:
# X GiB total" lines of the v0.19.0 sweep (17 configurations, 8 to 80 layers per GPU, e.g. 0.84 GiB for
# Llama-3.1-8B (C020), 1.13 for gemma-2-27b (C014), 1.63 for the 80-layer Kimi-Dev-72B at TP=2 (C034),
# 0.49 for 8 layers per stage at PP=4 (C028)): mean absolute error 0.10 GiB.
CUDAGRAPH_BASE = int(0.28 * GiB)
CUDAGRAPH_PER_LAYER = int(17 * MiB)


# vLLM's estimate is "first capture + (graphs - 1) x per graph" for each mode (v0.19 DEBUG lines,
# gpu_model_runner.py "Estimated PIECEWISE CUDA graph memory: 186.00 MiB first-capture + (83-1) x 6.00 MiB"), so
# the per-layer part grows with the number of captured sizes. The fit above saw 51 of them (max capture size 512);
# gpt-oss (1,024, 83 graphs) scales it up. Fewer graphs (a small max_num_seqs) scale the per-graph part down but
# keep the first capture: in that DEBUG line it is 186 MiB of the 186 + 50 x 6 MiB that 51 graphs would take (38 %).
# Keeping the whole 51-graph figure as a floor had over-reserved ~1.2 GiB for a 64-layer model at max_num_seqs 2
# (field6 L023 logs 0.14 GiB of CUDA graphs; field4 J052 and L023 started where the floor predicted no room).
CUDAGRAPH_FIT_GRAPHS = 51
CUDAGRAPH_FIRST_SHARE = 186 / (186 + 50 * 6)


# The V1 capture list per release (config _set_cudagraph_sizes in each tag), always filtered to sizes <=
# max_num_batched_tokens:
#   0.7 (V1 opt-in) to 0.9.x: [1, 2, 4] + range(8, 513, 8), whatever max_num_seqs (v0.8.5 config.py; 0.9 reads the
#     same 512 from SchedulerConfig.cuda_graph_sizes' default [512]): 67 graphs at max_num_seqs 1 as at 256;
#   0.10.0 to 0.11.0: cuda_graph_sizes defaults to [min(2 x max_num_seqs, 512)], still every multiple of 8 below it,
#     and [1, 2, 4] always ("Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 67/67" on v0.11.0 with the
#     default 1,024 sequences, QwenLM/Qwen3-VL#1684);
#   0.11.1 on: step 16 from 256 (vllm/config/vllm.py, max_cudagraph_capture_size): 51 graphs at 512 ("0/51" on
#     v0.21 at max_num_seqs 256, field7 M005; the v0.19 sweep's 51).
CAPTURE_BOUND_BY_SEQS_FROM = (0, 10, 0)
CAPTURE_LIST_CHANGED_IN = (0, 11, 1)
V1_EARLY_CAPTURE_MAX = 512


def cudagraph_max_capture(
    model: ModelSpec, cc: tuple[int, int] | None, version: tuple[int, ...], max_num_seqs: int
) -> int:
    """max_cudagraph_capture_size: min(2 x max_num_seqs, 512) (1,024 on Blackwell SM10x in 0.33), or the 1,024
    gpt-oss sets for itself (model_executor/models/config.py GptOssForCausalLMConfig; the v0.19 log prints
    "Overriding max cuda graph capture size to 1024 for performance"); 512 whatever max_num_seqs before 0.10."""
    if model.model_type == "gpt_oss":
        return 1024
    if version < CAPTURE_BOUND_BY_SEQS_FROM:
        return V1_EARLY_CAPTURE_MAX
    ceiling = 1024 if cc is not None and cc[0] == 10 and version >= (0, 33) else 512
    return min(2 * max_num_seqs, ceiling)


def cudagraph_capture_sizes(
    max_capture_size: int, *, max_num_batched_tokens: int, version: tuple[int, ...] = (0, 33)
) -> tuple[int, ...]:
    """The capture sizes, ascending: the list of the release (above) up to `max_capture_size`, <=
    max_num_batched_tokens: from 0.11.1 [1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16) with the max itself
    capped by max_num_batched_tokens; before, [1, 2, 4] + every multiple of 8 up to the max."""
    if version < CAPTURE_LIST_CHANGED_IN:
        return tuple(n for n in (1, 2, 4, *range(8, max_capture_size + 1, 8)) if n <= max_num_batched_tokens)
    top = min(max_capture_size, max_num_batched_tokens)
    found = {n for n in (1, 2, 4) if n <= top}
    found |= set(range(8, min(256, top + 1), 8)) | set(range(256, top + 1, 16))
    return tuple(sorted(found | {top}))


def cudagraph_capture_count(
    max_capture_size: int, *, max_num_batched_tokens: int, version: tuple[int, ...] = (0, 33)
) -> int:
    """Number of capture sizes (cudagraph_capture_sizes)."""
    return len(
        cudagraph_capture_sizes(max_capture_size, max_num_batched_tokens=max_num_batched_tokens, version=version)
    )


# From 0.11.0 the V1 default cudagraph_mode is FULL_AND_PIECEWISE (vllm-project/vllm#25444): beside the PIECEWISE list
# above, one FULL graph per capture size that a uniform decode batch fills, uniform_decode_query_len <= size <=
# max_num_seqs x uniform_decode_query_len (gpu_model_runner capture_model `decode_cudagraph_batch_sizes`; 1 without
# speculative decoding). profile_cudagraph_memory (v1/worker/gpu_model_runner.py, 0.19-0.33) measures, per mode,
# the first capture and the second, and returns max(first captures) + sum over modes of per_graph x (len(descs) - 1):
# the FULL list's graphs count as the PIECEWISE list's do. 35 FULL graphs at the default 256 sequences, 51 at the
# sweep's 1,024 (the fit below saw 50 + 50 graphs after the first ones).
FULL_DECODE_GRAPHS_FROM = (0, 11, 0)


def cudagraph_decode_sizes(
    max_capture_size: int, *, max_num_seqs: int, max_num_batched_tokens: int, version: tuple[int, ...] = (0, 33)
) -> tuple[int, ...] | None:
    """The FULL uniform-decode capture sizes: the release's list (cudagraph_capture_sizes) of at most max_num_seqs
    tokens; None before FULL_AND_PIECEWISE became the default (no FULL list)."""
    if version < FULL_DECODE_GRAPHS_FROM:
        return None
    decode_top = min(max_num_seqs, max_capture_size)
    return cudagraph_capture_sizes(decode_top, max_num_batched_tokens=max_num_batched_tokens, version=version)


def cudagraph_decode_count(
    max_capture_size: int, *, max_num_seqs: int, max_num_batched_tokens: int, version: tuple[int, ...] = (0, 33)
) -> int | None:
    """Number of FULL uniform-decode graphs (cudagraph_decode_sizes); None before FULL_AND_PIECEWISE."""
    sizes = cudagraph_decode_sizes(
        max_capture_size, max_num_seqs=max_num_seqs, max_num_batched_tokens=max_num_batched_tokens, version=version
    )
    return None if sizes is None else len(sizes)


# The V0 engine (worker/model_runner.py capture_model up to 0.6.x, config.py _set_cudagraph_sizes with VLLM_USE_V1=0
# from 0.7 on) captured decode graphs only, over [1, 2, 4] + [8 * i for i in range(1, 1025)] up to the smallest of
# those sizes >= max_num_seqs: 35 graphs at the default 256 (largest batch 256), whatever max_num_batched_tokens.
V0_CAPTURE_SIZES = (1, 2, 4, *range(8, 8 * 1024 + 1, 8))


def v0_cudagraph_capture_count(max_num_seqs: int) -> int:
    """Number of decode graphs the V0 engine captures for `max_num_seqs` (_get_max_graph_batch_size's padding)."""
    top = next((n for n in V0_CAPTURE_SIZES if n >= max_num_seqs), V0_CAPTURE_SIZES[-1])
    return sum(1 for n in V0_CAPTURE_SIZES if n <= top)


# Short capture lists (memfix, 2026-12-02). profile_cudagraph_memory (v1/worker/gpu_model_runner.py, 0.19-0.33)
# captures, per mode, the first two of its descriptors, largest first (capture_model captures the sizes in descending
# order so the smaller ones reuse the pool), and reads each one's cost from the device's free memory: `first_capture`
# is the pool the largest batch's forward allocates (its intermediate tensors, [tokens, width] per captured piece),
# `per_graph = max(second, 1 MiB)` what the second-largest adds ("Use at least 1 MiB per graph for driver overhead").
# Both are the captured batches' tensors, so they scale with those batches' tokens, not only with the number of
# graphs: the fit's first capture was at 512 tokens and its per-graph figure at 496. Logged estimates with a largest
# capture of 8-128 tokens are 0.13-0.17 GiB whatever the depth (field2 G014 0.13 at 28 layers and G040 0.13 at 30,
# both 64 tokens; G012 0.14 at 48 layers, 128 tokens; G010 0.15 at 48 layers, 32 tokens; field8 N020 0.17 at 64
# layers, 8 tokens), where the graph-count rule gave 0.50-0.72: what does not scale is about 0.12 GiB (CUDAGRAPH_
# FLOOR, the smallest of them less ~1 MiB a layer), the rest of the fitted base and the per-layer part follow the
# tokens, capped at the fit's (above 512 the count rule, which the fit covers, stays).
CUDAGRAPH_FIT_LARGEST = 512
CUDAGRAPH_FIT_SECOND = 496
CUDAGRAPH_FLOOR = int(0.12 * GiB)
CUDAGRAPH_MIN_PER_GRAPH = MiB


def _second_largest(sizes: tuple[int, ...] | None) -> int:
    """The size profile_cudagraph_memory's second capture runs at (the fit's 496 where the list is not given)."""
    if sizes is None:
        return CUDAGRAPH_FIT_SECOND
    return sizes[-2] if len(sizes) > 1 else 0


def cudagraph_bytes(
    *,
    layers_on_gpu: int,
    enforce_eager: bool,
    graphs: int = CUDAGRAPH_FIT_GRAPHS,
    full_graphs: int | None = None,
    sizes: tuple[int, ...] | None = None,
    full_sizes: tuple[int, ...] | None = None,
) -> int:
    """vLLM's CUDA-graph memory estimate for one GPU (0 with --enforce-eager): the fitted base plus the per-layer
    part, whose first-capture share stays and whose per-graph share follows the number of graphs (above the 51
    graphs of the fit the whole part scales, the larger figure). `full_graphs`: the FULL decode graphs beside the
    `graphs` PIECEWISE ones (cudagraph_decode_count; the fit saw 51 of each, so the per-graph share follows the
    graphs after the first of both lists); None: a list alone, the per-graph share follows `graphs`. `sizes` /
    `full_sizes`: the lists themselves (ascending; they then give the counts), whose largest and second-largest
    batches scale the first capture, the fitted base above CUDAGRAPH_FLOOR and the per-graph share by their tokens
    (above: short lists); without them the fit's 512 and 496 tokens are assumed."""
    if enforce_eager:
        return 0
    if sizes is not None:
        graphs, full_graphs = len(sizes), None if full_sizes is None else len(full_sizes)
    modes = [(graphs, _second_largest(sizes))]
    if full_graphs is not None:
        modes.append((full_graphs, _second_largest(full_sizes) if sizes is not None else CUDAGRAPH_FIT_SECOND))
    fitted = (CUDAGRAPH_FIT_GRAPHS - 1) * len(modes)  # graphs after the first that the fit saw
    after_first = sum(max(0, n - 1) for n, _ in modes)
    per_graph = after_first / fitted
    # the per-graph share by the second capture's tokens, and the first capture's by the largest batch's (1 as fitted)
    graph_tokens = sum(max(0, n - 1) * min(second, CUDAGRAPH_FIT_SECOND) for n, second in modes)
    per_graph_tokens = graph_tokens / (fitted * CUDAGRAPH_FIT_SECOND)
    first = 1.0 if sizes is None else min(sizes[-1], CUDAGRAPH_FIT_LARGEST) / CUDAGRAPH_FIT_LARGEST
    per_layer = CUDAGRAPH_PER_LAYER * layers_on_gpu
    if per_graph > 1:  # above the fit's graphs the whole per-layer part scales with them, as fitted
        layer_part = int(per_layer * max(per_graph, CUDAGRAPH_FIRST_SHARE + (1 - CUDAGRAPH_FIRST_SHARE) * per_graph))
    else:
        layer_part = int(per_layer * (CUDAGRAPH_FIRST_SHARE * first + (1 - CUDAGRAPH_FIRST_SHARE) * per_graph_tokens))
        if per_layer * (1 - CUDAGRAPH_FIRST_SHARE) * per_graph_tokens < after_first * CUDAGRAPH_MIN_PER_GRAPH:
            layer_part = int(per_layer * CUDAGRAPH_FIRST_SHARE * first) + after_first * CUDAGRAPH_MIN_PER_GRAPH
    return CUDAGRAPH_FLOOR + int((CUDAGRAPH_BASE - CUDAGRAPH_FLOOR) * first) + layer_part
