"""A seeded, bounded fuzz run over every input the tool reads (benchmarks/fuzz.py makes and judges the cases):
config.json files, every command's options, plan documents, manifests (Kubernetes, compose, Helm values, systemd,
scripts: the examples and the real deployment corpus) and project files, in-process through click's CliRunner and
a handful as real processes. Any exit 70 or undocumented exit code, traceback, hang, error of more than one line,
or file left behind by a failed write fails the test, with a command that reproduces the case.

`python benchmarks/fuzz.py --seed S --count 5000` runs the long version with any seed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import fuzz

SEED = 20261130
COUNT = 240  # 24 of each kind, a few seconds
PROCESS_KINDS = ("config", "plan", "manifest", "project")  # one file of each as a real `python -m recommender`
TIMEOUT = 20.0  # seconds before a case counts as a hang


@pytest.fixture(scope="module")
def material() -> fuzz.Material:
    return fuzz.load_material()


def _failures(cases: list[fuzz.Case], tmp_path: Path, run: fuzz.Runner) -> list[str]:
    failures = []
    for i, case in enumerate(cases):
        work = tmp_path / f"case{i}"
        work.mkdir()
        problems = fuzz.judge(run(case, work, TIMEOUT), TIMEOUT)
        failures += [f"{case.label[:120]}\n    {case.reproduce()[:240]}\n    -> {p[:300]}" for p in problems]
    return failures


def test_the_generator_is_seeded_and_covers_every_kind(material: fuzz.Material) -> None:
    first, again = fuzz.generate(SEED, 24, material=material), fuzz.generate(SEED, 24, material=material)
    assert [(c.args, c.files, c.env) for c in first] == [(c.args, c.files, c.env) for c in again]
    assert {c.kind for c in first} == set(fuzz.KINDS)
    other = fuzz.generate(SEED + 1, 24, material=material)
    assert [c.args for c in other] != [c.args for c in first]
    assert len(material.manifests) >= 40 and len(material.plans) >= 4 and len(material.configs) >= 20


def test_the_judge_catches_each_failure() -> None:
    ok = fuzz.Outcome(2, "", "Error: bad value\n", 0.1, [])
    assert fuzz.judge(ok, TIMEOUT) == []
    assert fuzz.judge(fuzz.Outcome(0, "out", "note: a note\nnote: another\n", 0.1, []), TIMEOUT) == []
    bad = {
        "exit 70": fuzz.Outcome(70, "", "Error: internal error (ValueError: x)\n", 0.1, []),
        "killed by a signal": fuzz.Outcome(-11, "", "", 0.1, []),
        "hang": fuzz.Outcome(None, "", "", TIMEOUT, []),
        "traceback": fuzz.Outcome(2, "", "Traceback (most recent call last):\n  x\nError: y\n", 0.1, []),
        "2-line": fuzz.Outcome(2, "", "Usage: vllm-plan x\nError: y\n", 0.1, []),
        "partial": fuzz.Outcome(2, "", "Error: disk full\n", 0.1, ["serve.sh"]),
    }
    for what, outcome in bad.items():
        problems = fuzz.judge(outcome, TIMEOUT)
        assert problems, what
    assert "hang" in fuzz.judge(bad["hang"], TIMEOUT)[0]
    assert "partial write" in fuzz.judge(bad["partial"], TIMEOUT)[0]


def test_no_hostile_input_crashes_hangs_or_spills(material: fuzz.Material, tmp_path: Path) -> None:
    cases = fuzz.generate(SEED, COUNT, material=material)
    failures = _failures(cases, tmp_path, fuzz.run_in_process)
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:20])


@pytest.mark.slow
def test_real_processes_answer_in_one_line(material: fuzz.Material, tmp_path: Path) -> None:
    cases = fuzz.generate(SEED + 7, 60, material=material)
    picked = {c.kind: c for c in cases if c.kind in PROCESS_KINDS and fuzz.runnable_as_process(c)}
    assert len(picked) == len(PROCESS_KINDS)
    failures = _failures(list(picked.values()), tmp_path, fuzz.run_process)
    assert not failures, "\n".join(failures)
