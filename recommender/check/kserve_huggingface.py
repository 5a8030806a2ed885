"""KServe's Hugging Face serving runtime (`python -m huggingfaceserver`, the `kserve-huggingfaceserver`
ClusterServingRuntime) as the vLLM command it runs (pure: the predictor's fields in, vLLM's argv out).

Read from kserve/kserve at aaac4e294dae2c7b1aa1886447793f3aa1c30912 (2026-08-21):
- python/huggingfaceserver/huggingfaceserver/__main__.py: its own options (`--model_id`, `--model_dir` default
  /mnt/models, `--model_revision`, `--max_length` stored as max_model_len, `--backend` auto|huggingface|vllm, ...);
  the model is `--model_id` or else `--model_dir` (Storage.download of a URI); the options are read with
  `parse_known_args`, so whatever neither KServe nor vLLM declares is dropped without a word;
- vllm/utils.py: vLLM's serve options are added to the same parser (make_arg_parser) and `parse_known_args` is
  plain argparse here (vLLM's underscore-to-dash rewriting lives in FlexibleArgumentParser.parse_args, which is not
  called), so `--gpu_memory_utilization 0.95` is an unknown option, dropped, and vLLM's default applies;
- vllm/vllm_model.py (since kserve#3464, 2024-02): `if torch.cuda.is_available(): tensor_parallel_size =
  torch.cuda.device_count()` - the GPUs the container sees set TP, whatever the arguments say;
- python/kserve/kserve/model_server.py: the model server's own options (ports, workers, logging, predictor);
- config/runtimes/kserve-huggingfaceserver.yaml: `--model_name={{.Name}}`, a memory-backed /dev/shm (kserve#3910);
  kserve-huggingfaceserver-multinode.yaml: `--tensor-parallel-size=${TENSOR_PARALLEL_SIZE}
  --pipeline-parallel-size=${PIPELINE_PARALLEL_SIZE}` from the predictor's workerSpec (default 1 and 1);
- python/storage/kserve_storage/kserve_storage.py: `hf://owner/model[:revision]`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from recommender.check.commands import engine_flags

# huggingfaceserver's and kserve.model_server's options that take a value and are not vLLM's
_VALUE_OPTIONS = frozenset(
    "model_dir model_id model_revision tokenizer_revision max_length backend tensor_input_names task max_log_len"
    " http_port grpc_port workers max_threads max_asyncio_workers enable_grpc enable_docs_url enable_latency_logging"
    " configure_logging log_config_file access_log_format event-loop timeout-keep-alive model_name predictor_host"
    " protocol predictor_protocol predictor_use_ssl predictor_request_timeout_seconds grpc_max_send_message_length"
    " grpc_max_receive_message_length predictor_request_retries".split()
)
# their switches (store_true)
_SWITCHES = frozenset(
    "disable_lower_case disable_special_tokens return_token_type_ids return_offsets_mapping return_probabilities"
    " return_raw_logits disable_log_requests enable_predictor_health_check".split()
)
# options KServe declares with underscores that land in vLLM's engine arguments (vLLM's spelling)
_TO_VLLM = {
    "max_model_len": "--max-model-len",
    "max_length": "--max-model-len",
    "trust_remote_code": "--trust-remote-code",
    "model_revision": "--revision",
    "tokenizer_revision": "--tokenizer-revision",
}


def _options(args: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """(KServe's own options by name, last one wins; vLLM's options in order, KServe's spellings of vLLM's engine
    arguments translated where they stand, so the later of `--max_length` and `--max-model-len` wins as in argparse)."""
    own: dict[str, str] = {}
    rest: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        name, eq, value = word[2:].partition("=") if word.startswith("--") else ("", "", "")
        if name in _VALUE_OPTIONS or name in _TO_VLLM.keys() - {"trust_remote_code"}:
            if not eq and i + 1 < len(args):
                value, i = args[i + 1], i + 1
            own[name] = value
            rest += [_TO_VLLM[name], value] if name in ("max_model_len", "max_length") else []
        elif name in _SWITCHES or name == "trust_remote_code":
            own[name] = "true"
            rest += ["--trust-remote-code"] if name == "trust_remote_code" else []
        else:
            rest.append(word)
        i += 1
    # what vLLM does not declare (an underscore spelling of its dashed options, `--num-speculative-tokens 5` as one
    # word, another server's option) parse_known_args drops, with the words after it
    return own, engine_flags(rest)


def hf_uri_model(uri: str) -> tuple[str, str | None] | None:
    """`hf://owner/model[:revision]` as (owner/model, revision); None for any other storage URI."""
    m = re.fullmatch(r"hf://([^/:\s]+/[^/:\s]+)(?::(\S+))?", uri.strip())
    return (m.group(1), m.group(2)) if m else None


def runs_vllm(args: Sequence[str]) -> bool:
    """False when the arguments choose the Transformers backend (`--backend huggingface`/`=huggingface`); with
    `auto` (the default) the server runs vLLM for an architecture vLLM supports."""
    own, _ = _options(args)
    return own.get("backend", "auto") != "huggingface"


def vllm_argv(args: Sequence[str], storage_uri: str, visible_gpus: int | None) -> tuple[str, ...]:
    """The `vllm serve` command huggingfaceserver's arguments amount to (runtime args, then the predictor's).
    `visible_gpus`: the GPUs the container sees (nvidia.com/gpu, narrowed by CUDA_VISIBLE_DEVICES), which set TP;
    None when not known, then the arguments' TP stands."""
    own, rest = _options(args)
    model = own.get("model_id") or ""
    revision = own.get("model_revision")
    if not model:
        where = own.get("model_dir") or storage_uri or "/mnt/models"
        from_hub = hf_uri_model(where) or hf_uri_model(storage_uri)
        model, rev = from_hub if from_hub else ("/mnt/models", None)
        revision = revision or rev
    argv = ["vllm", "serve", model]
    argv += ["--revision", revision] if revision else []
    argv += ["--tokenizer-revision", own["tokenizer_revision"]] if own.get("tokenizer_revision") else []
    if visible_gpus:
        rest = [*_without_tp(rest), "--tensor-parallel-size", str(visible_gpus)]
    return (*argv, *rest)


def _without_tp(words: list[str]) -> list[str]:
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--tensor-parallel-size", "-tp"):
            skip = True
        elif not word.startswith(("--tensor-parallel-size=", "-tp=")):
            out.append(word)
    return out


def multinode_sizes(worker_spec: Mapping[str, object], env: Mapping[str, str]) -> tuple[str, str]:
    """(TP, PP) the multinode runtime passes as `--tensor-parallel-size=${TENSOR_PARALLEL_SIZE}
    --pipeline-parallel-size=${PIPELINE_PARALLEL_SIZE}`: the predictor's workerSpec fields (KServe's defaults 1 and
    1), or the env variables older releases took (the predictor's env; KServe's webhook now refuses them)."""
    tp = worker_spec.get("tensorParallelSize", env.get("TENSOR_PARALLEL_SIZE", 1))
    pp = worker_spec.get("pipelineParallelSize", env.get("PIPELINE_PARALLEL_SIZE", 1))
    return str(tp), str(pp)
