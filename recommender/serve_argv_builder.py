"""EngineFlags -> a `vllm serve MODEL ...` argv (pure): the reverse of serve_args.parse_serve_argv, for the
commands the plan, the reports and `check`'s reconstructed command print."""

from __future__ import annotations

from recommender.memory.engine import EngineFlags


def build_serve_argv(model: str, flags: EngineFlags) -> list[str]:
    """`vllm serve MODEL ...` as an argv list: every memory-relevant flag the plan sets, pinned explicitly (every
    flag emitted here exists from 0.8 to 0.33; see profiles/vllm-flags.yaml)."""
    argv = ["vllm", "serve", model]
    valued: list[tuple[str, object, bool]] = [
        ("--tensor-parallel-size", flags.tensor_parallel_size, flags.tensor_parallel_size > 1),
        ("--pipeline-parallel-size", flags.pipeline_parallel_size, flags.pipeline_parallel_size > 1),
        ("--data-parallel-size", flags.data_parallel_size, flags.data_parallel_size > 1),
        ("--enable-expert-parallel", None, flags.enable_expert_parallel),
        ("--quantization", flags.quantization, flags.quantization is not None),
        ("--dtype", flags.dtype, flags.dtype != "auto"),
        ("--kv-cache-dtype", flags.kv_cache_dtype, flags.kv_cache_dtype != "auto"),
        ("--kv-cache-memory-bytes", flags.kv_cache_memory_bytes, flags.kv_cache_memory_bytes is not None),
        (
            "--gpu-memory-utilization",
            flags.gpu_memory_utilization,
            flags.kv_cache_memory_bytes is None and flags.gpu_memory_utilization is not None,
        ),
        ("--max-model-len", flags.max_model_len, flags.max_model_len is not None),
        ("--max-num-seqs", flags.max_num_seqs, flags.max_num_seqs is not None),
        ("--max-num-batched-tokens", flags.max_num_batched_tokens, flags.max_num_batched_tokens is not None),
        ("--enable-chunked-prefill", None, flags.enable_chunked_prefill is True),
        ("--no-enable-chunked-prefill", None, flags.enable_chunked_prefill is False),
        ("--block-size", flags.block_size, flags.block_size is not None),
        ("--enforce-eager", None, flags.enforce_eager),
        ("--cpu-offload-gb", flags.cpu_offload_gb, bool(flags.cpu_offload_gb)),
        ("--enable-lora", None, flags.enable_lora),
        ("--max-loras", flags.max_loras, flags.enable_lora and flags.max_loras != 1),
        ("--max-lora-rank", flags.max_lora_rank, flags.enable_lora and flags.max_lora_rank != 16),
        # what a deployment wrote about its multimodal towers (plans never set these; --language-model-only is 0.15+)
        ("--language-model-only", None, flags.language_model_only),
        ("--limit-mm-per-prompt", flags.limit_mm_per_prompt, flags.limit_mm_per_prompt is not None),
        ("--mm-encoder-tp-mode", flags.mm_encoder_tp_mode, flags.mm_encoder_tp_mode is not None),
        # a deployment's CUDA-graph capture settings, as written (memory/capture_config.py; plans never set these)
        ("-O", flags.optimization_level, flags.optimization_level is not None),
        ("--compilation-config", flags.compilation_config, flags.compilation_config is not None),
        (
            "--max-cudagraph-capture-size",
            flags.max_cudagraph_capture_size,
            flags.max_cudagraph_capture_size is not None,
        ),
    ]
    for flag, value, wanted in valued:
        if wanted:
            argv.extend([flag] if value is None else [flag, str(value)])
    if flags.cudagraph_capture_sizes:
        argv += ["--cudagraph-capture-sizes", *(str(n) for n in flags.cudagraph_capture_sizes)]
    return argv
