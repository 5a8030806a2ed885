"""`vllm-plan explain`: what vLLM will compute at startup for one model, GPU and set of flags."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from recommender.catalog import load_gpus
from recommender.check.evaluate import VllmEnv
from recommender.cli import params
from recommender.cli.engine_options import engine_flag_options, engine_flags
from recommender.cli.gpu_option import named_gpu
from recommender.cli.log_input import (
    comparison_json,
    log_gpu,
    log_version,
    read_log,
    render_comparison,
    serve_command,
    with_logged_engine,
    with_logged_total,
)
from recommender.cli.output import format_choice
from recommender.cli.pasted import image_release, parsed, pasted_command
from recommender.cli.report_options import deliver, output_option, plot_option
from recommender.cli.server_env import applied, pasted_env, with_engine_choice
from recommender.cli.setting_origin import origin_of, said_from
from recommender.documents import explanation_json
from recommender.errors import FlagError, InputError, PlanError
from recommender.gpu_names import given_card
from recommender.hardware import Gpu
from recommender.log_comparison import compare_with_log
from recommender.memory.budget import Explanation
from recommender.memory.budget import explain as explain_budget
from recommender.memory.engine import DEFAULT_VERSION, EngineFlags, VllmVersion
from recommender.memory.spec_decode import NO_MODEL_METHODS
from recommender.memory.startup_issues import IssueKind
from recommender.model.spec import ModelSpec
from recommender.serve_args import parse_serve_argv
from recommender.serve_release_errors import not_accepted, strict_errors, value_choice_errors
from recommender.sources.resolve import resolve_model
from recommender.startup_log import LoggedStartup
from recommender.units import GiB
from recommender.vllm_flags import default_flag_table

if TYPE_CHECKING:
    from recommender.report.structure import Report


def _bar(e: Explanation, width: int = 60) -> list[str]:
    st = e.stage
    total = e.gpu_total_bytes
    parts = [
        ("W", "weights", st.weights),
        ("A", "activation peak", st.activation_peak),
        ("N", "non-torch", st.non_torch),
        ("G", "CUDA graphs", st.cudagraph),
        ("K", "KV cache", max(0, st.available_kv)),
    ][: 4 if e.no_kv_cache else 5]
    # each part clamped to the bar's width: a fixed --kv-cache-memory-bytes may be many times the card
    bar = "".join(ch * min(width, max(0, round(width * b / total))) for ch, _, b in parts)
    bar = bar[:width].ljust(min(width, round(width * e.requested_bytes / total)), ".")[:width].ljust(width, " ")
    lines = [f"[{bar}] {e.gpu_total_bytes / GiB:.2f} GiB"]
    # before 0.21 the graphs come out of what the budget leaves: the terms then add up to more than the budget
    outside = {"G": "  (captured after the KV cache, outside the budget)"} if graphs_outside_budget(e) else {}
    for ch, name, b in parts:
        lines.append(f"  {ch} {name:<16}{b / GiB:8.2f} GiB{outside.get(ch, '')}")
        if ch == "G" and b > 0 and e.capture_sizes:  # the capture lists the graph estimate used
            decode = f" + {e.decode_capture_sizes} FULL decode" if e.decode_capture_sizes else ""
            lines.append(f"    {'graph sizes':<16}{e.capture_sizes:8d}{decode}")
    basis = (
        "--kv-cache-memory-bytes, no utilization budget"
        if e.kv_cache_memory_bytes is not None
        else f"ceil(total x {e.utilization})"
    )
    lines.append(f"    {'budget':<16}{e.requested_bytes / GiB:8.2f} GiB  (= {basis})")
    return lines


def graphs_outside_budget(e: Explanation) -> bool:
    """vLLM before 0.21 (or VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0) captures the CUDA graphs after the KV
    cache, out of the memory the utilization leaves: the KV cache then took the budget without them."""
    st = e.stage
    return (
        e.kv_cache_memory_bytes is None
        and st.cudagraph > 0
        and st.available_kv == e.requested_bytes - (st.weights + st.activation_peak + st.non_torch)
    )


def render_table(e: Explanation) -> str:
    """Human summary with the stacked per-GPU budget."""
    out = [
        f"{e.model} on {e.gpu} — vLLM {e.vllm_version}",
        f"  TP={e.tp} PP={e.pp} DP={e.dp} ({e.gpus} GPU{'s' if e.gpus > 1 else ''}), weights {e.weight_dtype}"
        f" / {e.quantization}, {'no KV cache' if e.no_kv_cache else f'KV {e.kv_cache_dtype}'}, "
        f"max_model_len {e.max_model_len:,}, "
        f"max_num_seqs {e.max_num_seqs}, max_num_batched_tokens {e.max_num_batched_tokens:,}",
        "",
    ]
    out += ["Per-GPU budget" + (f" (pipeline stage {e.stage.stage}, the tightest)" if e.pp > 1 else "")]
    out += _bar(e)
    if e.no_kv_cache:
        out += ["", *_no_kv_lines(e), ""]
    else:
        out += _kv_lines(e)
    out.append(
        "Verdict: vLLM FAILS at startup"
        if not e.fits
        else "Verdict: AT RISK (vLLM may fail at startup: the margin is within the model's uncertainty)"
        if e.at_risk
        else "Verdict: vLLM starts"
    )
    out += [f"  error: {m}" for m in e.errors]
    out += [f"  warning: {m}" for m in e.warnings]
    return "\n".join(out)


def _no_kv_lines(e: Explanation) -> list[str]:
    """Encoder-only attention (memory/no_kv.py): no KV cache lines; what one step holds instead."""
    st = e.stage
    need = st.weights + st.non_torch + st.activation_peak + st.cudagraph
    per_step = int(min(e.max_num_seqs, e.max_concurrency))
    return [
        "  No KV cache: encoder-only attention (vLLM prints no 'GPU KV cache size' line)",
        f"  Per step: {per_step:,} request{'' if per_step == 1 else 's'} of {e.max_model_len:,} tokens "
        f"(--max-num-seqs {e.max_num_seqs:,}, "
        f"--max-num-batched-tokens {e.max_num_batched_tokens:,}, no chunked prefill)",
        f"  Warm-up at {e.max_num_batched_tokens:,} tokens: {need / GiB:.2f} GiB of the {e.free_bytes / GiB:.2f} GiB "
        "free (the utilization does not bound it)",
    ]


def _kv_lines(e: Explanation) -> list[str]:
    return [
        "",
        f"  Available KV cache memory: {e.stage.available_kv / GiB:.2f} GiB",
        f"  KV bytes per token: {e.kv_bytes_per_token:,}  block size: {e.block_size}  blocks: {e.num_gpu_blocks:,}",
        f"  GPU KV cache size: {e.kv_cache_tokens:,} tokens, Maximum concurrency for {e.max_model_len:,} tokens "
        f"per request: {e.max_concurrency:.2f}x",
        "",
    ]


def _explain_document(e: Explanation, fixes: list[str]) -> dict[str, Any]:
    """`explain --format json`: the figures, plus error_kinds / risk_kinds, the stable names (IssueKind values) of the
    startup errors and of the margins inside the model's uncertainty for scripts to branch on, and the table's
    verdict (`fits` alone reads a start at risk as a start)."""
    return {
        **explanation_json(e),
        "verdict": "fails" if not e.fits else "at-risk" if e.at_risk else "starts",
        "error_kinds": [k.value for k in e.error_kinds],
        "risk_kinds": [i.kind.value for i in e.issues if e.fits and i.kind.at_risk],
        "fixes": fixes,
    }


def risky(e: Explanation) -> bool:
    """vLLM starts but its post-allocation warm-up may not fit, or a margin is inside the model's uncertainty (a
    warning `check` fails on)."""
    return e.has(IssueKind.WARMUP_OOM, IssueKind.WARMUP_HEADROOM) or e.at_risk


def refuse_flags_not_in(names: Iterable[str], version: VllmVersion) -> None:
    """Options given that the target release's `vllm serve` does not have (introduced later, or removed by
    then; profiles/vllm-flags.yaml): vLLM's parser would exit before startup, so nothing is predicted."""
    given = set(names)
    for spec in default_flag_table().specs:
        if spec.dest in given and not spec.accepted_in(version):
            when = (
                f"added in vLLM {spec.since}"
                if spec.since is not None and version < spec.since
                else f"removed in vLLM {spec.removed}"
            )
            raise FlagError(
                f"{spec.name} is not an option of vLLM {version} ({when}): vllm serve would exit with "
                f"'unrecognized arguments: {spec.name}'"
            )


