"""Read a plan document from untrusted text or data, once, into the typed `Plan` (pure: text in, Plan out).

A plan may come from a pull request: every field is typed and bounded by its declaration (documents/plan.py),
and the parts that must agree do (the command's model, TP and PP are the option's; GPUs = replicas x TP x PP;
the prediction is for the chosen command). Any problem is one `PlanDocumentError` naming the file and the field.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

from recommender import __version__
from recommender.documents import schema
from recommender.documents.plan import (
    MAX_COUNT,
    MAX_GIB,
    MAX_PARALLEL,
    MAX_REQUESTS,
    MAX_TOKENS,
    PLAN_API_VERSION,
    PLAN_KIND,
    Plan,
    PlanOption,
)
from recommender.documents.schema import SchemaError
from recommender.errors import FlagError, InputError
from recommender.memory.engine import KV_CACHE_DTYPES, MODEL_DTYPES, VllmVersion
from recommender.serve_args import ServeCommand, parse_serve_argv

MAX_PLAN_CHARS = 16 << 20  # a plan with every alternative and rejection is ~20 KB

# vLLM 0.33's --quantization choices (vllm/model_executor/layers/quantization/__init__.py, QuantizationMethods),
# and bitsandbytes, which releases before 0.33 accept.
QUANTIZATION_METHODS = (
    *("awq", "auto_awq", "fp8", "fbgemm_fp8", "fp_quant", "modelopt", "modelopt_fp4", "modelopt_mxfp8"),
    *("modelopt_mixed", "auto_gptq", "gptq", "gptq_marlin", "awq_marlin", "humming", "compressed-tensors"),
    *("experts_int8", "quark", "moe_wna16", "torchao", "inc", "mxfp4", "gpt_oss_mxfp4", "deepseek_v4_fp8"),
    *("online", "fp8_per_tensor", "fp8_per_block", "fp8_per_channel", "int8_per_channel_weight_only"),
    *("nvfp4_per_token", "mxfp8", "bitsandbytes"),
)

# Memory-relevant flag values in a plan's command: (lowest, highest) or the allowed choices.
_FLAG_RANGES: dict[str, tuple[float, float]] = {
    "tensor_parallel_size": (1, MAX_PARALLEL),
    "pipeline_parallel_size": (1, MAX_PARALLEL),
    "data_parallel_size": (1, MAX_PARALLEL),
    "kv_cache_memory_bytes": (1, MAX_COUNT),
    "max_model_len": (1, MAX_TOKENS),
    "max_num_seqs": (1, MAX_REQUESTS),
    "max_num_batched_tokens": (1, MAX_COUNT),
    "block_size": (1, 1 << 20),
    "cpu_offload_gb": (0, MAX_GIB),
}
_FLAG_CHOICES: dict[str, tuple[str, ...]] = {
    "quantization": QUANTIZATION_METHODS,
    "kv_cache_dtype": KV_CACHE_DTYPES,
    "dtype": MODEL_DTYPES,
}


class PlanDocumentError(InputError):
    """A plan document that is not one, is of another version, or is malformed."""


MAX_DEPTH = 32  # a plan nests 4 levels; YAML nested thousands deep takes seconds to refuse otherwise


class _TooDeep(Exception):
    pass


def _safe_load(text: str) -> object:
    """yaml.safe_load, refusing documents nested deeper than MAX_DEPTH as soon as the composer gets there."""
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _TooDeep
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _flow_depth(text: str) -> int:
    """The deepest nesting of [ and { (quotes ignored: an upper bound). PyYAML's scanner is quadratic in it;
    a plan holds a few dozen brackets, so more than 100,000 count as too deep without walking them."""
    brackets = re.sub(r"[^\[\]{}]+", "", text)
    if len(brackets) > 100_000:
        return len(brackets)
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def plan_from_text(text: str, source: str) -> Plan:
    """Parse YAML or JSON text (JSON is YAML) into a validated Plan."""
    import yaml

    if len(text) > MAX_PLAN_CHARS:
        raise PlanDocumentError(f"{source}: larger than {MAX_PLAN_CHARS >> 20} MiB, not a plan document")
    if _flow_depth(text) > MAX_DEPTH:
        raise PlanDocumentError(f"{source}: nested too deeply to be a plan document")
    try:
        data = _safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PlanDocumentError(f"{source}: not valid YAML or JSON{where}") from exc
    except (_TooDeep, RecursionError) as exc:
        raise PlanDocumentError(f"{source}: nested too deeply to be a plan document") from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise PlanDocumentError(f"{source}: not a plan document ({exc})") from exc
    return plan_from_data(data, source)


def plan_from_data(data: object, source: str) -> Plan:
    """Validate parsed data (a mapping from YAML or JSON) into a Plan."""
    api = data.get("apiVersion") if isinstance(data, Mapping) else None
    if not isinstance(data, Mapping) or data.get("kind") != PLAN_KIND or not isinstance(api, str):
        raise PlanDocumentError(f"{source} is not a vllm-plan plan document (apiVersion {PLAN_API_VERSION}, kind Plan)")
    if api != PLAN_API_VERSION:
        shown = schema.show(api)
        if not api.startswith("vllm-plan/"):
            raise PlanDocumentError(f"{source}: apiVersion {shown} is not a vllm-plan plan document")
        raise PlanDocumentError(
            f"{source}: apiVersion {shown} is not supported by vllm-plan {__version__} (it reads {PLAN_API_VERSION})"
        )
    try:
        plan = schema.load(Plan, data)
        _consistent(plan)
    except SchemaError as exc:
        raise PlanDocumentError(f"{source}: malformed plan document: {exc}") from exc
    return plan


def _consistent(plan: Plan) -> None:
    """The parts of a plan that must agree, do."""
    _check_option(plan.best, "")
    for i, alt in enumerate(plan.alternatives):
        _check_option(alt, f"alternatives[{i}]")
    best, pred = plan.best, plan.prediction
    try:
        VllmVersion.parse(plan.inputs.vllm_version)
    except FlagError as exc:
        raise SchemaError("inputs.vllm_version", str(exc).removeprefix("--vllm-version ")) from exc
    engine = best.gpus_per_engine
    if plan.inputs.nodes > 1 and best.pipeline_parallel_size > 1 and engine % plan.inputs.nodes:
        raise SchemaError("inputs.nodes", f"{engine} GPUs per engine do not split evenly over the nodes")
    flags = _parse(best.command, "command").values
    agree: list[tuple[str, object, object]] = [
        ("prediction.model", pred.model, best.model),
        ("prediction.vllm_version", pred.vllm_version, plan.inputs.vllm_version),
        ("prediction.tensor_parallel_size", pred.tensor_parallel_size, best.tensor_parallel_size),
        ("prediction.pipeline_parallel_size", pred.pipeline_parallel_size, best.pipeline_parallel_size),
        ("prediction.data_parallel_size", pred.data_parallel_size, best.data_parallel_size),
        ("prediction.max_model_len", pred.max_model_len, best.max_model_len),
        ("prediction.gpu_memory_utilization", pred.gpu_memory_utilization, flags.get("gpu_memory_utilization")),
        ("prediction.max_num_seqs", pred.max_num_seqs, flags.get("max_num_seqs")),
    ]
    for path, got, want in agree:
        if want is not None and got != want:
            raise SchemaError(path, f"{schema.show(got)} disagrees with the chosen command ({schema.show(want)})")


def _check_option(opt: PlanOption, prefix: str) -> None:
    def at(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    if opt.command[:2] != ("vllm", "serve") or len(opt.command) < 3:
        raise SchemaError(at("command"), "must start with vllm, serve, MODEL")
    cmd = _parse(opt.command, at("command"))
    values = cmd.values
    _check_flag_values(values, at("command"))
    agree: list[tuple[str, object, object]] = [
        ("model", cmd.model, opt.model),
        ("tensor_parallel_size", values.get("tensor_parallel_size", 1), opt.tensor_parallel_size),
        ("pipeline_parallel_size", values.get("pipeline_parallel_size", 1), opt.pipeline_parallel_size),
        ("kv_cache_dtype", values.get("kv_cache_dtype", "auto"), opt.kv_cache_dtype),
        ("max_model_len", values.get("max_model_len", opt.max_model_len), opt.max_model_len),
    ]
    for key, in_command, field in agree:
        if in_command != field:
            raise SchemaError(at(key), f"{schema.show(field)} disagrees with the command ({schema.show(in_command)})")
    engines = opt.gpus_per_engine * opt.replicas
    if opt.gpus != engines:
        raise SchemaError(at("gpus"), f"{opt.gpus} is not replicas x TP x PP x DP = {engines}")


def _parse(command: tuple[str, ...], path: str) -> ServeCommand:
    """The command as vLLM's parser reads it; its first error is the plan's."""
    try:
        cmd = parse_serve_argv(list(command))
    except FlagError as exc:
        raise SchemaError(path, str(exc)) from exc
    if cmd.errors:
        raise SchemaError(path, cmd.errors[0])
    return cmd


def _check_flag_values(values: Mapping[str, Any], path: str) -> None:
    for name, value in values.items():
        if name in _FLAG_RANGES:
            lo, hi = _FLAG_RANGES[name]
            if isinstance(value, bool) or not lo <= value <= hi:
                raise SchemaError(path, f"{name} {schema.show(value)} is outside {lo:,} to {hi:,}")
        elif name == "gpu_memory_utilization" and not 0 < value <= 1:
            raise SchemaError(path, f"gpu_memory_utilization {schema.show(value)} is not in (0, 1]")
        elif name in _FLAG_CHOICES and value not in _FLAG_CHOICES[name]:
            raise SchemaError(path, f"{name} {schema.show(value)} is not one of vLLM's choices")
