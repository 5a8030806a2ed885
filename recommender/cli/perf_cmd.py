"""`vllm-plan perf`: what `vllm bench serve` would measure (`calibrate`, which fits the local GPU, is calibrate_cmd.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from recommender.cli import params
from recommender.cli.bench_inputs import EngineSetup, engine_setup, read_result_file, result_model, serve_flag_options
from recommender.cli.explain_cmd import (
    NO_MODEL,
    project_setting,
    release_setting,
    serve_values,
)
from recommender.cli.output import dumps, format_choice, table
from recommender.cli.pasted import image_release
from recommender.cli.report_options import deliver, output_option, plot_option, put
from recommender.cli.setting_origin import origin_of, said_from
from recommender.errors import InputError
from recommender.hardware import Gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.model.spec import ModelSpec
from recommender.perf.bench_result import BenchResult
from recommender.perf.load import DATASETS, Load
from recommender.perf.metrics import PerfResult
from recommender.perf.params import PerfParams
from recommender.perf.predict import Sweep, predict, sampler_note, startup, sweep
from recommender.perf_profile import load_params
from recommender.serve_argv_builder import build_serve_argv
from recommender.sources.resolve import resolve_model
from recommender.values import RATE, REQUESTS


def _first(option: bool | None, from_command: bool | None) -> bool | None:
    """An option given wins over the same setting in the command after `--`."""
    return from_command if option is None else option


def _rate(text: str | None) -> float | None:
    if text is None or text.strip().lower() in ("inf", "infinity"):
        return None
    try:
        return RATE.parse(text)
    except ValueError as exc:
        raise InputError(f"--request-rate {exc} (requests/s, or inf: all at once)") from None


MAX_SWEEP_POINTS = 64  # each point is a replay (~10-40 ms): a curve, not a search


def _sweep_values(text: str) -> tuple[int, ...]:
    items = [x for x in text.split(",") if x.strip()]
    if not items:
        raise InputError(f"--sweep {text!r}: a comma-separated list of concurrencies like 1,2,4,8")
    if len(items) > MAX_SWEEP_POINTS:
        raise InputError(f"--sweep: at most {MAX_SWEEP_POINTS} concurrencies, got {len(items):,}")
    try:
        return tuple(REQUESTS.parse(x.strip()) for x in items)  # each as --max-concurrency takes it
    except ValueError as exc:
        raise InputError(f"--sweep: a concurrency {exc}") from None


def _params(no_local: bool) -> PerfParams:
    return load_params(local=not no_local)


def _header(model: ModelSpec, gpu: Gpu, flags: EngineFlags, load: Load, version: str) -> list[str]:
    argv = build_serve_argv(model.name, flags)
    return [
        f"{model.name} on {gpu.name} (vLLM {version})",
        f"  {' '.join(argv)}",
        f"  load: {load.describe()}",
        "",
    ]


def render_result(r: PerfResult) -> list[str]:
    """The latency table, throughputs and the bound of one prediction."""
    rows = [
        (name, f"{st.mean:,.1f}", f"{st.median:,.1f}", f"{st.p90:,.1f}", f"{st.p99:,.1f}")
        for name, st in (("TTFT", r.ttft), ("TPOT", r.tpot), ("ITL", r.itl), ("E2EL", r.e2el))
    ]
    shares = ", ".join(f"{name} {share:.0%}" for name, share in r.shares)
    return [
        table(("ms", "mean", "median", "p90", "p99"), rows),
        "",
        f"Throughput: {r.request_throughput:,.2f} req/s, {r.output_throughput:,.0f} output tok/s "
        f"({r.output_throughput_per_gpu:,.0f} per GPU over {r.gpus}), {r.total_token_throughput:,.0f} total tok/s; "
        f"{r.output_tokens_per_s_per_user:,.1f} tok/s per user",
        f"Bound by: {r.bound} (engine time: {shares}); {r.preemptions} preemptions, "
        f"{r.peak_running} requests running at the peak",
    ]


def _document(model: ModelSpec, gpu: Gpu, flags: EngineFlags, load: Load, version: str) -> dict[str, Any]:
    return {
        "model_id": model.name,
        "gpu": gpu.key,
        "vllm_version": version,
        "command": build_serve_argv(model.name, flags),
        "num_prompts": load.num_prompts,
        "request_rate": "inf" if load.is_burst else load.request_rate,
        "burstiness": load.burstiness,
        "max_concurrency": load.max_concurrency,
        "dataset": load.dataset,
        "input_len": load.input_len,
        "output_len": load.output_len,
    }


def sweep_document(s: Sweep, head: dict[str, Any]) -> dict[str, Any]:
    """The sweep under the keys `vllm bench serve --save-result` writes, one object per concurrency."""
    return {**head, "sweep": [{"max_concurrency": p.concurrency, **p.result.bench_json()} for p in s.points]}


def sweep_table(s: Sweep) -> str:
    """One row per concurrency."""
    rows = [
        (
            p.concurrency,
            f"{p.result.request_throughput:,.2f}",
            f"{p.result.output_throughput:,.0f}",
            f"{p.result.output_throughput_per_gpu:,.0f}",
            f"{p.result.output_tokens_per_s_per_user:,.1f}",
            f"{p.result.ttft.mean:,.0f}",
            f"{p.result.tpot.mean:,.1f}",
            f"{p.result.itl.p99:,.1f}",
            p.result.bound,
        )
        for p in s.points
    ]
    headers = ("conc", "req/s", "out tok/s", "per GPU", "per user", "TTFT ms", "TPOT ms", "ITL p99", "bound")
    return table(headers, rows)


def _compare_rows(pred: PerfResult, measured: BenchResult) -> list[tuple[str, str, str, str]]:
    predicted = {k: v for k, v in pred.bench_json().items() if isinstance(v, int | float)}
    rows = []
    for key, real in measured.measured.items():
        if key in predicted and real:
            p = float(predicted[key])
            rows.append((key, f"{p:,.2f}", f"{real:,.2f}", f"{p / real - 1:+.1%}"))
    return rows


def _compare(
    path: Path, model_opt: str | None, engine: EngineSetup, dataset: str, params: PerfParams
) -> tuple[PerfResult, BenchResult]:
    result = read_result_file(path, dataset, engine.version)[0]
    model = result_model(model_opt, result)
    pred = predict(
        model,
        engine.gpu,
        engine.flags,
        result.load,
        params=params,
        version=engine.version,
        async_scheduling=engine.async_scheduling,
    )
    return pred, result


@click.command("perf")
@click.argument("model_arg", required=False, metavar="[MODEL]")
@click.argument("serve", nargs=-1, type=click.UNPROCESSED, metavar="[-- vllm serve MODEL FLAGS...]")
@click.option("--model", "model_opt", help="Model: local directory, catalog id, or hub id.")
@serve_flag_options
@click.option(
    "--input-len",
    "--random-input-len",
    "input_len",
    type=params.TOKENS,
    help="Prompt tokens per request (as vllm bench).",
)
@click.option(
    "--output-len",
    "--random-output-len",
    "output_len",
    type=params.TOKENS,
    help="Output tokens per request (as vllm bench).",
)
@click.option("--max-concurrency", type=params.REQUESTS, help="Requests in flight at most (a closed loop).")
@click.option("--request-rate", help="Requests per second (Poisson), or inf: all at once (the default).")
@click.option("--burstiness", type=params.BURSTINESS, default=1.0, show_default=True)
@click.option("--num-prompts", type=params.PROMPTS, default=1000, show_default=True)
@click.option("--dataset-name", type=click.Choice(DATASETS), default="random", show_default=True)
@click.option("--seed", type=params.SEED, default=0, show_default=True)
@click.option("--sweep", "sweep_text", help="Concurrencies to sweep, e.g. 1,2,4,8,16 (a curve).")
@click.option("--compare", "compare_path", type=params.path(), help="A `vllm bench serve` result file.")
@format_choice("html")
@output_option
@plot_option
def perf(
    model_arg: str | None,
    serve: tuple[str, ...],
    model_opt: str | None,
    input_len: int | None,
    output_len: int | None,
    max_concurrency: int | None,
    request_rate: str | None,
    burstiness: float,
    num_prompts: int,
    dataset_name: str,
    seed: int,
    sweep_text: str | None,
    compare_path: Path | None,
    fmt: str,
    output: Path | None,
    force: bool,
    plot: Path | None,
    gpu: str | None,
    gpu_memory_gib: float | None,
    vllm_version: str,
    async_scheduling: bool | None,
    no_local_calibration: bool,
    **flag_values: Any,
) -> None:
    """Predict what `vllm bench serve` would measure against `vllm serve MODEL` with these flags on a GPU.

    Takes vLLM's own flag names, or a whole command after `--` or quoted (`vllm serve ...`, `python -m
    vllm.entrypoints.openai.api_server ...`, `docker run ... IMAGE ...`; options that do not size memory or speed
    are ignored).

    \b
    Examples:
      vllm-plan perf Qwen/Qwen3-8B --gpu h100 --input-len 2000 --output-len 256 --max-concurrency 64
      vllm-plan perf meta-llama/Llama-3.1-70B-Instruct --gpu h100 -tp 2 --input-len 1000 --output-len 500 \\
          --sweep 1,8,32,128
      vllm-plan perf --gpu l40s --compare result.json
    """
    vllm_version = release_setting(vllm_version, image_release(model_arg, serve))
    model_ref, values = serve_values(model_arg, serve, model_opt, flag_values, VllmVersion.parse(vllm_version))
    from_command = values.pop("async_scheduling", None)  # --async-scheduling/--no-... of the command after `--`
    engine = engine_setup(values, gpu, gpu_memory_gib, vllm_version, _first(async_scheduling, from_command))
    params = _params(no_local_calibration)
    if compare_path is not None:
        _compare_alone(input_len is not None or output_len is not None or bool(sweep_text), fmt, plot)
        put(_compare_output(compare_path, model_ref, engine, dataset_name, params, fmt), output, force=force)
        return
    origin, model_ref = (None, model_ref) if model_ref else (origin_of("model"), project_setting("model"))
    if not model_ref:
        raise InputError(NO_MODEL)
    input_len, output_len = _require_load(input_len, output_len, sweep_text, max_concurrency)
    rate = _rate(request_rate)
    arrivals = (rate, burstiness)
    load = _client_load(input_len, output_len, num_prompts, max_concurrency, arrivals, dataset_name, seed, vllm_version)
    load.validate()
    report_wanted = fmt == "html" or plot is not None  # a report draws the curve around a single point too
    prediction = _predict(_model(model_ref, origin), engine, load, params, sweep_text, report_wanted)
    _print_prediction(prediction, fmt, output, plot, force)


def _require_load(
    input_len: int | None, output_len: int | None, sweep_text: str | None, max_concurrency: int | None
) -> tuple[int, int]:
    """The lengths a prediction needs, and one concurrency option: --sweep's curve or --max-concurrency's point (the
    header said "at most N in flight" above a curve over other concurrencies)."""
    if input_len is None or output_len is None:
        raise InputError("--input-len and --output-len are required (tokens per request)")
    if sweep_text is not None and max_concurrency is not None:
        raise InputError("--sweep gives the concurrencies of the curve: drop --max-concurrency (or --sweep)")
    return input_len, output_len


def _model(model_ref: str, origin: str | None) -> ModelSpec:
    """The model; when it came from VLLM_PLAN_MODEL or the project file (`origin`), an error about it says so."""
    with said_from(origin):
        return resolve_model(model_ref)


@dataclass(frozen=True, slots=True)
class Prediction:
    """One load predicted (`result`), or a curve over concurrencies (`curve`), or both for a report."""

    model: ModelSpec
    engine: EngineSetup
    load: Load
    params: PerfParams
    result: PerfResult | None
    curve: Sweep | None


def _predict(
    model: ModelSpec, engine: EngineSetup, load: Load, params: PerfParams, sweep_text: str | None, report_wanted: bool
) -> Prediction:
    """The point prediction unless --sweep asked for a curve; the curve for --sweep, or around the point for a
    report."""
    from recommender.report.perf import default_concurrencies

    hw, flags, v, async_scheduling = engine.gpu, engine.flags, engine.version, engine.async_scheduling
    values = (
        _sweep_values(sweep_text) if sweep_text is not None else default_concurrencies(load) if report_wanted else ()
    )
    curve = None
    if values:
        curve = sweep(model, hw, flags, load, values, params=params, version=v, async_scheduling=async_scheduling)
    result = (
        None
        if sweep_text
        else predict(model, hw, flags, load, params=params, version=v, async_scheduling=async_scheduling)
    )
    return Prediction(model, engine, load, params, result, curve)


def _print_prediction(p: Prediction, fmt: str, output: Path | None, plot: Path | None, force: bool) -> None:
    """The prediction as a table (with the expected error), a bench-like document, or a report."""
    from recommender.report.perf import perf_report

    model, hw, flags, v = p.model, p.engine.gpu, p.engine.flags, p.engine.version
    s, r = p.curve, p.result
    head = _document(model, hw, flags, p.load, str(v))
    header = "\n".join(_header(model, hw, flags, p.load, str(v)))
    errors, basis = p.params.expected_error(hw)
    note = sampler_note(model, hw, flags, v)

    def text() -> str:
        body = sweep_table(s) if s is not None and r is None else "\n".join(render_result(r)) if r else ""
        if r is not None and r.completed and r.total_output_tokens < 0.98 * r.completed * p.load.output_len:
            limit = startup(model, hw, flags, v).max_model_len
            body += (
                f"\nOutputs: {r.total_output_tokens / r.completed:,.0f} tokens per request on average, not "
                f"{p.load.output_len:,.0f}: vLLM caps each request's max_tokens at --max-model-len {limit:,} minus "
                "its prompt (the figures are for the capped outputs)"
            )
        if r is not None and errors:
            body += (
                f"\nExpected error ({basis}): TTFT {errors.get('ttft', 0):.0%}, TPOT {errors.get('tpot', 0):.0%}, "
                f"throughput {errors.get('throughput', 0):.0%} (median, benchmarks/perf_fidelity.py)"
            )
        if note:
            body += f"\nNote: {note}"
        return f"{header}\n{body}"

    def document() -> dict[str, Any]:
        notes = {"notes": [note]} if note else {}
        if s is not None and r is None:
            return {**sweep_document(s, head), **notes}
        return {**head, **(r.bench_json() if r else {}), "expected_error": {**errors, "basis": basis}, **notes}

    deliver(
        fmt,
        output=output,
        plot=plot,
        table=text,
        document=document,
        report=lambda: perf_report(head["command"], p.load, startup(model, hw, flags, v), r, s),
        force=force,
    )


def _compare_alone(load_given: bool, fmt: str, plot: Path | None) -> None:
    """--compare takes its load from the result file and prints a table, json or yaml: refuse the options it would
    ignore."""
    if load_given:
        raise InputError("--compare reads the load from the result file: drop --input-len/--output-len/--sweep")
    if fmt == "html" or plot is not None:
        raise InputError("--compare prints a table, json or yaml: drop --format html and --plot")


def _compare_output(
    path: Path,
    model_ref: str | None,
    engine: EngineSetup,
    dataset: str,
    params: PerfParams,
    fmt: str,
) -> str:
    """`perf --compare`: the prediction beside a real result, metric by metric."""
    pred, measured = _compare(path, model_ref, engine, dataset, params)
    if fmt == "table":
        head = f"{measured.model_id} on {engine.gpu.name}: {measured.load.describe()}"
        return f"{head}\n{table(('metric', 'predicted', 'measured', 'error'), _compare_rows(pred, measured))}\n"
    return dumps({"predicted": pred.bench_json(), "measured": dict(measured.measured)}, fmt)


def _client_load(
    input_len: float,
    output_len: float,
    num_prompts: int,
    max_concurrency: int | None,
    arrivals: tuple[float | None, float],
    dataset: str,
    seed: int,
    vllm_version: str,
) -> Load:
    """The load as `vllm bench serve` of `vllm_version` sends it; `arrivals` = (request rate, None for inf;
    burstiness). From 0.10.0 the client rescales its gamma delays so the last request goes out at num_prompts / rate
    (vllm/benchmarks/serve.py get_request, vllm-project/vllm#21108)."""
    rate, burstiness = arrivals
    rescaled = VllmVersion.parse(vllm_version) >= VllmVersion(0, 10, 0)
    return Load(
        input_len,
        output_len,
        num_prompts,
        max_concurrency,
        rate,
        burstiness,
        dataset=dataset,
        seed=seed,
        rescaled_arrivals=rescaled,
    )
