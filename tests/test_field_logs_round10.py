"""Round 10 of the field logs (benchmarks/data/calibration/vllm_startup_logs_field10.jsonl, Q001-Q019): startup
records read from notes, reports and guides committed to GitHub (found by their log lines in the code index, so most
sources are cited by the index's read_file id), landed before any prediction was run on them and measured blind
(benchmarks/data/calibration/FIELD10-FINDINGS.md). These tests hold the set to the rules every round follows: new
sources only, one split, every record quoting what it was read from, naming its card and saying whether vLLM started;
the figures its `raw` excerpt prints are checked against the record by tests/test_startup_log.py."""

from __future__ import annotations

import re

import pytest

from benchmarks.fidelity import FIELD10, RECORD_SETS, load_records, main

ROUND10 = load_records(*FIELD10)


def _source_key(source: str) -> str:
    """A source's identity: the read_file id when the index did not resolve its repository, else its address."""
    found = re.search(r"read_file id (\d+)", source)
    return found.group(1) if found else source


def test_round_ten_is_new_material() -> None:
    earlier = {
        _source_key(r["source"])
        for name, files in RECORD_SETS.items()
        if name != "field10"
        for r in load_records(*files)
    }
    ids = [r["id"] for r in ROUND10]
    assert ids == [f"Q{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 15
    for r in ROUND10:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier, r["id"]
        assert r["split"] == "held-out-10" and r["raw"] and r["source_type"], r["id"]


def test_round_ten_records_say_whether_vllm_started_and_on_what() -> None:
    # a failure names what failed; a start quotes at least one figure vLLM prints about its memory
    for r in ROUND10:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]  # the card, or the total its log printed
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in ROUND10} == {"ok", "failed"}


def test_round_ten_split_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse refuses a split outside its choices (exit 2); round 9's and round 10's must be accepted
    assert main(["--records", "field10", "--split", "held-out-10", "--quiet"]) == 0
    assert "records: 19;" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--records", "field10", "--split", "held-out-0", "--quiet"])
