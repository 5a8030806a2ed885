"""Golden files: every examples/<scenario>/ is re-rendered from its command.txt and must match byte for byte.

Regenerate after an intended change with `UPDATE_GOLDENS=1 pytest tests/test_examples.py`, then review the diff.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from .conftest import ROOT, invoke

EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if (p / "command.txt").exists())


def test_at_least_four_examples() -> None:
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_is_reproduced(example: Path, tmp_path: Path) -> None:
    argv = shlex.split((example / "command.txt").read_text())
    assert argv[0] == "vllm-plan"
    out = tmp_path / "out"
    invoke([*argv[1:], "-o", str(out)])
    produced = {p.name: p.read_text() for p in out.iterdir()}
    committed = {p.name: p.read_text() for p in example.iterdir() if p.name != "command.txt"}
    if os.environ.get("UPDATE_GOLDENS"):
        for name in committed.keys() - produced.keys():
            (example / name).unlink()
        for name, text in produced.items():
            (example / name).write_text(text)
        return
    assert sorted(produced) == sorted(committed)
    for name, text in produced.items():
        assert text == committed[name], f"{example.name}/{name} differs from the committed golden file"
