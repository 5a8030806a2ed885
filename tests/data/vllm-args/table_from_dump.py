"""Write profiles/vllm-flags.yaml's `flags:` block from a dump of vLLM's parser plus the curated history below.

    python tests/data/vllm-args/table_from_dump.py > profiles/vllm-flags.yaml

The dump (vllm-0.33.0-serve.json) says which options vLLM 0.33 accepts, which take a value, and which boolean
spellings switch a setting off. HISTORY adds what a single release's parser cannot say: flags that older releases
accepted and 0.33 no longer does (`removed`), and flags introduced after the oldest modelled release (`since`),
each with its source. tests/test_serve_args.py checks the committed table against the dump.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent

HEADER = """\
# vLLM `serve` command-line flags, per release: which options exist, which take a value, which switch a boolean
# off, and the release that introduced (`since`) or removed (`removed`) them. `check` and `explain` parse a command
# line with this table the way vLLM's argparse-based FlexibleArgumentParser does (dash or underscore spellings,
# `--flag=value`, unique-prefix abbreviations, --no-/--disable- booleans, last one wins).
#
# Sources:
# - every flag vLLM 0.33.0 accepts, with its kind: tests/data/vllm-args/vllm-0.33.0-serve.json, a dump of vLLM
#   0.33.0's own parser (tests/data/vllm-args/dump_vllm_args.py); tests/test_serve_args.py keeps them equal.
# - `removed` / `since`: shared/spec/vllm-memory-model.md sections 6.1-6.3 (vLLM 0.33.0 engine/arg_utils.py and
#   config/*.py): --swap-space gone from EngineArgs since 0.18.0 (unsloth-zoo#1210, vllm#36216);
#   --max-seq-len-to-capture removed by vllm#25543 in 0.11.0 (NeMo-Curator#1200); the V0-engine flags
#   --num-scheduler-steps and --use-v2-block-manager went with the V0 engine (0.11.0); --speculative-config from 0.8.2,
#   --speculative-model / --num-speculative-tokens (0.4.1) and --speculative-draft-tensor-parallel-size (0.5.1) until
#   0.8.3 (the v0.4.0-v0.8.3 tags' engine/arg_utils.py); --kv-cache-memory-bytes
#   added in 0.10.2; the data-parallel options, --enable-expert-parallel, --headless and --api-server-count: the
#   first tagged source (v0.4.0 ... v0.14.0rc0, vllm/engine/arg_utils.py and entrypoints/) whose parser has them;
#   the other options releases 0.4-0.13 had and 0.33 has not (--worker-use-ray, --engine-use-ray, --preemption-mode,
#   --guided-decoding-backend, ...): the first tag naming each and the first tag after the last one that does
#   (REMOVED_FROM_TAGS in tests/data/vllm-args/table_from_dump.py, read from those tags' engine/arg_utils.py and
#   entrypoints/openai/cli_args.py).
# - `choices`: a list is vLLM 0.33.0's argparse choices (from the dump; not where a type function rewrites the word);
#   a mapping gives each list from the release it starts at (--block-size, --kv-cache-dtype: each tag's arg_utils.py
#   `choices`, then config's BlockSize / CacheDType Literal; null where no list applies or is known). Outside them a
#   value is not judged.
# - `valued_bool`: the releases [first, until) whose StoreBoolean action reads an optional true/false after the
#   option (`--enable-chunked-prefill false` is off there; from 0.8.5 on vLLM refuses the stray word).
# - A flag without `since` existed before the oldest release modelled (0.4); its first release is not recorded, so
#   `check` never fails a command for using it early.
#
# takes: value (one argument; nargs '+' or '?' as noted), flag (no argument), bool (no argument; `negated` lists the
# spellings that set it to False). dest: the argparse destination (EngineArgs / FrontendArgs field).
"""

# flag -> extra keys (history not visible in one release's parser), with the kind for flags 0.33 no longer has.
# `since`, `choices` by release and `valued_bool` read from the tagged sources of vLLM (vllm/engine/arg_utils.py,
# vllm/config.py or vllm/config/cache.py, vllm/entrypoints/openai/cli_args.py, vllm/entrypoints/cli/serve.py at
# each tag v0.4.0 ... v0.14.0rc0, in a GitHub mirror of vllm-project/vllm): the first tag whose parser has the option.
BLOCK_SIZES: dict[str, object] = {  # argparse `choices` of --block-size, from each tag on (null: not known)
    "0.4.0": [8, 16, 32, 128],
    "0.4.1": [8, 16, 32],
    "0.5.5": [8, 16, 32, 128, 256, 512, 1024, 2048],
    "0.6.0": [8, 16, 32],
    "0.6.4": [8, 16, 32, 64, 128],
    "0.6.5": [8, 16, 32],
    "0.6.6": [8, 16, 32, 64, 128],
    "0.8.5": [1, 8, 16, 32, 64, 128],  # CacheConfig's BlockSize Literal from here on
    "0.11.1": [1, 8, 16, 32, 64, 128, 256],
    "0.14.1": None,  # the last tag read is 0.14.0rc0; 0.33.0 takes any int > 0 (CacheConfig Field(gt=0))
}
KV_CACHE_DTYPES: dict[str, object] = {  # --kv-cache-dtype: arg_utils.py `choices`, then config's CacheDType Literal
    "0.4.0": ["auto", "fp8_e5m2"],
    "0.4.1": ["auto", "fp8"],
    "0.4.3": ["auto", "fp8", "fp8_e5m2", "fp8_e4m3"],
    "0.8.5": ["auto", "fp8", "fp8_e4m3", "fp8_e5m2"],
    "0.10.0": ["auto", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"],
    "0.11.0": ["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"],
    "0.11.1": ["auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla"],
    "0.14.1": None,  # not known after 0.14.0rc0; 0.33.0's parser has no choices (a str, validated later)
}
# The first tag (v0.4.1 ... v0.14.0rc0; a 4-part tag such as v0.10.1.1 written as its first three parts) whose
# engine/arg_utils.py, config.py or config/*.py, entrypoints/openai/cli_args.py, api_server.py or cli/serve.py names
# the option, one of its spellings or its argparse destination: never later than the release that added it, so a
# command is never refused for a flag its release had (an earlier first mention only misses a refusal). Options
# named nowhere up to v0.14.0rc0 (added after it, or defined elsewhere) get no `since`.
SINCE_FROM_TAGS: dict[str, str] = {  # generated: see the comment above
    "--additional-config": "0.7.0",
    "--aggregate-engine-logging": "0.11.1",
    "--all2all-backend": "0.11.1",
    "--allowed-local-media-path": "0.6.4",
    "--allowed-media-domains": "0.11.0",
    "--async-scheduling": "0.10.0",
    "--attention-backend": "0.13.0",
    "--attention-config": "0.13.0",
    "--chat-template-content-format": "0.6.5",
    "--collect-detailed-traces": "0.5.5",
    "--compilation-config": "0.6.5",
    "--config-format": "0.6.1",
    "--cp-kv-cache-interleave-size": "0.12.0",
    "--cpu-offload-gb": "0.5.3",
    "--cudagraph-capture-sizes": "0.6.5",
    "--cudagraph-metrics": "0.13.0",
    "--data-parallel-external-lb": "0.9.2",
    "--data-parallel-hybrid-lb": "0.10.0",
    "--data-parallel-rank": "0.8.0",
    "--dbo-decode-token-threshold": "0.11.0",
    "--dbo-prefill-token-threshold": "0.11.0",
    "--dcp-kv-cache-interleave-size": "0.11.1",
    "--decode-context-parallel-size": "0.10.2",
    "--default-mm-loras": "0.10.0",
    "--disable-cascade-attn": "0.8.2",
    "--disable-chunked-mm-input": "0.8.4",
    "--disable-fastapi-docs": "0.6.2",
    "--disable-hybrid-kv-cache-manager": "0.9.1",
    "--disable-nccl-for-dp-synchronization": "0.11.1",
    "--disable-sliding-window": "0.4.3",
    "--disable-uvicorn-access-log": "0.8.2",
    "--distributed-executor-backend": "0.4.3",
    "--ec-transfer-config": "0.11.1",
    "--enable-auto-tool-choice": "0.6.0",
    "--enable-dbo": "0.11.0",
    "--enable-eplb": "0.9.2",
    "--enable-force-include-usage": "0.9.2",
    "--enable-layerwise-nvtx-tracing": "0.13.0",
    "--enable-log-outputs": "0.10.1",
    "--enable-mfu-metrics": "0.14.0",
    "--enable-mm-embeds": "0.11.1",
    "--enable-prompt-embeds": "0.9.0",
    "--enable-prompt-tokens-details": "0.6.4",
    "--enable-request-id-headers": "0.6.6",
    "--enable-server-load-tracking": "0.8.0",
    "--enable-sleep-mode": "0.7.0",
    "--enable-ssl-refresh": "0.8.0",
    "--enable-tokenizer-info-endpoint": "0.10.0",
    "--eplb-config": "0.10.2",
    "--exclude-tools-when-tool-choice-none": "0.10.1",
    "--expert-placement-strategy": "0.11.0",
    "--fully-sharded-loras": "0.4.2",
    "--generation-config": "0.6.6",
    "--h11-max-header-count": "0.10.1",
    "--h11-max-incomplete-event-size": "0.10.1",
    "--hf-config-path": "0.8.0",
    "--hf-overrides": "0.6.4",
    "--hf-token": "0.8.4",
    "--ignore-patterns": "0.5.3",
    "--interleave-mm-strings": "0.10.0",
    "--io-processor-plugin": "0.10.2",
    "--kv-cache-metrics": "0.12.0",
    "--kv-cache-metrics-sample": "0.12.0",
    "--kv-events-config": "0.9.0",
    "--kv-offloading-backend": "0.11.1",
    "--kv-offloading-size": "0.11.1",
    "--kv-sharing-fast-prefill": "0.10.1",
    "--kv-transfer-config": "0.6.5",
    "--limit-mm-per-prompt": "0.5.5",
    "--log-config-file": "0.9.1",
    "--log-error-stack": "0.10.2",
    "--logits-processors": "0.6.5",
    "--logprobs-mode": "0.10.0",
    "--long-prefill-token-threshold": "0.7.3",
    "--mamba-block-size": "0.11.1",
    "--mamba-cache-dtype": "0.10.1",
    "--mamba-ssm-cache-dtype": "0.10.1",
    "--master-addr": "0.11.1",
    "--master-port": "0.11.1",
    "--max-cudagraph-capture-size": "0.11.1",
    "--media-io-kwargs": "0.9.2",
    "--mm-encoder-attn-backend": "0.11.1",
    "--mm-encoder-tp-mode": "0.10.2",
    "--mm-processor-cache-gb": "0.10.1",
    "--mm-processor-cache-type": "0.11.0",
    "--mm-processor-kwargs": "0.6.2",
    "--mm-shm-cache-max-object-size-mb": "0.11.0",
    "--model-impl": "0.7.2",
    "--model-loader-extra-config": "0.4.1",
    "--nnodes": "0.11.1",
    "--node-rank": "0.11.1",
    "--num-gpu-blocks-override": "0.4.1",
    "--optimization-level": "0.12.0",
    "--otlp-traces-endpoint": "0.5.1",
    "--override-generation-config": "0.7.1",
    "--pooler-config": "0.6.4",
    "--prefill-context-parallel-size": "0.12.0",
    "--prefix-caching-hash-algo": "0.8.3",
    "--profiler-config": "0.13.0",
    "--pt-load-map-location": "0.9.0",
    "--reasoning-parser": "0.7.1",
    "--reasoning-parser-plugin": "0.11.1",
    "--return-tokens-as-token-ids": "0.5.4",
    "--runner": "0.6.5",
    "--safetensors-load-strategy": "0.10.2",
    "--scheduler-cls": "0.7.3",
    "--scheduling-policy": "0.6.3",
    "--show-hidden-metrics-for-version": "0.8.0",
    "--skip-mm-profiling": "0.10.1",
    "--skip-tokenizer-init": "0.4.1",
    "--stream-interval": "0.11.1",
    "--structured-outputs-config": "0.11.0",
    "--tokens-only": "0.11.1",
    "--tool-call-parser": "0.6.0",
    "--tool-parser-plugin": "0.6.3",
    "--tool-server": "0.10.1",
    "--trust-request-chat-template": "0.11.0",
    "--ubatch-size": "0.14.0",
    "--uds": "0.10.1",
    "--use-tqdm-on-load": "0.8.0",
    "--video-pruning-rate": "0.11.0",
    "--worker-cls": "0.6.5",
    "--worker-extension-cls": "0.8.0",
}
# Options that releases v0.4.0 ... v0.13.0 had and 0.33 no longer has, each with the first tag whose
# engine/arg_utils.py or entrypoints/openai/cli_args.py names it (`since`, none when v0.4.0 already does) and the
# first tag after the last one that does (`removed`); the kind from its add_argument at that last tag (store_true: a
# flag; BooleanOptionalAction or a bool dataclass field: a bool with --no-; nargs as written, a list field '+').
# Generated from the v0.4.0 ... v0.14.0rc0 tags (a GitHub mirror of vllm-project/vllm): the option strings of those
# two files, plus EngineArgs / FrontendArgs fields where the parser is built from them (get_kwargs). Options still
# named at v0.14.0rc0 and gone in 0.33 (--calculate-kv-scales, --disable-frontend-multiprocessing,
# --logits-processor-pattern, --max-num-partial-prefills, --max-long-partial-prefills, --override-attention-dtype) are
# left out: the release that dropped them is not read here.
REMOVED_FROM_TAGS: dict[str, dict[str, object]] = {
    "--chat-template-text-format": {
        "dest": "chat_template_text_format",
        "takes": "value",
        "since": "0.6.4",
        "removed": "0.6.5",
    },
    "--cuda-graph-sizes": {
        "dest": "cuda_graph_sizes",
        "takes": "value",
        "nargs": "+",
        "since": "0.9.0",
        "removed": "0.13.0",
    },
    "--device": {"dest": "device", "takes": "value", "removed": "0.10.0"},
    "--disable-async-output-proc": {
        "dest": "disable_async_output_proc",
        "takes": "flag",
        "since": "0.6.0",
        "removed": "0.11.0",
    },
    "--disable-image-processor": {
        "dest": "disable_image_processor",
        "takes": "flag",
        "since": "0.5.0",
        "removed": "0.5.1",
    },
    "--disable-logprobs-during-spec-decoding": {
        "dest": "disable_logprobs_during_spec_decoding",
        "takes": "value",
        "nargs": "?",
        "since": "0.5.3",
        "removed": "0.8.3",
    },
    "--disable-mm-preprocessor-cache": {
        "dest": "disable_mm_preprocessor_cache",
        "takes": "flag",
        "since": "0.6.6",
        "removed": "0.13.0",
    },
    "--enable-lora-bias": {
        "dest": "enable_lora_bias",
        "takes": "bool",
        "negated": ["--no-enable-lora-bias"],
        "since": "0.6.4",
        "removed": "0.11.1",
    },
    "--enable-multimodal-encoder-data-parallel": {
        "dest": "enable_multimodal_encoder_data_parallel",
        "takes": "flag",
        "since": "0.9.1",
        "removed": "0.13.0",
    },
    "--enable-prompt-adapter": {
        "dest": "enable_prompt_adapter",
        "takes": "flag",
        "since": "0.5.2",
        "removed": "0.10.2",
    },
    "--enable-reasoning": {
        "dest": "enable_reasoning",
        "takes": "bool",
        "negated": ["--no-enable-reasoning"],
        "since": "0.7.1",
        "removed": "0.10.0",
    },
    "--engine-use-ray": {"dest": "engine_use_ray", "takes": "flag", "removed": "0.6.2"},
    "--eplb-log-balancedness": {
        "dest": "eplb_log_balancedness",
        "takes": "bool",
        "negated": ["--no-eplb-log-balancedness"],
        "since": "0.9.2",
        "removed": "0.12.0",
    },
    "--eplb-step-interval": {"dest": "eplb_step_interval", "takes": "value", "since": "0.9.2", "removed": "0.12.0"},
    "--eplb-window-size": {"dest": "eplb_window_size", "takes": "value", "since": "0.9.2", "removed": "0.12.0"},
    "--expand-tools-even-if-tool-choice-none": {
        "dest": "expand_tools_even_if_tool_choice_none",
        "takes": "flag",
        "since": "0.9.2",
        "removed": "0.10.0",
    },
    "--forced-num-gpu-blocks": {"dest": "forced_num_gpu_blocks", "takes": "value", "removed": "0.4.1"},
    "--guided-decoding-backend": {
        "dest": "guided_decoding_backend",
        "takes": "value",
        "since": "0.4.1",
        "removed": "0.12.0",
    },
    "--guided-decoding-disable-additional-properties": {
        "dest": "guided_decoding_disable_additional_properties",
        "takes": "value",
        "since": "0.9.0",
        "removed": "0.12.0",
    },
    "--guided-decoding-disable-any-whitespace": {
        "dest": "guided_decoding_disable_any_whitespace",
        "takes": "value",
        "since": "0.9.0",
        "removed": "0.12.0",
    },
    "--guided-decoding-disable-fallback": {
        "dest": "guided_decoding_disable_fallback",
        "takes": "value",
        "since": "0.9.0",
        "removed": "0.12.0",
    },
    "--image-feature-size": {"dest": "image_feature_size", "takes": "value", "removed": "0.5.1"},
    "--image-input-shape": {"dest": "image_input_shape", "takes": "value", "removed": "0.5.1"},
    "--image-input-type": {"dest": "image_input_type", "takes": "value", "removed": "0.5.1"},
    "--image-processor": {"dest": "image_processor", "takes": "value", "since": "0.5.0", "removed": "0.5.1"},
    "--image-processor-revision": {
        "dest": "image_processor_revision",
        "takes": "value",
        "since": "0.5.0",
        "removed": "0.5.1",
    },
    "--image-token-id": {"dest": "image_token_id", "takes": "value", "removed": "0.5.1"},
    "--long-lora-scaling-factors": {
        "dest": "long_lora_scaling_factors",
        "takes": "value",
        "nargs": "+",
        "since": "0.4.3",
        "removed": "0.10.0",
    },
    "--lora-extra-vocab-size": {"dest": "lora_extra_vocab_size", "takes": "value", "removed": "0.12.0"},
    "--max-context-len-to-capture": {"dest": "max_context_len_to_capture", "takes": "value", "removed": "0.6.4"},
    "--max-prompt-adapter-token": {
        "dest": "max_prompt_adapter_token",
        "takes": "value",
        "since": "0.5.2",
        "removed": "0.10.0",
    },
    "--max-prompt-adapters": {"dest": "max_prompt_adapters", "takes": "value", "since": "0.5.2", "removed": "0.10.0"},
    "--mm-cache-preprocessor": {"dest": "mm_cache_preprocessor", "takes": "flag", "since": "0.6.5", "removed": "0.6.6"},
    "--multi-step-stream-outputs": {
        "dest": "multi_step_stream_outputs",
        "takes": "bool",
        "negated": ["--no-multi-step-stream-outputs"],
        "since": "0.6.2",
        "removed": "0.10.1",
    },
    "--ngram-prompt-lookup-max": {
        "dest": "ngram_prompt_lookup_max",
        "takes": "value",
        "since": "0.4.2",
        "removed": "0.8.3",
    },
    "--ngram-prompt-lookup-min": {
        "dest": "ngram_prompt_lookup_min",
        "takes": "value",
        "since": "0.4.2",
        "removed": "0.8.3",
    },
    "--num-lookahead-slots": {"dest": "num_lookahead_slots", "takes": "value", "since": "0.4.1", "removed": "0.12.0"},
    "--num-redundant-experts": {
        "dest": "num_redundant_experts",
        "takes": "value",
        "since": "0.9.2",
        "removed": "0.12.0",
    },
    "--override-neuron-config": {
        "dest": "override_neuron_config",
        "takes": "value",
        "since": "0.6.0",
        "removed": "0.10.2",
    },
    "--override-pooler-config": {
        "dest": "override_pooler_config",
        "takes": "value",
        "since": "0.6.4",
        "removed": "0.12.0",
    },
    "--preemption-mode": {"dest": "preemption_mode", "takes": "value", "since": "0.5.1", "removed": "0.11.0"},
    "--prompt-adapters": {
        "dest": "prompt_adapters",
        "takes": "value",
        "nargs": "+",
        "since": "0.5.2",
        "removed": "0.10.0",
    },
    "--qlora-adapter-name-or-path": {
        "dest": "qlora_adapter_name_or_path",
        "takes": "value",
        "since": "0.5.0",
        "removed": "0.10.0",
    },
    "--quantization-param-path": {
        "dest": "quantization_param_path",
        "takes": "value",
        "since": "0.4.1",
        "removed": "0.7.0",
    },
    "--rope-scaling": {"dest": "rope_scaling", "takes": "value", "since": "0.4.3", "removed": "0.11.1"},
    "--rope-theta": {"dest": "rope_theta", "takes": "value", "since": "0.5.0", "removed": "0.11.1"},
    "--scheduler-delay-factor": {"dest": "scheduler_delay_factor", "takes": "value", "removed": "0.11.0"},
    "--spec-decoding-acceptance-method": {
        "dest": "spec_decoding_acceptance_method",
        "takes": "value",
        "since": "0.5.1",
        "removed": "0.8.3",
    },
    "--speculative-disable-by-batch-size": {
        "dest": "speculative_disable_by_batch_size",
        "takes": "value",
        "since": "0.4.3",
        "removed": "0.8.3",
    },
    "--speculative-disable-mqa-scorer": {
        "dest": "speculative_disable_mqa_scorer",
        "takes": "flag",
        "since": "0.6.3",
        "removed": "0.8.3",
    },
    "--speculative-max-model-len": {
        "dest": "speculative_max_model_len",
        "takes": "value",
        "since": "0.4.1",
        "removed": "0.8.3",
    },
    "--speculative-model-quantization": {
        "dest": "speculative_model_quantization",
        "takes": "value",
        "since": "0.5.5",
        "removed": "0.8.3",
    },
    "--tokenizer-pool-extra-config": {"dest": "tokenizer_pool_extra_config", "takes": "value", "removed": "0.10.0"},
    "--tokenizer-pool-size": {"dest": "tokenizer_pool_size", "takes": "value", "removed": "0.10.0"},
    "--tokenizer-pool-type": {"dest": "tokenizer_pool_type", "takes": "value", "removed": "0.10.0"},
    "--typical-acceptance-sampler-posterior-alpha": {
        "dest": "typical_acceptance_sampler_posterior_alpha",
        "takes": "value",
        "since": "0.5.1",
        "removed": "0.8.3",
    },
    "--typical-acceptance-sampler-posterior-threshold": {
        "dest": "typical_acceptance_sampler_posterior_threshold",
        "takes": "value",
        "since": "0.5.1",
        "removed": "0.8.3",
    },
    "--worker-use-ray": {"dest": "worker_use_ray", "takes": "flag", "removed": "0.7.0"},
}
# options whose short form meant another option before they arrived: `-O3` / `-O.key=value` was --compilation-config
# until --optimization-level took -O in 0.12: a release before it reads those words, so no `since` is given
SHORT_FORM_MOVED = ("--optimization-level",)
HISTORY: dict[str, dict[str, object]] = {
    "--kv-cache-memory-bytes": {"since": "0.10.2"},
    "--data-parallel-size": {"since": "0.8.3"},
    "--enable-expert-parallel": {"since": "0.8.0"},
    "--data-parallel-size-local": {"since": "0.9.0"},
    "--data-parallel-address": {"since": "0.9.0"},
    "--data-parallel-rpc-port": {"since": "0.9.0"},
    "--data-parallel-start-rank": {"since": "0.9.0"},
    "--headless": {"since": "0.9.0"},
    "--data-parallel-backend": {"since": "0.9.1"},
    "--api-server-count": {"since": "0.9.1"},
    "--block-size": {"choices": BLOCK_SIZES},
    "--kv-cache-dtype": {"choices": KV_CACHE_DTYPES},
    # StoreBoolean (nargs='?', const 'True'): `--enable-chunked-prefill false` turns it off; 0.4.1-0.5.2 and 0.8.5 on
    # take no value (store_true, then BooleanOptionalAction); 0.4.0 took type=bool (any word but '' is True: not modelled)
    "--enable-chunked-prefill": {"valued_bool": ["0.5.3", "0.8.5"]},
    "--swap-space": {"dest": "swap_space", "takes": "value", "removed": "0.18.0"},
    "--max-seq-len-to-capture": {"dest": "max_seq_len_to_capture", "takes": "value", "removed": "0.11.0"},
    "--num-scheduler-steps": {"dest": "num_scheduler_steps", "takes": "value", "removed": "0.11.0"},
    "--use-v2-block-manager": {"dest": "use_v2_block_manager", "takes": "flag", "removed": "0.11.0"},
    # --task: the v0.6.4 tag's arg_utils.py first has it, v0.13.0's no longer (deprecated from v0.10.1 for --runner /
    # --convert, config/__init__.py `_task_to_convert`: "will be removed in v0.13.0")
    # its choices are get_args(TaskOption) (arg_utils.py `choices=`, config.py's Literal) at the v0.6.4, v0.6.5, v0.7.3
    # and v0.10.0 tags
    "--task": {
        "dest": "task",
        "takes": "value",
        "since": "0.6.4",
        "removed": "0.13.0",
        "choices": {
            "0.6.4": ["auto", "generate", "embedding"],
            "0.6.5": ["auto", "generate", "embedding", "embed", "classify", "score", "reward"],
            "0.7.3": ["auto", "generate", "embedding", "embed", "classify", "score", "reward", "transcription"],
            "0.10.0": [
                "auto",
                "generate",
                "embedding",
                "embed",
                "classify",
                "score",
                "reward",
                "transcription",
                "draft",
            ],
        },
    },
    # --runner / --convert: the v0.10.1 tag's arg_utils.py is the first to add them (model_group.add_argument);
    # v0.10.0's has neither (the generated first mention of --runner, 0.6.5, is its destination in config.py's
    # runner_type, not the option)
    "--runner": {"since": "0.10.1"},
    "--convert": {"since": "0.10.1"},
    "--speculative-config": {"since": "0.8.2"},
    "--speculative-model": {"dest": "speculative_model", "takes": "value", "since": "0.4.1", "removed": "0.8.3"},
    "--num-speculative-tokens": {
        "dest": "num_speculative_tokens",
        "takes": "value",
        "since": "0.4.1",
        "removed": "0.8.3",
    },
    "--speculative-draft-tensor-parallel-size": {
        "dest": "speculative_draft_tensor_parallel_size",
        "takes": "value",
        "since": "0.5.1",
        "removed": "0.8.3",
    },
}


def _negative(option: str, dest: str) -> bool:
    """vLLM's EnableDisableAction: --no-x, and --disable-x for an enable_ dest (or --enable-x for a disable_ one)."""
    return (
        option.startswith("--no-")
        or (option.startswith("--disable-") and dest.startswith("enable_"))
        or (option.startswith("--enable-") and dest.startswith("disable_"))
    )


