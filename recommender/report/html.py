"""Place a report into the HTML and SVG templates (Jinja with autoescaping: report values are untrusted text)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from recommender.report.structure import Report
from recommender.report.svg import Chart
from recommender.resources import templates_dir

if TYPE_CHECKING:
    import jinja2

PLOT_GAP = 16  # px between charts stacked in one --plot image


@cache
def environment() -> jinja2.Environment:
    """Autoescape on for every template, StrictUndefined: a missing value is an error, never an empty string."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _render(template: str, **ctx: Any) -> str:
    return environment().get_template(template).render(**ctx)


def html_page(report: Report) -> str:
    """One self-contained page: inline CSS and SVG, no script, a CSP that forbids any fetch."""
    return _render("report/report.html.j2", r=report)


def svg_document(charts: Sequence[Chart], title: str) -> str:
    """The charts stacked in one standalone SVG file."""
    placed, y = [], 0
    for c in charts:
        placed.append((c, y))
        y += c.height + PLOT_GAP
    width = max((c.width for c in charts), default=0)
    return _render("report/plot.svg.j2", placed=placed, width=width, height=max(0, y - PLOT_GAP), title=title)
