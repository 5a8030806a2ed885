"""The field-log record sets read from public startup logs (benchmarks/data/calibration/vllm_startup_logs_field11.jsonl,
R001-R020, split held-out-11): every record quotes what it was read from, comes from a source no other set used, says
whether vLLM started and names its card (or the device total its log printed) and its release. The figures each
record's `raw` excerpt prints are checked against the record by tests/test_startup_log.py; the blind measurement of
the set is benchmarks/data/calibration/FIELD11-FINDINGS.md."""

from __future__ import annotations

import re

import pytest

from benchmarks.fidelity import FIELD11, RECORD_SETS, load_records, main

HELD_OUT_11 = load_records(*FIELD11)


def _source_key(source: str) -> str:
    """A source's identity: the read_file id when the index did not resolve its repository, else its address."""
    found = re.search(r"read_file id (\d+)", source)
    return found.group(1) if found else source.split(" ")[0]


def test_held_out_11_sources_are_new_and_quoted() -> None:
    earlier = {
        _source_key(r["source"])
        for name, files in RECORD_SETS.items()
        if name != "field11"
        for r in load_records(*files)
    }
    ids = [r["id"] for r in HELD_OUT_11]
    assert ids == [f"R{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    for r in HELD_OUT_11:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier, r["id"]
        assert r["split"] == "held-out-11" and r["raw"] and r["source_type"], r["id"]


def test_held_out_11_records_say_whether_vllm_started_and_on_what() -> None:
    # a failure names what failed; a start quotes at least one figure vLLM prints about its memory
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_11:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_11} == {"ok", "failed"}


def test_held_out_11_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field11", "--split", "held-out-11", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_11)};" in capsys.readouterr().out
