"""The planner: search launch configurations for a target load and rank the feasible ones (pure).

types (the values), space (what is searched), evaluation (one candidate's flags and verdict), ranking (order
and the nearest miss), search (`plan`, `plan_fewest_gpus`).
"""

from __future__ import annotations

from recommender.planner.evaluation import evaluate_candidate
from recommender.planner.search import plan, plan_fewest_gpus, validate_target
from recommender.planner.types import (
    OBJECTIVES,
    Candidate,
    Evaluation,
    Hardware,
    Objective,
    PlanResult,
    SearchPolicy,
    Target,
    Unevaluable,
    Verdict,
    WeightOption,
)

__all__ = [
    "OBJECTIVES",
    "Candidate",
    "Evaluation",
    "Hardware",
    "Objective",
    "PlanResult",
    "SearchPolicy",
    "Target",
    "Unevaluable",
    "Verdict",
    "WeightOption",
    "evaluate_candidate",
    "plan",
    "plan_fewest_gpus",
    "validate_target",
]