def refuse_invalid_choices(values: Mapping[str, Any], version: VllmVersion) -> None:
    """A value given as an option (`--block-size 7`) outside the choices the target release's parser has
    (profiles/vllm-flags.yaml: 0.8.5-0.14.0 take --block-size 1, 8, 16, 32, 64, 128 (256 from 0.11.1)): vLLM would
    exit with argparse's "invalid choice" before startup, as `check` reports for a command (choice_errors)."""
    problems = value_choice_errors(values, version)
    if problems:
        raise FlagError(problems[0])


def free_bytes(free_memory_gib: float | None, gpu: Gpu) -> int | None:
    """--free-memory-gib in bytes; a shared GPU cannot have more free memory than it has."""
    if free_memory_gib is None:
        return None
    free = int(free_memory_gib * GiB)
    if free > gpu.total_bytes:
        raise InputError(
            f"--free-memory-gib {free_memory_gib:g} is more than the {gpu.total_bytes / GiB:.2f} GiB {gpu.name} has"
        )
    return free


def project_setting(key: str) -> Any:
    """A setting `recommend` reads when its option is not given: VLLM_PLAN_<KEY>, else `<key>:` in ./vllm-plan.yaml
    (recommender/project.py). explain, perf and calibrate take the model, the GPU and the vLLM release from there
    too, so they judge what `recommend` plans."""
    from recommender.project import merge_settings

    return merge_settings({}, None).get(key)


