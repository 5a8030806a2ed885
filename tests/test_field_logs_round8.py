"""Round 8 of the field logs (benchmarks/data/calibration/vllm_startup_logs_field8.jsonl, N001-N025): startup records
read from vLLM issue threads, projects that run vLLM and one annotated blog log, landed before any prediction was run
on them and measured blind (benchmarks/data/calibration/FIELD8-FINDINGS.md). These tests hold the set to the rules
every round follows: new sources only, one split, every record quoting what it was read from and saying whether vLLM
started; the figures its `raw` excerpt prints are checked against the record by tests/test_startup_log.py."""

from __future__ import annotations

import re

from benchmarks.fidelity import FIELD8, RECORD_SETS, load_records

ROUND8 = load_records(*FIELD8)


def test_round_eight_is_new_material() -> None:
    earlier = {r["source"] for name, files in RECORD_SETS.items() if name != "field8" for r in load_records(*files)}
    ids = [r["id"] for r in ROUND8]
    assert ids == [f"N{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    for r in ROUND8:
        assert r["source"].startswith("https://") and r["source"] not in earlier, r["id"]
        assert r["split"] == "held-out-8" and r["raw"] and r["source_type"], r["id"]


def test_round_eight_records_say_whether_vllm_started() -> None:
    # a failure names what failed (the error text, or the reporter's words when the excerpt has no error line)
    for r in ROUND8:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
    assert {r["status"].split()[0] for r in ROUND8} == {"ok", "failed"}
