"""Read a plan document (this tool's own output) back as the server it describes (pure: document in, Found out)."""

from __future__ import annotations

from typing import Any

from recommender.check.found import Found
from recommender.documents import plan_annotations, plan_from_data
from recommender.units import GiB


def read_plan(doc: dict[str, Any], source: str) -> list[Found]:
    """A plan document written by `recommend`, validated (a malformed or tampered plan is an input error); its
    promise and prediction become the annotations `render` would write, so the same checks apply."""
    plan = plan_from_data(doc, source)
    tool = plan.generator.removeprefix("vllm-plan ")
    claimed = plan_annotations.from_plan(plan, tool_version=tool)
    free = plan.inputs.free_memory_gib
    return [
        Found(
            source,
            "plan",
            plan.best.command,
            annotations=dict(plan_annotations.encode(claimed)),
            free_bytes=int(free * GiB) if free is not None else None,  # the plan was made for this much free memory
        )
    ]
