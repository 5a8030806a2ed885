"""The field-log record sets read from public startup logs (benchmarks/data/calibration/vllm_startup_logs_fieldN.jsonl)
hold to the rules every round follows: every record quotes what it was read from, comes from a source no other set
used, belongs to its round's one split, says whether vLLM started and (from round 9) names its card (or the device
total its log printed) and its release. The sets: round 8 (N001-N025, held-out-8: vLLM issue threads, projects that
run vLLM, one annotated blog log), round 9 (P001-P015, held-out-9: logs committed to GitHub and issue threads),
round 10 (Q001-Q019, held-out-10: notes, reports and guides committed to GitHub, most cited by the code index's
read_file id), round 11 (R001-R020, held-out-11), round 12 (S001-S020, held-out-12), round 13 (T001-T020, held-out-13),
round 14 (U001-U020, held-out-14), round 15 (W001-W020, held-out-15), round 16 (X001-X021, held-out-16),
round 17 (Y001-Y020, held-out-17), round 18 (Z001-Z021, held-out-18).
The figures each record's `raw`
excerpt prints are checked against the record by tests/test_startup_log.py; each set's blind measurement is benchmarks/data/calibration/FIELDN-FINDINGS.md."""

from __future__ import annotations

import re

import pytest

from benchmarks.fidelity import (
    FIELD8,
    FIELD9,
    FIELD10,
    FIELD11,
    FIELD12,
    FIELD13,
    FIELD14,
    FIELD15,
    FIELD16,
    FIELD17,
    FIELD18,
    RECORD_SETS,
    load_records,
    main,
)

HELD_OUT_11 = load_records(*FIELD11)
HELD_OUT_12 = load_records(*FIELD12)
HELD_OUT_13 = load_records(*FIELD13)
HELD_OUT_14 = load_records(*FIELD14)
HELD_OUT_15 = load_records(*FIELD15)
HELD_OUT_16 = load_records(*FIELD16)


def _source_key(source: str) -> str:
    """A source's identity: the read_file id when the index did not resolve its repository, else its address."""
    found = re.search(r"read_file id (\d+)", source)
    return found.group(1) if found else source.split(" ")[0]


