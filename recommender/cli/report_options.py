"""The report options shared by explain, recommend and check: -o FILE, --plot FILE.svg|png, and delivery."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.core import ParameterSource

from recommender.cli import params
from recommender.cli.output import dumps
from recommender.errors import InputError

if TYPE_CHECKING:
    from recommender.report.structure import Report
    from recommender.report.write import Staged

PLOT_SUFFIXES = (".svg", ".png")
F = TypeVar("F", bound=Callable[..., Any])


def _plot_path(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """Refuse an unknown image type, or PNG without its rasteriser, before any work is done."""
    del ctx, param
    if value is None:
        return None
    if value.suffix.lower() not in PLOT_SUFFIXES:
        raise InputError(f"--plot {value}: the file name must end in .svg or .png")
    if value.suffix.lower() == ".png":
        from recommender.report.png import require_rasteriser

        require_rasteriser()
    return value


def output_option(func: F) -> F:
    """-o FILE and --force: the output written atomically, a file that differs from it kept unless --force (as
    `render` and `recommend -o` keep theirs)."""
    func = click.option(
        "--force",
        is_flag=True,
        help="Replace an -o FILE (or --plot image) that differs from the new output; without it such a file is "
        "kept and the command exits 2.",
    )(func)
    return click.option(
        "-o",
        "--output",
        type=params.path(dir_okay=False),
        help="Write the output to FILE (atomically) instead of printing it; an existing FILE that differs from the "
        "new output is refused unless --force.",
    )(func)


plot_option = click.option(
    "--plot",
    type=params.path(dir_okay=False),
    callback=_plot_path,
    metavar="FILE.svg|FILE.png",
    help="Also draw the report's charts into an image (PNG needs `pip install 'vllm-plan[plot]'`).",
)


def stage_plot(path: Path, report: Report, *, keep_changed: bool = False) -> Staged | None:
    """The report's charts stacked in one SVG (rasterised when the name ends in .png), written beside `path` but
    not yet in place: the command's other output is written first, so a failure leaves neither."""
    from recommender.report.html import svg_document
    from recommender.report.write import stage

    if not report.charts:
        click.echo(f"note: nothing to plot into {path}: no chart was computed", err=True)
        return None
    svg = svg_document(report.charts, report.title)
    if path.suffix.lower() == ".png":
        from recommender.report.png import svg_to_png

        return stage(path, svg_to_png(svg), keep_changed=keep_changed)
    return stage(path, svg.encode("utf-8"), keep_changed=keep_changed)


@contextmanager
def plotted(plot: Path | None, report: Report | None, *, keep_changed: bool = False) -> Iterator[None]:
    """--plot put in place only when the body (the command's other output) completes; else discarded."""
    staged = stage_plot(plot, report, keep_changed=keep_changed) if plot is not None and report is not None else None
    try:
        yield
    except BaseException:
        if staged is not None:
            staged.discard()
        raise
    if staged is not None:
        staged.commit()


def deliver(
    fmt: str,
    *,
    output: Path | None,
    plot: Path | None,
    table: Callable[[], str],
    document: Callable[[], Any],
    report: Callable[[], Report],
    markdown: Callable[[], str] | None = None,
    force: bool,
) -> None:
    """Print (or write to -o FILE) the output in `fmt`, and draw --plot; each form is computed only if asked.
    Without `force`, a file (-o or --plot) that differs from the new output is refused, as `render` refuses."""
    fmt = file_format(fmt, output, markdown=markdown is not None)
    built = report() if fmt == "html" or plot is not None else None
    keep = not force
    with plotted(plot, built, keep_changed=keep):
        if fmt == "html" and built is not None:
            from recommender.report.html import html_page

            text = html_page(built)
        elif fmt == "markdown" and markdown is not None:
            text = markdown()
        elif fmt == "table":
            text = table() + "\n"
        else:
            text = dumps(document(), fmt)
        put(text, output, force=force)


# -o FILE's suffix names the format when --format is left at its default: `-o report.json` is JSON, not a table
FILE_FORMATS = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".htm": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "table",
}


def file_format(fmt: str, output: Path | None, *, markdown: bool) -> str:
    """`fmt` when --format was given (or nothing is written to a file), else the format -o FILE's suffix names
    (markdown only where the command writes it), else `fmt`."""
    ctx = click.get_current_context(silent=True)
    if output is None or ctx is None or ctx.get_parameter_source("fmt") is not ParameterSource.DEFAULT:
        return fmt
    named = FILE_FORMATS.get(output.suffix.lower())
    return fmt if named is None or (named == "markdown" and not markdown) else named


def put(text: str, output: Path | None, *, force: bool) -> None:
    """Print `text`, or write it to -o FILE atomically (a file that differs from it kept unless `force`)."""
    if output is None:
        click.echo(text, nl=False)
    else:
        from recommender.report.write import write_atomic

        write_atomic(output, text.encode("utf-8"), keep_changed=not force)
