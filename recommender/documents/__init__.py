"""The documents the tool writes and reads back, each declared once as frozen dataclasses (pure).

- `plan.py`: the versioned plan (`recommend --format json|yaml`, read by `render` and `check`) and explain's
  prediction (`explain --format json`);
- `build.py`: those documents from the core's results;
- `parse.py`: a plan read from untrusted text, validated once;
- `plan_annotations.py`: the `vllm-plan.io/*` annotations `render` writes and `check` reads;
- `schema.py`: the field declarations and the one reader / writer behind them.
"""

from __future__ import annotations

from typing import Any

from recommender.documents.build import plan_of, prediction_of
from recommender.documents.parse import PlanDocumentError, plan_from_data, plan_from_text
from recommender.documents.plan import PLAN_API_VERSION, Plan, PlanOption, Prediction
from recommender.documents.schema import dump
from recommender.memory.budget import Explanation

__all__ = [
    "PLAN_API_VERSION",
    "Plan",
    "PlanDocumentError",
    "PlanOption",
    "Prediction",
    "dump",
    "explanation_json",
    "plan_from_data",
    "plan_from_text",
    "plan_of",
    "prediction_of",
]


def explanation_json(e: Explanation) -> dict[str, Any]:
    """The `explain --format json` contract (sizes in GiB = 2**30 bytes): the Prediction document."""
    data: dict[str, Any] = dump(prediction_of(e))
    return data
