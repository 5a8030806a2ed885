"""Round 9 of the field logs (benchmarks/data/calibration/vllm_startup_logs_field9.jsonl, P001-P015): startup records
read from logs committed to GitHub (learning paths, tutorials, benchmark notes) and from issue threads, landed before
any prediction was run on them and measured blind (benchmarks/data/calibration/FIELD9-FINDINGS.md). These tests hold
the set to the rules every round follows: new sources only, one split, every record quoting what it was read from,
naming its card and saying whether vLLM started; the figures its `raw` excerpt prints are checked against the record
by tests/test_startup_log.py."""

from __future__ import annotations

import re

from benchmarks.fidelity import FIELD9, RECORD_SETS, load_records

ROUND9 = load_records(*FIELD9)


def test_round_nine_is_new_material() -> None:
    earlier = {r["source"] for name, files in RECORD_SETS.items() if name != "field9" for r in load_records(*files)}
    ids = [r["id"] for r in ROUND9]
    assert ids == [f"P{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 15
    for r in ROUND9:
        assert r["source"].startswith("https://github.com/") and r["source"] not in earlier, r["id"]
        assert r["split"] == "held-out-9" and r["raw"] and r["source_type"], r["id"]


def test_round_nine_records_say_whether_vllm_started_and_on_what() -> None:
    # a failure names what failed; a start quotes at least one figure vLLM prints about its memory
    for r in ROUND9:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]  # the card, or the total its log printed
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in ROUND9} == {"ok", "failed"}
