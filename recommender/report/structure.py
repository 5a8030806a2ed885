"""A report as typed sections: what the HTML template places, in order (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from recommender.report.svg import Chart

Style = Literal["", "pass", "fail", "warn", "num", "code"]


@dataclass(frozen=True, slots=True)
class Cell:
    """A table cell or list item: its text and how it is shown."""

    text: str
    style: Style = ""


@dataclass(frozen=True, slots=True)
class Table:
    """Headers and rows of cells."""

    headers: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    details: tuple[tuple[Cell, ...], ...] = ()  # per row (when given): lines shown under it across the table

    def detail(self, index: int) -> tuple[Cell, ...]:
        """The lines under row `index` (none when not given)."""
        return self.details[index] if index < len(self.details) else ()


@dataclass(frozen=True, slots=True)
class Section:
    """A titled part of the report: charts, a table, commands and messages, each optional."""

    title: str
    id: str
    note: str = ""
    commands: tuple[str, ...] = ()
    charts: tuple[Chart, ...] = ()
    table: Table | None = None
    items: tuple[Cell, ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    """One HTML page."""

    title: str
    subtitle: str
    verdict: Cell
    sections: tuple[Section, ...]
    inputs: tuple[tuple[str, str], ...]
    tool_version: str
    vllm_version: str
    notes: tuple[str, ...] = field(default=())

    @property
    def charts(self) -> tuple[Chart, ...]:
        """Every chart, in page order (what --plot draws)."""
        return tuple(c for s in self.sections for c in s.charts)
