"""`explain --log FILE`: a vLLM server log as the request to explain, and the prediction beside its figures."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from recommender.catalog import load_gpus
from recommender.errors import FlagError, InputError, UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.gpu_totals import resolve_total
from recommender.hardware import Gpu
from recommender.log_comparison import LogComparison
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.safe_load import UntrustedDocumentError, read_text
from recommender.startup_log import (
    ENGINE_OPTIONS,
    SWITCHES,
    LoggedFigures,
    LoggedStartup,
    engine_starts,
    read_startup_log,
)
from recommender.units import GiB

MAX_LOG_BYTES = 64 << 20  # a server log larger than 64 MiB is refused, not read


def read_log(path: Path) -> LoggedStartup:
    """The one startup FILE shows; a file that is not a vLLM startup log, or holds several, is refused."""
    try:
        text = _stdin_text() if str(path) == "-" else read_text(path, MAX_LOG_BYTES)
    except UntrustedDocumentError as exc:
        raise InputError(f"{path}: {exc}") from None
    starts = engine_starts(text)
    if starts > 1:
        raise InputError(f"{path}: the log starts {starts} engines with different configurations; keep one startup")
    logged = read_startup_log(text)
    if not (logged.model or logged.options or logged.figures != LoggedFigures() or logged.error):
        raise InputError(f"{path}: no vLLM startup lines found (engine arguments, memory figures or errors)")
    return logged


def _stdin_text() -> str:
    """`--log -`: the log piped in (`kubectl logs POD | vllm-plan explain --log -`), bounded like a file."""
    raw = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
    if len(raw) > MAX_LOG_BYTES:
        raise UntrustedDocumentError(f"larger than {MAX_LOG_BYTES >> 20} MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UntrustedDocumentError(f"not UTF-8 text (byte {exc.start})") from None


def serve_command(logged: LoggedStartup, path: Path, model: str | None = None) -> tuple[str, ...]:
    """The `vllm serve` command the log's arguments make (the memory-sizing ones; explicit before resolved), for
    `model` when given (the hub id of a local directory the log names), else the log's model."""
    model = model or logged.model
    if not model:
        raise InputError(f"{path}: the log does not name the model (no arguments or engine config line): pass MODEL")
    argv = ["vllm", "serve", model]
    for name, flag in ENGINE_OPTIONS.items():
        value = logged.option(name)
        if value is not None and not (name == "quantization" and value in ("none", "None")):
            argv += [flag, value.removeprefix("torch.")]
    argv += [flag for name, flag in SWITCHES.items() if logged.option(name) == "True"]
    return tuple(argv)


def log_version(logged: LoggedStartup, path: Path) -> VllmVersion:
    if logged.version is None:
        raise InputError(f"{path}: the log does not say which vLLM release it is: pass --vllm-version")
    try:
        return VllmVersion.parse(logged.version)
    except FlagError:
        raise InputError(f"{path}: vLLM {logged.version} is outside the releases modelled (0.4 to 0.33)") from None


def with_logged_engine(flags: EngineFlags, logged: LoggedStartup) -> EngineFlags:
    """The engine the log shows running (V0 and V1 overlapped from 0.8 to 0.10), as VLLM_USE_V1 would choose it."""
    if flags.use_v1 is not None or logged.engine is None:
        return flags
    return replace(flags, use_v1=logged.engine == "V1")


def log_gpu(logged: LoggedStartup, path: Path) -> tuple[Gpu, str]:
    """The card the log names (its device name), else the one its printed total identifies; with the total the log
    printed when it has one (a card's total moves with driver, ECC and WSL)."""
    catalog = load_gpus()
    named: dict[str, Gpu] = {}
    for name in logged.device_names:
        try:
            card = resolve_gpu(name, catalog)
        except UnknownGpuError:
            continue
        named.setdefault(card.key, card)
    if logged.device_names and not named:
        raise InputError(
            f"{path}: the log's GPU {logged.device_names[0]!r} is not in the catalog: pass --gpu NAME, or "
            "--gpu-memory-gib N for a card the catalog lacks"
        )
    if len(named) > 1:
        raise InputError(
            f"{path}: the log names several GPUs ({', '.join(named)}): a plan holds one GPU type; pass --gpu NAME "
            "(every pipeline stage is then evaluated on that card)"
        )
    if named:
        card = next(iter(named.values()))
        how = f"named in the log ({logged.device_names[0]})"
    elif logged.total_gib is not None:
        try:
            match = resolve_total(logged.total_gib, catalog, clues=logged.gpu_clues)
        except UnknownGpuError as exc:
            raise InputError(f"{path}: the log names no GPU and its total {logged.total_gib} GiB: {exc}") from None
        card = match.gpu
        how = f"by the device total the log printed ({logged.total_gib} GiB): {match.note}"
    else:
        raise InputError(f"{path}: the log names no GPU and prints no device total: pass --gpu")
    if logged.total_gib is not None:
        card = replace(card, total_bytes=int(logged.total_gib * GiB))
    return card, how


def with_logged_total(card: Gpu, logged: LoggedStartup) -> tuple[Gpu, str]:
    """A card given by name with the total its log printed, when that total is this card's (within 10%: driver,
    ECC and WSL move it; further off, the log is of another card and the catalogued total is kept). An integrated
    GPU's total is the share of the machine's memory its setting gives it (Strix Halo: 59.6 to 120 GiB of 128), so
    any printed total up to the machine's memory is its own."""
    total = logged.total_gib
    if total is None or not _own_total(card, total):
        return card, "as given"
    return replace(card, total_bytes=int(total * GiB)), f"as given, with the total the log printed ({total} GiB)"


def _own_total(card: Gpu, total_gib: float) -> bool:
    if card.unified_memory and card.marketed_gb is not None:
        return total_gib <= card.marketed_gb + 0.5
    return abs(total_gib * GiB - card.total_bytes) <= 0.1 * card.total_bytes


def render_comparison(c: LogComparison, where: str) -> str:
    out = [f"Compared with the log ({where})", f"  {'':<27}{'log':>12}{'predicted':>12}{'error':>9}"]
    for row in c.rows:
        fmt = "{:,.0f}" if row.unit in ("tokens", "blocks") else "{:.2f}"
        err = f"{row.error * 100:+.1f}%" if row.error is not None else "-"
        unit = "x" if row.unit == "x" else f" {row.unit}" if row.unit == "GiB" else ""
        out.append(f"  {row.name:<27}{fmt.format(row.logged) + unit:>12}{fmt.format(row.predicted) + unit:>12}{err:>9}")
    agree = {True: "agree", False: "DISAGREE", None: "the log does not show whether it started"}[c.verdicts_agree]
    if c.predicted_verdict == "at risk":
        agree = "a margin inside the model's uncertainty: not a verdict"
    out.append(f"  verdict: vLLM {c.logged_verdict} per the log, predicted {c.predicted_verdict} ({agree})")
    out += [f"  note: {n}" for n in c.notes]
    return "\n".join(out)


def comparison_json(c: LogComparison, logged: LoggedStartup, where: str) -> dict[str, Any]:
    return {
        "source": where,
        "version": logged.version,
        "engine": logged.engine,
        "error": logged.error,
        "figures": [
            {"name": r.name, "unit": r.unit, "logged": r.logged, "predicted": r.predicted, "error": r.error}
            for r in c.rows
        ],
        "verdict": {"logged": c.logged_verdict, "predicted": c.predicted_verdict, "agree": c.verdicts_agree},
        "notes": list(c.notes),
    }
