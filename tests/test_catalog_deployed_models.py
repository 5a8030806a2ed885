"""The list of models public vLLM material serves (benchmarks/data/deployed_models.txt, read by
benchmarks/catalog_coverage.py), and catalog entries added because that list names them: each checked against its
source by hand (the docstring says which)."""

from __future__ import annotations

import re
from pathlib import Path

from recommender.sources.resolve import resolve_model

LIST = Path(__file__).parent.parent / "benchmarks" / "data" / "deployed_models.txt"
# `ID  github:OWNER/NAME@COMMIT:PATH`
_LINE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+  github:[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+$")


def test_every_listed_id_names_the_repository_commit_and_file_it_comes_from() -> None:
    lines = [line for line in LIST.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    bad = [line for line in lines if not _LINE.match(line)]
    assert bad == [] and len(lines) >= 800
    pairs = [(line.split()[0].lower(), line.split()[1].split("@")[0]) for line in lines]
    assert len(pairs) == len(set(pairs)), "an id is listed twice for one repository"
