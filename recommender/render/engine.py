"""Render artifacts with one strict Jinja environment (jinja2 is imported only here, lazily)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from recommender.errors import InputError
from recommender.render.context import ARTIFACTS, RenderOptions, build_context, yaml_scalar
from recommender.resources import templates_dir

if TYPE_CHECKING:
    import jinja2


@cache
def environment() -> jinja2.Environment:
    """StrictUndefined (a missing value is an error, never an empty string), no autoescape, stable output."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["y"] = yaml_scalar
    return env


def _render(template: str, ctx: dict[str, Any]) -> str:
    import jinja2

    try:
        return environment().get_template(template).render(**ctx)
    except jinja2.UndefinedError as exc:  # a template asked for a value the context does not compute
        raise RuntimeError(f"template {template}: {exc}") from exc


def expand(emit: str) -> tuple[str, ...]:
    """`all` or a comma-separated list -> artifact names."""
    names = ARTIFACTS if emit == "all" else tuple(x.strip() for x in emit.split(",") if x.strip())
    unknown = [n for n in names if n not in ARTIFACTS]
    if unknown or not names:
        raise InputError(f"--emit {emit!r}: choose from {', '.join(ARTIFACTS)} or all")
    return names


def render(
    plan: dict[str, Any], artifacts: tuple[str, ...], opts: RenderOptions, *, tool_version: str
) -> tuple[dict[str, str], list[str]]:
    """{file name: content} for the requested artifacts, plus notes (e.g. a normalised name)."""
    ctx = build_context(plan, opts, tool_version=tool_version)
    files: dict[str, str] = {}
    notes = list(ctx["notes"])
    single_host = ("command", "systemd", "compose", "helm")  # the chart's engine pods do not span nodes
    if ctx["multinode"]:
        wanted = [a for a in artifacts if a in single_host]
        if wanted and len(artifacts) == len(wanted):
            raise InputError(
                f"a {ctx['nodes']}-node plan cannot run as {', '.join(wanted)} on one host: "
                "render k8s (a LeaderWorkerSet with Ray) instead"
            )
        if wanted:
            notes.append(
                f"skipped {', '.join(wanted)}: a {ctx['nodes']}-node plan runs on Ray across nodes "
                "(see the LeaderWorkerSet)"
            )
        artifacts = tuple(a for a in artifacts if a not in single_host)
    for artifact in artifacts:
        if artifact == "command":
            files["serve.sh"] = _render("command.sh.j2", ctx)
        elif artifact == "systemd":
            for unit in ctx["units"]:
                files[f"{unit['name']}.service"] = _render("vllm.service.j2", {**ctx, "unit": unit})
        elif artifact == "k8s":
            if ctx["multinode"]:
                files["leaderworkerset.yaml"] = _render("k8s/leaderworkerset.yaml.j2", ctx)
            else:
                files["kubernetes.yaml"] = _render("k8s/deployment.yaml.j2", ctx)
        elif artifact == "helm":
            files["values.yaml"] = _render("helm-values.yaml.j2", ctx)
        elif artifact == "compose":
            files["compose.yaml"] = _render("compose.yaml.j2", ctx)
    return files, notes
