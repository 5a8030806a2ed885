"""Printing helpers: aligned tables and JSON / YAML documents."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import click


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def emit(data: Any, fmt: str) -> None:
    """Print a document as json or yaml."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=False))
    else:
        import yaml

        click.echo(yaml.safe_dump(data, sort_keys=False, width=120), nl=False)


format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "yaml"]),
    default="table",
    show_default=True,
    help="Output format.",
)