def release_setting(vllm_version: str, image_release: str | None = None) -> str:
    """--vllm-version as given, else the release a pasted command's image tag names (`docker run
    vllm/vllm-openai:v0.11.0 ...`, as check reads it), else the project's (VLLM_PLAN_VLLM_VERSION, `vllm_version:`),
    else the default."""
    if click.get_current_context().get_parameter_source("vllm_version") is not ParameterSource.DEFAULT:
        return vllm_version
    return str(image_release or project_setting("vllm_version") or vllm_version)


def resolve_hardware(gpu: str | None, gpu_memory_gib: float | None) -> Gpu:
    """--gpu NAME or --gpu-memory-gib N (custom card); without either, the card `recommend` plans for
    (VLLM_PLAN_GPU, else `gpu:` in ./vllm-plan.yaml), so explain and perf judge the same hardware."""
    if gpu_memory_gib is not None:
        return given_card(gpu, gpu_memory_gib, load_gpus())
    if gpu:
        return named_gpu(gpu)
    gpu = project_setting("gpu")
    if not gpu:
        raise InputError(
            "no GPU given: pass --gpu NAME (see `vllm-plan gpus`) or --gpu-memory-gib N, set VLLM_PLAN_GPU, or add "
            "`gpu:` to ./vllm-plan.yaml"
        )
    with said_from(origin_of("gpu")):
        return named_gpu(gpu)