def entries(dump: dict[str, object]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for action in dump["actions"]:  # type: ignore[union-attr]
        if action.get("positional") or action["dest"] == "help":
            continue
        options: list[str] = action["options"]
        dest: str = action["dest"]
        kind = {"value": "value", "flag": "flag", "bool-optional": "bool"}[action["kind"]]
        off = sorted(o for o in options if kind == "bool" and _negative(o, dest))
        on = [o for o in options if o not in off]
        longs = [o for o in on if o.startswith("--")]
        # the spelling named after the dest is the key; the rest are aliases
        name = next((o for o in longs if o[2:].replace("-", "_") == dest), (longs or on)[0])
        entry: dict[str, object] = {"dest": dest, "takes": kind}
        if action.get("nargs") in ("+", "?", "*"):
            entry["nargs"] = action["nargs"]
        aliases = sorted(o for o in on if o != name)
        if aliases:
            entry["aliases"] = aliases
        if off:
            entry["negated"] = off
        # the newest release's choices (older ones' only where HISTORY gives them); not where a `type` function
        # rewrites the word first (--moe-backend lower-cases it: 'CUTLASS' is accepted)
        if action.get("choices") and "<lambda>" not in str(action.get("type")):
            numeric = action.get("type") == "int"
            entry["choices"] = sorted(int(c) for c in action["choices"]) if numeric else action["choices"]
        out[name] = entry
    for name, first in SINCE_FROM_TAGS.items():
        if name in out and name not in HISTORY and name not in SHORT_FORM_MOVED:
            out[name]["since"] = first
    for name, extra in {**REMOVED_FROM_TAGS, **HISTORY}.items():
        out.setdefault(name, {}).update(extra)
    return out


def _scalar(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) and not value.startswith("-") else str(value)


def _flow(entry: dict[str, object]) -> str:
    parts = []
    for key, value in entry.items():
        if isinstance(value, dict):
            steps = ", ".join(f'"{k}": ' + ("null" if v is None else _flow_list(v)) for k, v in value.items())
            parts.append(f"{key}: {{{steps}}}")
        elif isinstance(value, list):
            parts.append(f"{key}: {_flow_list(value)}")
        elif key in ("since", "removed", "nargs"):
            parts.append(f'{key}: "{value}"')
        else:
            parts.append(f"{key}: {value}")
    return "{" + ", ".join(parts) + "}"


def _flow_list(values: object) -> str:
    return "[" + ", ".join(_scalar(v) for v in values) + "]"  # type: ignore[attr-defined]


def main() -> None:
    dump = json.loads((HERE / "vllm-0.33.0-serve.json").read_text(encoding="utf-8"))
    print(HEADER + 'versions: {oldest: "0.4.0", newest: "' + dump["vllm_version"] + '"}')
    print("flags:")
    for name, entry in entries(dump).items():  # vLLM's registration order (argparse's order in its messages)
        print(f"  {name}: {_flow(entry)}")


if __name__ == "__main__":
    main()