def test_held_out_11_sources_are_new_and_quoted() -> None:
    earlier = {
        _source_key(r["source"])
        for name, files in RECORD_SETS.items()
        if name not in ("field11", "field12", "field13")
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


ROUND10 = load_records(*FIELD10)


def _address_or_id(source: str) -> str:
    """A source's identity: the read_file id when the index did not resolve its repository, else its address."""
    found = re.search(r"read_file id (\d+)", source)
    return found.group(1) if found else source


def test_round_ten_is_new_material() -> None:
    earlier = {
        _address_or_id(r["source"])
        for name, files in RECORD_SETS.items()
        if name != "field10"
        for r in load_records(*files)
    }
    ids = [r["id"] for r in ROUND10]
    assert ids == [f"Q{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 15
    for r in ROUND10:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _address_or_id(r["source"]) not in earlier, r["id"]
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


def test_held_out_12_sources_are_new_and_quoted() -> None:
    # round 12 (benchmarks/data/calibration/vllm_startup_logs_field12.jsonl, S001-S020): no source any other set used
    earlier = {
        _source_key(r["source"])
        for name, files in RECORD_SETS.items()
        if name not in ("field12", "field13")
        for r in load_records(*files)
    }
    ids = [r["id"] for r in HELD_OUT_12]
    assert ids == [f"S{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    for r in HELD_OUT_12:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier, r["id"]
        assert r["split"] == "held-out-12" and r["raw"] and r["source_type"], r["id"]


def test_held_out_12_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_12:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_12} == {"ok", "failed"}


def test_held_out_12_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field12", "--split", "held-out-12", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_12)};" in capsys.readouterr().out


def test_held_out_13_sources_are_new_and_quoted() -> None:
    # round 13 (benchmarks/data/calibration/vllm_startup_logs_field13.jsonl, T001-T020): no source any other set used,
    # and no two records of the round share one (each is a different log)
    earlier = {
        _source_key(r["source"])
        for name, files in RECORD_SETS.items()
        if name not in ("field13", "field14")
        for r in load_records(*files)
    }
    ids = [r["id"] for r in HELD_OUT_13]
    assert ids == [f"T{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    keys = [_source_key(r["source"]) for r in HELD_OUT_13]
    assert len(set(keys)) == len(keys)
    for r in HELD_OUT_13:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier, r["id"]
        assert r["split"] == "held-out-13" and r["raw"] and r["source_type"], r["id"]


def test_held_out_13_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_13:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_13} == {"ok", "failed"}


def test_held_out_13_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field13", "--split", "held-out-13", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_13)};" in capsys.readouterr().out


def test_held_out_14_sources_are_new_and_quoted() -> None:
    # round 14 (benchmarks/data/calibration/vllm_startup_logs_field14.jsonl, U001-U020): no source any other set used,
    # no two records of the round share one, and none repeats the (available KV, tokens) pair of an earlier record
    earlier = [r for name, files in RECORD_SETS.items() if name != "field14" for r in load_records(*files)]
    earlier_keys = {_source_key(r["source"]) for r in earlier}
    ids = [r["id"] for r in HELD_OUT_14]
    assert ids == [f"U{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    keys = [_source_key(r["source"]) for r in HELD_OUT_14]
    assert len(set(keys)) == len(keys)
    for r in HELD_OUT_14:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier_keys, r["id"]
        assert r["split"] == "held-out-14" and r["raw"] and r["source_type"], r["id"]
    # the same log copied into another repository would carry the same figures: no (KV GiB, tokens) pair repeats
    pairs = {(r["kv_available_gib"], r["kv_cache_tokens"]) for r in earlier if r.get("kv_cache_tokens")}
    for r in HELD_OUT_14:
        if r.get("kv_cache_tokens"):
            assert (r["kv_available_gib"], r["kv_cache_tokens"]) not in pairs, r["id"]


def test_held_out_14_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_14:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_14} == {"ok", "failed"}


def test_held_out_14_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field14", "--split", "held-out-14", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_14)};" in capsys.readouterr().out


def test_held_out_15_sources_are_new_and_quoted() -> None:
    # round 15 (benchmarks/data/calibration/vllm_startup_logs_field15.jsonl, W001-W020): no source any other set used,
    # no two records of the round share one, and none repeats an earlier record's token count (the same log copied
    # under another address: two round-15 candidates were dropped for this, see FIELD15-FINDINGS.md)
    earlier = [r for name, files in RECORD_SETS.items() if name != "field15" for r in load_records(*files)]
    earlier_keys = {_source_key(r["source"]) for r in earlier}
    ids = [r["id"] for r in HELD_OUT_15]
    assert ids == [f"W{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    keys = [_source_key(r["source"]) for r in HELD_OUT_15]
    assert len(set(keys)) == len(keys)
    for r in HELD_OUT_15:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier_keys, r["id"]
        assert r["split"] == "held-out-15" and r["raw"] and r["source_type"], r["id"]
    tokens = {r["kv_cache_tokens"] for r in earlier if r.get("kv_cache_tokens")}
    for r in HELD_OUT_15:
        assert not r.get("kv_cache_tokens") or r["kv_cache_tokens"] not in tokens, r["id"]


def test_held_out_15_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_15:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_15} == {"ok", "failed"}


def test_held_out_15_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field15", "--split", "held-out-15", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_15)};" in capsys.readouterr().out


def test_held_out_16_sources_are_new_and_quoted() -> None:
    # round 16 (benchmarks/data/calibration/vllm_startup_logs_field16.jsonl, X001-X020): no source any other set used,
    # no two records of the round share one, and none repeats an earlier record's token count
    earlier = [r for name, files in RECORD_SETS.items() if name != "field16" for r in load_records(*files)]
    earlier_keys = {_source_key(r["source"]) for r in earlier}
    ids = [r["id"] for r in HELD_OUT_16]
    assert ids == [f"X{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    keys = [_source_key(r["source"]) for r in HELD_OUT_16]
    assert len(set(keys)) == len(keys)
    for r in HELD_OUT_16:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier_keys, r["id"]
        assert r["split"] == "held-out-16" and r["raw"] and r["source_type"], r["id"]
    tokens = {r["kv_cache_tokens"] for r in earlier if r.get("kv_cache_tokens")}
    for r in HELD_OUT_16:
        assert not r.get("kv_cache_tokens") or r["kv_cache_tokens"] not in tokens, r["id"]


def test_held_out_16_records_say_whether_vllm_started_and_on_what() -> None:
    # round 16 keeps logs whose card the source does not name (WSL2 boots, a laptop, an issue's "24 GB GPU"): their
    # `gpu` is null and their notes say the card is not named and what the figures imply, so they count as unresolved
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_16:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"] or re.search(r"card is not named|names no card", r["notes"]), r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_16} == {"ok", "failed"}


def test_held_out_16_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field16", "--split", "held-out-16", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_16)};" in capsys.readouterr().out


HELD_OUT_17 = load_records(*FIELD17)


def test_held_out_17_sources_are_new_and_quoted() -> None:
    # round 17 (benchmarks/data/calibration/vllm_startup_logs_field17.jsonl, Y001-Y020): no source any other set used and
    # no token count an earlier record holds; a source may give several boots (each its own configuration), but no two
    # records of the round repeat one boot (same source, utilisation, context and sequences)
    earlier = [r for name, files in RECORD_SETS.items() if name != "field17" for r in load_records(*files)]
    earlier_keys = {_source_key(r["source"]) for r in earlier}
    ids = [r["id"] for r in HELD_OUT_17]
    assert ids == [f"Y{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    boots = [
        (_source_key(r["source"]), r["gpu_memory_utilization"], r["max_model_len"], r["max_num_seqs"], r["tp"])
        for r in HELD_OUT_17
    ]
    assert len(set(boots)) == len(boots)
    for r in HELD_OUT_17:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier_keys, r["id"]
        assert r["split"] == "held-out-17" and r["raw"] and r["source_type"], r["id"]
    tokens = {r["kv_cache_tokens"] for r in earlier if r.get("kv_cache_tokens")}
    for r in HELD_OUT_17:
        assert not r.get("kv_cache_tokens") or r["kv_cache_tokens"] not in tokens, r["id"]


def test_held_out_17_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_17:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"], r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_17} == {"ok", "failed"}


HELD_OUT_18 = load_records(*FIELD18)


def test_held_out_18_sources_are_new_and_quoted() -> None:
    # round 18 (benchmarks/data/calibration/vllm_startup_logs_field18.jsonl, Z001-Z021): no source any other set used and
    # no token count an earlier record holds; a source may give several boots (Z005-Z008, Z010-Z011, Z012-Z013,
    # Z020-Z021), each its own configuration (model, utilisation, context, batched tokens)
    earlier = [r for name, files in RECORD_SETS.items() if name != "field18" for r in load_records(*files)]
    earlier_keys = {_source_key(r["source"]) for r in earlier}
    ids = [r["id"] for r in HELD_OUT_18]
    assert ids == [f"Z{i:03d}" for i in range(1, len(ids) + 1)] and len(ids) >= 20
    boots = [
        (
            _source_key(r["source"]),
            r["model"],
            r["gpu_memory_utilization"],
            r["max_model_len"],
            r["max_num_batched_tokens"],
        )
        for r in HELD_OUT_18
    ]
    assert len(set(boots)) == len(boots)
    for r in HELD_OUT_18:
        assert r["source"].startswith(("https://github.com/", "GitHub-hosted ")), r["id"]
        assert _source_key(r["source"]) not in earlier_keys, r["id"]
        assert r["split"] == "held-out-18" and r["raw"] and r["source_type"], r["id"]
    tokens = {r["kv_cache_tokens"] for r in earlier if r.get("kv_cache_tokens")}
    for r in HELD_OUT_18:
        assert not r.get("kv_cache_tokens") or r["kv_cache_tokens"] not in tokens, r["id"]


def test_held_out_18_records_say_whether_vllm_started_and_on_what() -> None:
    figures = ("weights_gib", "kv_available_gib", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
    for r in HELD_OUT_18:
        assert re.match(r"(ok|failed)\b", r["status"]), r["id"]
        assert r["status"].startswith("ok") or r["error"], r["id"]
        assert r["status"].startswith("failed") or any(r[f] is not None for f in figures), r["id"]
        assert r["gpu"] or r["gpu_total_gib"] or re.search(r"card is not named", r["notes"]), r["id"]
        assert r["vllm_version"] or r["vllm_version_estimate"], r["id"]
    assert {r["status"].split()[0] for r in HELD_OUT_18} == {"ok", "failed"}


def test_held_out_18_is_selectable_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "field18", "--split", "held-out-18", "--quiet"]) == 0
    assert f"records: {len(HELD_OUT_18)};" in capsys.readouterr().out
