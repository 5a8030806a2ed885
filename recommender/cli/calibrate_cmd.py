"""`vllm-plan calibrate`: fit the local GPU's efficiencies from `vllm bench serve --save-result` files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from recommender.check.commands import starts_a_command
from recommender.cli import params
from recommender.cli.bench_inputs import engine_setup, read_result_file, result_model, serve_flag_options
from recommender.cli.explain_cmd import release_setting, serve_values
from recommender.cli.output import emit, format_option
from recommender.cli.pasted import pasted_command
from recommender.errors import InputError
from recommender.memory.engine import VllmVersion
from recommender.perf.calibrate import MULTIPLIER_RANGE, calibrate_gpu
from recommender.perf.load import DATASETS
from recommender.perf_profile import load_params, local_profile_path, save_local
from recommender.serve_argv_builder import build_serve_argv


@click.command("calibrate")
@click.argument("results", nargs=-1, required=True, type=params.path(), metavar="RESULT.json...")
@click.option("--model", "model_opt", help="Model served in the runs (default: each file's model_id).")
@serve_flag_options
@click.option("--dataset-name", type=click.Choice(DATASETS), default="random", show_default=True)
@click.option("--dry-run", is_flag=True, help="Print the fitted multipliers; do not write the local profile.")
@format_option
def calibrate(
    results: Sequence[Path],
    model_opt: str | None,
    dataset_name: str,
    dry_run: bool,
    fmt: str,
    gpu: str | None,
    gpu_memory_gib: float | None,
    vllm_version: str,
    async_scheduling: bool | None,
    no_local_calibration: bool,
    **flag_values: Any,
) -> None:
    """Fit the efficiencies of your GPU from your own `vllm bench serve --save-result` files.

    The multipliers (bandwidth, compute, overhead) are written to the local profile
    ($XDG_CONFIG_HOME/vllm-plan/perf-local.yaml, or VLLM_PLAN_PERF_LOCAL) that `perf` and `recommend` use.
    Every file must come from the same `vllm serve` flags, given here as for `perf`.
    """
    del no_local_calibration  # calibration always starts from the bundled constants
    results, model_opt, flag_values = _with_command(results, model_opt, flag_values, vllm_version)
    engine = engine_setup(flag_values, gpu, gpu_memory_gib, release_setting(vllm_version), async_scheduling)
    flags, hw = engine.flags, engine.gpu
    runs = [r for path in results for r in read_result_file(path, dataset_name, engine.version)]
    models = {model_opt or r.model_id: result_model(model_opt, r) for r in runs}
    cases = [(models[model_opt or r.model_id], r) for r in runs]
    outcome = calibrate_gpu(
        cases, hw, flags, load_params(local=False), version=engine.version, async_scheduling=async_scheduling
    )
    doc = outcome.summary()
    bounded = outcome.at_bounds()
    if bounded:  # a multiplier at the search's end is not fitted: say so before it is written and used by perf
        doc["at_bound"] = list(bounded)
        click.echo(
            f"note: {', '.join(bounded)} stopped at the fit's bound (x{MULTIPLIER_RANGE[0]:g} or "
            f"x{MULTIPLIER_RANGE[1]:g}): the runs do not pin it (flags given here that the server did not run with, "
            "such as -tp or -dp, or runs of one load only); check them, or use --dry-run",
            err=True,
        )
    if not dry_run:
        record = {"fitted_on": [r.origin for r in runs], "flags": build_serve_argv("MODEL", flags)[3:]}
        try:
            doc["written_to"] = str(save_local(hw.key, outcome.efficiency, record))
        except OSError as exc:  # a read-only or missing place: one line, nothing half-written (save_local is atomic)
            raise InputError(
                f"cannot write the local calibration {local_profile_path()}: {exc.strerror or exc}"
            ) from None
    elif local_profile_path() is not None:
        doc["would_write_to"] = str(local_profile_path())
    if fmt == "table":
        e = outcome.efficiency
        click.echo(f"{hw.name}: bandwidth x{e.bandwidth:.3f}, compute x{e.compute:.3f}, overhead x{e.overhead:.3f}")
        click.echo(
            f"  median |error| over {len(runs)} run(s): {outcome.error_before:.1%} with the bundled constants, "
            f"{outcome.error_after:.1%} calibrated"
        )
        click.echo(f"  wrote {doc['written_to']}" if "written_to" in doc else "  dry run: nothing written")
    else:
        emit(doc, fmt)


def _with_command(
    results: Sequence[Path], model_opt: str | None, flag_values: dict[str, Any], vllm_version: str
) -> tuple[Sequence[Path], str | None, dict[str, Any]]:
    """The result files, and the server's command when one follows them after `--` (`calibrate r.json --gpu l40s --
    vllm serve M -dp 4`, as `perf` takes it): its model and flags (the options win). Without it, the words of the
    command were read as result files ('vllm: cannot read it')."""
    words = [str(r) for r in results]
    start = next((i for i in range(len(words)) if starts_a_command(words[i:])), None)
    quoted = words[-1] if pasted_command(words[-1], ()) is not None else None  # the command as one argument
    if start is None and quoted is None:
        return results, model_opt, flag_values
    start = len(words) - 1 if start is None else start
    if start == 0:
        raise InputError("give the result files before the command: calibrate RESULT.json... --gpu G -- vllm serve ...")
    version = VllmVersion.parse(release_setting(vllm_version))
    model_arg, serve = (quoted, ()) if quoted is not None else (None, tuple(words[start:]))
    model, values = serve_values(model_arg, serve, model_opt, flag_values, version)
    values.pop("async_scheduling", None)
    return results[:start], model, values
