"""What `perf` and `calibrate` share: the `vllm serve` they model (its flags, the GPU, the release, as options) and
the `vllm bench serve --save-result` files they read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from recommender.cli import params
from recommender.cli.engine_options import engine_flag_options, engine_flags
from recommender.cli.explain_cmd import refuse_flags_not_in, refuse_invalid_choices, resolve_hardware
from recommender.errors import FetchError, InputError, UnknownModelError
from recommender.hardware import Gpu
from recommender.memory.engine import DEFAULT_VERSION, EngineFlags, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.perf.bench_result import BenchResult, read_bench_result
from recommender.sources.resolve import resolve_model

MAX_RESULT_BYTES = 64 << 20  # a saved result with every per-request list is a few MiB


def serve_flag_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """vLLM's own serve flags that shape memory and speed (the same names as `vllm serve`), and the engine's
    context: scheduling, release, GPU and calibration."""
    options = [
        engine_flag_options,
        click.option(
            "--async-scheduling/--no-async-scheduling",
            default=None,
            help="vLLM's --async-scheduling (default: on from vLLM 0.12 without pipeline parallelism).",
        ),
        click.option("--vllm-version", default=DEFAULT_VERSION, show_default=True, help="vLLM release to model."),
        click.option("--gpu", help="GPU type (name, alias or GFD label; see `vllm-plan gpus`)."),
        click.option("--gpu-memory-gib", type=params.GPU_GIB, hidden=True),
        click.option(
            "--no-local-calibration",
            is_flag=True,
            help="Ignore the local calibration written by `vllm-plan calibrate`.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


@dataclass(frozen=True, slots=True)
class EngineSetup:
    """The `vllm serve` that `perf` and `calibrate` model: its flags, the GPU and the vLLM release."""

    flags: EngineFlags
    gpu: Gpu
    version: VllmVersion
    async_scheduling: bool | None  # None: the release's default


def engine_setup(
    flag_values: dict[str, Any],
    gpu: str | None,
    gpu_memory_gib: float | None,
    vllm_version: str,
    async_scheduling: bool | None,
) -> EngineSetup:
    """The serve flags, the GPU and the release from the options; flags the release lacks are refused."""
    flags = engine_flags(flag_values)
    hw = resolve_hardware(gpu, gpu_memory_gib)
    v = VllmVersion.parse(vllm_version)
    refuse_invalid_choices(flag_values, v)
    refuse_flags_not_in((k for k, raw in flag_values.items() if raw is not None), v)
    return EngineSetup(flags, hw, v, async_scheduling)


def result_model(model_opt: str | None, result: BenchResult) -> ModelSpec:
    """--model, else the model the result file names (its model_id, often a folder on the benchmark machine:
    the error then names the file and the way out)."""
    if model_opt:
        return resolve_model(model_opt)
    try:
        return resolve_model(result.model_id)
    except (UnknownModelError, FetchError) as exc:
        raise type(exc)(
            f"{result.origin}: its model_id {result.model_id!r}: {exc}; pass --model with the model the server ran"
        ) from None


def read_result_file(path: Path, dataset: str, version: VllmVersion) -> list[BenchResult]:
    """Every result in a saved file (one JSON object, or one per line as --append-result writes). A saved file does
    not name its client's release; the client is taken to be `version`'s (its arrivals: #21108 from 0.10.0)."""
    from recommender.safe_load import UntrustedDocumentError, load_json, read_text

    try:
        text = read_text(path, MAX_RESULT_BYTES)
        try:
            docs = [load_json(text)]
        except UntrustedDocumentError:
            docs = [load_json(line) for line in text.splitlines() if line.strip()]
    except UntrustedDocumentError as exc:
        raise InputError(f"{path}: {exc}") from None
    if not docs:
        raise InputError(f"{path}: empty")
    return [
        read_bench_result(
            d,
            f"{path}" + (f"#{i + 1}" if len(docs) > 1 else ""),
            dataset=dataset,
            rescaled_arrivals=version >= VllmVersion(0, 10, 0),
        )
        for i, d in enumerate(docs)
    ]