@click.command(context_settings={"ignore_unknown_options": False})
@click.argument("model_arg", required=False, metavar="[MODEL]")
@click.argument("serve", nargs=-1, type=click.UNPROCESSED, metavar="[-- vllm serve MODEL FLAGS...]")
@click.option("--model", "model_opt", help="Model: local directory, catalog id, or hub id.")
@click.option("--revision", help="Hub revision when the model is fetched from the hub.")
@click.option("--gpu", help="GPU type (name, alias or GFD label; see `vllm-plan gpus`).")
@click.option(
    "--gpu-memory-gib",
    type=params.GPU_GIB,
    help="Custom card: total memory in GiB as CUDA reports it (with --gpu: that card with this total).",
)
@click.option("--free-memory-gib", type=params.FREE_GIB, help="Free memory at startup when the GPU is shared.")
@engine_flag_options
@click.option("--cpu-offload-gb", type=params.OFFLOAD_GIB, help="GiB of weights per GPU kept in CPU memory.")
@click.option(
    "--vllm-version",
    default=DEFAULT_VERSION,
    show_default=True,
    help="vLLM release to model (0.4-0.33; the V0 engine's accounting before 0.8).",
)
@click.option(
    "--log",
    "log_file",
    type=params.path(),
    help="A vLLM server log (- for stdin): explain the startup it shows (model, flags, release, GPU) and compare "
    "its figures.",
)
@format_choice("html")
@output_option
@plot_option
def explain(
    model_arg: str | None,
    serve: tuple[str, ...],
    model_opt: str | None,
    revision: str | None,
    gpu: str | None,
    gpu_memory_gib: float | None,
    free_memory_gib: float | None,
    vllm_version: str,
    log_file: Path | None,
    fmt: str,
    output: Path | None,
    force: bool,
    plot: Path | None,
    **flag_values: Any,
) -> None:
    """Predict vLLM's startup memory figures and verdict for MODEL on a GPU.

    Takes vLLM's own flag names, or a whole command after `--` or quoted (`vllm serve ...`, `python -m ...api_server
    ...`, `docker run ... vllm/vllm-openai:TAG ...` at the tag's release); options that do not size memory are ignored.
    Exits 0 whenever the numbers were computed, whether or not vLLM would start.

    \b
    Examples:
      vllm-plan explain Qwen/Qwen2.5-7B-Instruct --gpu rtx4090 --max-model-len 8k
      vllm-plan explain --gpu h100 -- vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2
      vllm-plan explain --gpu l4 -- docker run --gpus all vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-8B
      vllm-plan explain --log server.log
    """
    model, flags, version, logged = _request(model_arg, serve, model_opt, flag_values, vllm_version, log_file)
    hw, gpu_source = _hardware(gpu, gpu_memory_gib, logged, log_file)
    free = free_bytes(free_memory_gib, hw)
    spec = _resolved(model, revision, from_settings=model_arg is None and model_opt is None and not serve)
    env = pasted_env(model_arg, serve, version) if log_file is None else VllmEnv()
    flags = with_engine_choice(flags, env)
    result, env_notes = _explained(spec, hw, flags, version, free, env)
    fixes = _fixes(spec, hw, flags, version, result, free)
    notes = (*spec.notes, *env_notes)
    where = f"{log_file}; GPU {gpu_source}"
    compared = (compare_with_log(result, logged), logged, where) if logged is not None else None

    def document() -> dict[str, Any]:
        doc = _explain_document(result, fixes)
        doc |= ({"log": comparison_json(*compared)} if compared else {}) | {"environment_notes": list(env_notes)}
        return {**doc, **({"model_notes": list(spec.notes)} if spec.notes else {})}

    def text() -> str:
        fix = [f"  fix: {', '.join(fixes)}"] if fixes else []
        log = ["", render_comparison(compared[0], where)] if compared else []
        return "".join(f"note: {n}\n" for n in notes) + "\n".join([render_table(result), *fix, *log])

    deliver(
        fmt,
        output=output,
        plot=plot,
        table=text,
        document=document,
        report=lambda: _report(result, flags, model, notes),
        force=force,
    )


def _resolved(model: str, revision: str | None, *, from_settings: bool) -> ModelSpec:
    """The model; when it came from VLLM_PLAN_MODEL or the project file, an error about it says so."""
    with said_from(origin_of("model") if from_settings else None):
        return resolve_model(model, revision=revision)


def _report(result: Explanation, flags: EngineFlags, model: str, notes: tuple[str, ...]) -> Report:
    from recommender.report.explain import explain_report  # the report's modules load only when one is asked for

    return explain_report(result, flags, model, notes=notes)


def _explained(
    spec: ModelSpec, hw: Gpu, flags: EngineFlags, version: VllmVersion, free: int | None, env: VllmEnv
) -> tuple[Explanation, tuple[str, ...]]:
    """The startup under the pasted command's environment, and the notes saying what the environment changed."""
    result = explain_budget(
        spec, hw, flags, version, free_bytes=free, draft=draft_spec(flags), estimate_cudagraphs=env.estimate_cudagraphs
    )
    return applied(result, env)


def _fixes(
    spec: ModelSpec, hw: Gpu, flags: EngineFlags, version: VllmVersion, result: Explanation, free: int | None
) -> list[str]:
    """What would make a failing start (or a warm-up at risk) work, each change re-checked, as `check` prints it."""
    if not result.errors and not risky(result):
        return []
    from recommender.check.evaluate import startup_fixes

    return startup_fixes(spec, hw, flags, version, result, free_bytes=free)


def draft_spec(flags: EngineFlags) -> ModelSpec | None:
    """The draft model --speculative-config names (EAGLE, DFlash, a draft LM), resolved like the target; None for MTP
    and n-gram drafters or one that cannot be resolved (the explanation then says what it did not count)."""
    cfg = flags.speculative()
    if cfg is None or cfg.model is None or cfg.method == "mtp" or cfg.method in NO_MODEL_METHODS:
        return None
    try:
        return resolve_model(cfg.model)
    except PlanError:
        return None


def _request(
    model_arg: str | None,
    serve: tuple[str, ...],
    model_opt: str | None,
    flag_values: dict[str, Any],
    vllm_version: str,
    log_file: Path | None,
) -> tuple[str, EngineFlags, VllmVersion, LoggedStartup | None]:
    """The model, flags and release to explain, from the arguments or (--log) the log they complete."""
    vllm_version = release_setting(vllm_version, image_release(model_arg, serve))
    logged = read_log(log_file) if log_file is not None else None
    if logged is not None and log_file is not None:
        serve, model_opt, model_arg, vllm_version = _log_request(logged, log_file, serve, model_opt or model_arg)
    version = VllmVersion.parse(vllm_version)
    model, flags = engine_request(model_arg, serve, model_opt, flag_values, version)
    return model, with_logged_engine(flags, logged) if logged is not None else flags, version, logged


