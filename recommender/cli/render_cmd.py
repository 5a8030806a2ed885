"""`vllm-plan render PLAN.yaml --emit ...` and the rendering options shared with `recommend --emit`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from recommender import __version__
from recommender.cli import params
from recommender.documents import Plan, plan_from_text
from recommender.documents.parse import MAX_PLAN_CHARS
from recommender.errors import InputError
from recommender.render.context import ARTIFACTS
from recommender.render.options import RenderOptions
from recommender.safe_load import path_kind

F = TypeVar("F", bound=Callable[..., Any])

EMIT_HELP = f"Artifacts to render: {', '.join(ARTIFACTS)} (comma-separated) or all."


def render_options(func: F) -> F:
    """Options that shape the artifacts (not the plan)."""
    for decorator in reversed(
        [
            click.option(
                "-o",
                "--output-dir",
                type=params.path(),
                help="Write the files into this folder (atomically) instead of printing them. recommend without "
                "--emit: a FILE.yaml, .json, .html or .txt receives the plan itself in that format.",
            ),
            click.option(
                "--force",
                is_flag=True,
                help="Overwrite files that differ from the new rendering (recommend -o FILE: from the new plan).",
            ),
            click.option("--name", help="Deployment / unit name (default: vllm-<model>)."),
            click.option("--namespace", default="default", show_default=True, help="Kubernetes namespace."),
            click.option("--port", type=params.PORT, default=8000, show_default=True, help="HTTP port of the server."),
            click.option("--replicas", type=params.REPLICAS, help="Engine replicas (default: what the plan needs)."),
            click.option("--image", default="vllm/vllm-openai", show_default=True, help="Container image (no tag)."),
            click.option("--image-tag", help="Image tag (default: v<vLLM version of the plan>)."),
            click.option("--storage-class", help="StorageClass of the model-cache volume."),
            click.option(
                "--storage-gib",
                type=params.STORAGE_GIB,
                help="Size of the model-cache volume (default: from the weights).",
            ),
            click.option(
                "--hf-token-secret",
                default="hf-token",
                show_default=True,
                help="Kubernetes Secret holding HF_TOKEN under key 'token'.",
            ),
            click.option("--runtime-class", help="Kubernetes runtimeClassName (e.g. nvidia)."),
            click.option(
                "--vllm-bin",
                default="/opt/vllm/bin/vllm",
                show_default=True,
                help="Absolute path of the vllm executable for the systemd unit.",
            ),
        ]
    ):
        func = decorator(func)
    return func


def options_from(kw: dict[str, Any]) -> RenderOptions:
    """RenderOptions from the click keyword arguments (consumed); validated when rendering."""
    return RenderOptions(
        name=kw.pop("name"),
        namespace=kw.pop("namespace"),
        port=kw.pop("port"),
        replicas=kw.pop("replicas"),
        image=kw.pop("image"),
        image_tag=kw.pop("image_tag"),
        storage_class=kw.pop("storage_class"),
        storage_gib=kw.pop("storage_gib"),
        hf_token_secret=kw.pop("hf_token_secret"),
        runtime_class=kw.pop("runtime_class"),
        vllm_bin=kw.pop("vllm_bin"),
    )


def emit_artifacts(
    plan: Plan,
    emit: str,
    opts: RenderOptions,
    output_dir: Path | None,
    force: bool,
    extra_files: dict[str, str] | None = None,
) -> None:
    """Render, then print or write (all or nothing)."""
    from recommender.render.engine import expand, render
    from recommender.render.options import check_renderable
    from recommender.render.output import write_files

    check_renderable(plan, opts)
    files, notes = render(plan, expand(emit), opts, tool_version=__version__)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if output_dir is None:
        for i, (name, content) in enumerate(sorted(files.items())):
            if len(files) > 1:
                click.echo(("" if i == 0 else "\n") + f"# ==> {name} <==")
            click.echo(content, nl=False)
        return
    for path, status in write_files({**files, **(extra_files or {})}, output_dir, force=force):
        click.echo(f"{status}: {path}")


def load_plan(path: Path) -> Plan:
    """Read and validate a plan document (YAML or JSON) written by `recommend`; `-` reads it from stdin
    (`vllm-plan recommend ... --format yaml | vllm-plan render - --emit k8s`)."""
    name = "<stdin>" if str(path) == "-" else str(path)
    if name != "<stdin>" and path_kind(path) == "other":  # a FIFO would block the read, /dev/zero never end
        raise InputError(f"{name}: not a regular file (a device, FIFO or socket), not a plan document")
    try:
        if name == "<stdin>":
            raw = sys.stdin.buffer.read(MAX_PLAN_CHARS * 4 + 1)
        else:
            with path.open("rb") as fh:
                raw = fh.read(MAX_PLAN_CHARS * 4 + 1)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror}") from exc
    if len(raw) > MAX_PLAN_CHARS * 4:
        raise InputError(f"{name}: larger than {MAX_PLAN_CHARS >> 20} MiB, not a plan document")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{name}: not UTF-8 text (byte {exc.start}), not a plan document") from exc
    return plan_from_text(text, name)


@click.command()
@click.argument("plan_file", type=params.path(dir_okay=False))
@click.option("--emit", default="all", show_default=True, help=EMIT_HELP)
@render_options
def render(plan_file: Path, emit: str, output_dir: Path | None, force: bool, **kw: Any) -> None:
    """Render deployment artifacts from a saved plan (`recommend --format yaml > plan.yaml`; `-` for stdin).

    \b
    Examples:
      vllm-plan render plan.yaml --emit k8s --namespace llm -o deploy/
      vllm-plan render plan.yaml --emit command
    """
    opts = options_from(kw)
    emit_artifacts(load_plan(plan_file), emit, opts, output_dir, force)
