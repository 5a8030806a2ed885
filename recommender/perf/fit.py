"""Fitting the performance model's constants to measurements (pure: the caller supplies the objective).

A compass search in log space over a few named knobs: each round tries every knob one step up and down, keeps
any improvement, and halves that knob's step when neither way improves. Robust to the noisy, piecewise objective a
replay gives (no gradients), deterministic, and cheap in evaluations for the handful of knobs the model has.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from recommender.perf.params import Efficiency, PerfParams


@dataclass(frozen=True, slots=True)
class Knob:
    """One fitted constant: a PerfParams field, `families.<family>.<part>` or `gpus.<key>.<part>`."""

    name: str
    lo: float
    hi: float


def get_value(params: PerfParams, name: str) -> float:
    """The current value of knob `name`."""
    parts = name.split(".")
    if len(parts) == 1:
        return float(getattr(params, name))
    table = params.families if parts[0] == "families" else params.gpus
    return float(getattr(table.get(parts[1], Efficiency()), parts[2]))


def set_value(params: PerfParams, name: str, value: float) -> PerfParams:
    """A copy of `params` with knob `name` set to `value`."""
    parts = name.split(".")
    changes: dict[str, Any] = {name: value}
    if len(parts) == 3:
        which, key, part = parts
        table = dict(params.families if which == "families" else params.gpus)
        entry: dict[str, Any] = {part: value}
        table[key] = replace(table.get(key, Efficiency()), **entry)
        changes = {which: table}
    return replace(params, **changes)


def huber(x: float, delta: float = 0.5) -> float:
    """Squared below `delta`, linear above: one wild point cannot dominate the fit."""
    a = abs(x)
    return 0.5 * a * a if a <= delta else delta * (a - 0.5 * delta)


def log_error(predicted: float, measured: float) -> float:
    """log(predicted / measured): symmetric for over- and under-prediction."""
    if predicted <= 0 or measured <= 0:
        return 3.0
    return math.log(predicted / measured)


@dataclass(frozen=True, slots=True)
class FitResult:
    """The fitted constants, the objective before and after, and the evaluations it took."""

    params: PerfParams
    start_loss: float
    loss: float
    evaluations: int


def compass_search(
    objective: Callable[[PerfParams], float],
    start: PerfParams,
    knobs: Sequence[Knob],
    *,
    step: float = 0.35,
    min_step: float = 0.02,
    max_evaluations: int = 400,
    progress: Callable[[int, float, PerfParams], None] | None = None,
) -> FitResult:
    """Minimise `objective` over `knobs` (log space, clipped to each knob's bounds; a start outside them is moved
    to the nearest bound first).

    Each knob keeps its own step: a knob that improves neither way halves its step, the others keep theirs. (One
    shared step, halved only when no knob at all improved, left the knobs whose optimum lies within a large step
    at their start values for as long as any other knob kept moving: the search ended before it refined them.)"""
    best = start
    for knob in knobs:
        value = get_value(best, knob.name)
        if not knob.lo <= value <= knob.hi:
            best = set_value(best, knob.name, min(knob.hi, max(knob.lo, value)))
    start_loss = best_loss = objective(best)
    evals = 1
    steps = {knob.name: step for knob in knobs}
    while evals < max_evaluations and any(s >= min_step for s in steps.values()):
        for knob in knobs:
            if steps[knob.name] < min_step or evals >= max_evaluations:
                continue
            current = get_value(best, knob.name)
            moved = False
            for direction in (1, -1):
                value = min(knob.hi, max(knob.lo, current * math.exp(direction * steps[knob.name])))
                if value == current:
                    continue
                trial = set_value(best, knob.name, value)
                loss = objective(trial)
                evals += 1
                if loss < best_loss - 1e-9:
                    best, best_loss, moved = trial, loss, True
                    if progress:
                        progress(evals, best_loss, best)
                    break
            if not moved:
                steps[knob.name] /= 2
    return FitResult(best, start_loss, best_loss, evals)
