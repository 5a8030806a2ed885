"""Render artifacts with one strict Jinja environment (jinja2 is imported only here, lazily).

Templates place only what their context computed: `finalize` refuses any value that is not a number or an
`Escaped` string, so a template cannot place text that skipped the quoting of its target.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import TYPE_CHECKING, Any

from recommender.documents.plan import Plan
from recommender.errors import InputError
from recommender.render import context as c
from recommender.render.escape import Escaped
from recommender.render.options import RenderOptions
from recommender.resources import templates_dir

if TYPE_CHECKING:
    import jinja2

TEMPLATES = {
    "command": "command.sh.j2",
    "systemd": "vllm.service.j2",
    "k8s": "k8s/deployment.yaml.j2",
    "lws": "k8s/leaderworkerset.yaml.j2",
    "helm": "helm-values.yaml.j2",
    "compose": "compose.yaml.j2",
}
SINGLE_HOST = ("command", "systemd", "compose", "helm")  # the chart's engine pods do not span nodes either


def placeable(value: object) -> object:
    """Jinja's finalize: numbers and escaped text pass, anything else is a bug in a template or its context."""
    if isinstance(value, Escaped) or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value
    raise TypeError(f"a template placed an unescaped {type(value).__name__}: {value!r:.60}")


@cache
def environment() -> jinja2.Environment:
    """StrictUndefined (a missing value is an error, never an empty string), no autoescape, stable output."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=placeable,
    )


def variables(ctx: Any) -> dict[str, Any]:
    """A context dataclass as template variables (its fields, by name)."""
    return {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)}


def _render(artifact: str, ctx: Any) -> str:
    return environment().get_template(TEMPLATES[artifact]).render(**variables(ctx))


def expand(emit: str) -> tuple[str, ...]:
    """`all` or a comma-separated list -> artifact names."""
    names = c.ARTIFACTS if emit == "all" else tuple(x.strip() for x in emit.split(",") if x.strip())
    unknown = [n for n in names if n not in c.ARTIFACTS]
    if unknown or not names:
        raise InputError(f"--emit {emit!r}: choose from {', '.join(c.ARTIFACTS)} or all")
    return names


def _for_multinode(d: c.Deployment, artifacts: tuple[str, ...], notes: list[str]) -> tuple[str, ...]:
    """A multi-node plan runs on Ray across nodes: only the LeaderWorkerSet can hold it."""
    wanted = [a for a in artifacts if a in SINGLE_HOST]
    if wanted and len(artifacts) == len(wanted):
        raise InputError(
            f"a {d.nodes}-node plan cannot run as {', '.join(wanted)} on one host: "
            "render k8s (a LeaderWorkerSet with Ray) instead"
        )
    if wanted:
        notes.append(
            f"skipped {', '.join(wanted)}: a {d.nodes}-node plan runs on Ray across nodes (see the LeaderWorkerSet)"
        )
    return tuple(a for a in artifacts if a not in SINGLE_HOST)


def render(
    plan: Plan, artifacts: tuple[str, ...], opts: RenderOptions, *, tool_version: str
) -> tuple[dict[str, str], list[str]]:
    """{file name: content} for the requested artifacts, plus notes (e.g. a normalised name)."""
    d = c.deployment(plan, opts, tool_version=tool_version)
    notes = list(d.notes)
    if d.multinode:
        artifacts = _for_multinode(d, artifacts, notes)
    files: dict[str, str] = {}
    for artifact in artifacts:
        if artifact == "command":
            files["serve.sh"] = _render("command", c.script_context(d))
        elif artifact == "systemd":
            for file_name, unit in c.unit_contexts(d):
                files[file_name] = _render("systemd", unit)
        elif artifact == "k8s" and d.multinode:
            files["leaderworkerset.yaml"] = _render("lws", c.kubernetes_context(d))
        elif artifact == "k8s":
            files["kubernetes.yaml"] = _render("k8s", c.kubernetes_context(d))
        elif artifact == "helm":
            files["values.yaml"] = _render("helm", c.helm_context(d))
        elif artifact == "compose":
            files["compose.yaml"] = _render("compose", c.compose_context(d))
    return files, notes
