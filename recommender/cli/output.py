"""Printing helpers: aligned tables and JSON / YAML documents."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in headers], *[["" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def dumps(data: Any, fmt: str) -> str:
    """A document as json or yaml text (ending in a newline)."""
    if fmt == "json":
        return json.dumps(data, indent=2, sort_keys=False) + "\n"
    import yaml

    return str(yaml.safe_dump(data, sort_keys=False, width=120))


def emit(data: Any, fmt: str) -> None:
    """Print a document as json or yaml."""
    click.echo(dumps(data, fmt), nl=False)


def format_choice(*extra: str) -> Callable[[F], F]:
    """--format table|json|yaml, plus the report formats a command offers (html, markdown)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "json", "yaml", *extra]),
        default="table",
        show_default=True,
        help="Output format" + (" (html: a self-contained report page)." if "html" in extra else "."),
    )


format_option = format_choice()