def _hardware(
    gpu: str | None, gpu_memory_gib: float | None, logged: LoggedStartup | None, log_file: Path | None
) -> tuple[Gpu, str]:
    """The card to explain on and how it was chosen: as given, else (with --log) the log's."""
    if logged is None or log_file is None:
        return resolve_hardware(gpu, gpu_memory_gib), "as given"
    if gpu_memory_gib is not None:
        return resolve_hardware(gpu, gpu_memory_gib), "as given"
    if gpu:
        return with_logged_total(resolve_hardware(gpu, None), logged)
    return log_gpu(logged, log_file)


def _log_request(
    logged: LoggedStartup, path: Path, serve: tuple[str, ...], model: str | None
) -> tuple[tuple[str, ...], str | None, None, str]:
    """The command, model and release `explain --log` explains: the log's, with MODEL (e.g. the hub id of the log's
    local directory) and --vllm-version when given."""
    if serve:
        raise InputError("--log gives the command: pass the log or a command after `--`, not both")
    ctx = click.get_current_context()
    explicit = ctx.get_parameter_source("vllm_version") is not ParameterSource.DEFAULT
    command = serve_command(logged, path, model)
    version = ctx.params["vllm_version"] if explicit else str(log_version(logged, path))
    return command, model, None, version


def engine_request(
    model_arg: str | None,
    serve: tuple[str, ...],
    model_opt: str | None,
    flag_values: dict[str, Any],
    version: VllmVersion,
) -> tuple[str, EngineFlags]:
    """The model and the engine flags from MODEL / --model, a `-- vllm serve ...` command and the options (the
    options win over the command's flags); vLLM's own argument errors and flags the release lacks are refused."""
    model, values = serve_values(model_arg, serve, model_opt, flag_values, version)
    values.pop("async_scheduling", None)  # the scheduler's, not memory's (perf reads it)
    model = model or project_setting("model")
    if not model:
        raise InputError(NO_MODEL)
    refuse_invalid_choices(values, version)
    flags = engine_flags(values)
    refuse_flags_not_in(values, version)
    return model, flags


NO_MODEL = (
    "no model given: pass MODEL, --model, or `-- vllm serve MODEL ...`, set VLLM_PLAN_MODEL, or add `model:` to "
    "./vllm-plan.yaml"
)


def serve_values(
    model_arg: str | None,
    serve: tuple[str, ...],
    model_opt: str | None,
    flag_values: dict[str, Any],
    version: VllmVersion,
) -> tuple[str | None, dict[str, Any]]:
    """The model and the serve-flag values given, from the options and a whole command after `--` (the options
    win); the command's argument errors, as vLLM's parser of that release reports them, are refused."""
    values: dict[str, Any] = {}
    model = model_opt or model_arg
    pasted = pasted_command(model_arg, serve)
    if pasted is not None or serve:  # a whole command, or MODEL with vLLM's flags after `--`
        argv = [*([model_arg] if model_arg else []), *serve]
        cmd = parsed(pasted, version) if pasted else parse_serve_argv(argv, version=version)
        problems = strict_errors(cmd, version)
        if problems and problems[0].startswith("unrecognized arguments"):  # say why when the release dates it
            refuse_flags_not_in({g.spec.dest for g in not_accepted(cmd, version)}, version)
        if problems:
            raise FlagError(problems[0])
        before = pasted.model_before if pasted else None  # `explain M --gpu G -- vllm serve M ...`
        if before and cmd.model and cmd.model != before:
            raise InputError(f"two models given: {before} and the command's {cmd.model}; give the model once")
        values.update(cmd.values)
        values.update({g.spec.dest: bool(g.value) for g in cmd.given if g.spec.dest == "async_scheduling"})
        model = model_opt or cmd.model or before
        given = cmd.model or before
    else:
        given = model_arg
    if model_opt and given and given != model_opt:  # `--model A B`, `--model A -- vllm serve B`
        raise InputError(f"two models given: --model {model_opt} and {given}; give the model once")
    values.update({name: raw for name, raw in flag_values.items() if raw is not None})
    return model, values
