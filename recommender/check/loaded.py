"""What reading `check`'s inputs gave: the servers found, the inputs that could not be read and notes (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from recommender.check.found import Found
from recommender.errors import InputError


@dataclass
class Loaded:
    """Servers found, inputs that could not be read (with why), and notes about skipped files."""

    found: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def naming(where: str, exc: InputError) -> str:
    """The problem as one line that names the input it is in (a reader's message may name only the field)."""
    text = str(exc)
    return text if where in text or (where == "-" and text.startswith("<stdin>")) else f"{where}: {text}"
