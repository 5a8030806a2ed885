"""What the fidelity harness reads from a record (issue #11, round 8's misses, FIELD8-FINDINGS.md): the engine a
record's command chooses with VLLM_USE_V1, and a drafter's whole --speculative-config as the collector writes it."""

from __future__ import annotations

from benchmarks.fidelity import (
    FIELD8,
    FIELD13,
    FIELD14,
    FIELD15,
    compare,
    load_records,
    record_engine_is_v1,
    record_flags,
    record_gpu,
    record_mm_limits,
    record_speculative,
    refusal,
    summarize,
    unresolved_reason,
)
from recommender.memory import spec_decode as sd

ROUND8 = {r["id"]: r for r in load_records(*FIELD8)}


def test_vllm_use_v1_in_the_command_chooses_the_engine() -> None:
    assert record_engine_is_v1({"other_flags": "VLLM_USE_V1=0 python -m vllm.entrypoints.openai.api_server"}) is False
    assert record_engine_is_v1({"other_flags": "VLLM_USE_V1=1 vllm serve m --max-model-len 4096"}) is True
    assert record_engine_is_v1({"other_flags": "vllm serve m (max_model_len=6600) with VLLM_USE_V1=0"}) is False
    # the other run of a thread, or a failure on both engines, pins no engine
    assert record_engine_is_v1({"other_flags": "the V1 run, without VLLM_USE_V1=0"}) is None
    assert record_engine_is_v1({"other_flags": "vllm serve m --enforce-eager (also with VLLM_USE_V1=0)"}) is None
    assert record_engine_is_v1({"other_flags": "VLLM_USE_V1=0 vllm serve m; then VLLM_USE_V1=1"}) is None
    # the version's own note comes first: the printed one, then the collector's estimate
    assert record_engine_is_v1({"vllm_version": "0.8.3 (V1 engine)", "other_flags": "VLLM_USE_V1=0"}) is True
    assert record_engine_is_v1({"vllm_version_estimate": "0.8.5 (V0)"}) is False
    assert record_engine_is_v1({"vllm_version_estimate": "0.8.5", "other_flags": "vllm serve m"}) is None


def test_round_eight_v0_runs_are_read_as_v0() -> None:
    """N007 and N023 are the V0 runs (VLLM_USE_V1=0) of the V1 failures N006 and N022."""
    assert [record_engine_is_v1(ROUND8[i]) for i in ("N006", "N007", "N022", "N023")] == [None, False, None, False]


def test_the_collectors_speculative_config_is_read_whole() -> None:
    n024 = sd.parse_speculative_config(record_speculative(ROUND8["N024"]))
    assert n024 == sd.SpeculativeConfig("dflash", 5, "~/.cache/huggingface/qwen3.6-27b-dflash")
    n020 = sd.parse_speculative_config(record_speculative(ROUND8["N020"]))
    assert n020 == sd.SpeculativeConfig("mtp", 3)
    # the command's JSON (true/null are not Python literals) and a dict the collector cut short
    flags = 'speculative_config {"method": "mtp", "num_speculative_tokens": 2, "disable_padded_drafter_batch": true}'
    assert sd.parse_speculative_config(record_speculative({"other_flags": flags})) == sd.SpeculativeConfig("mtp", 2)
    cut = "speculative_config {'method': 'mtp', ...}, num_speculative_tokens 3"
    assert sd.parse_speculative_config(record_speculative({"other_flags": cut})) == sd.SpeculativeConfig("mtp", 3)


def test_a_pipeline_records_figures_are_compared_with_the_stage_that_printed_them() -> None:
    """field13 T006 (DeepSeek-V2.5, TP 8 x PP 2, V0 0.8.3) quotes the driver's lines (rank 0, first stage): its
    weights are set against stage 0's (29 MoE layers and the dense first one), not the tightest stage's (30 MoE
    layers), whose blocks the engine gives every worker and the plan keeps reporting."""
    t006 = next(r for r in load_records(*FIELD13) if r["id"] == "T006")
    c = compare(t006)
    assert c is not None and len(c.explanation.stages) == 2
    first, second = c.explanation.stages
    assert c.figures_stage is first and c.explanation.stage is second  # stage 1 has fewer blocks
    assert round(c.weights_gib, 2) == round(first.weights / 2**30, 2) == 27.61  # logged 27.63
    assert second.weights > first.weights
    c_tightest = compare({k: v for k, v in t006.items() if k != "figures_stage"})
    assert c_tightest is not None and c_tightest.figures_stage is c_tightest.explanation.stage


def test_a_cut_command_json_keeps_its_method_and_a_cli_number_is_read() -> None:
    """field14 U019 (Qwen3.6-35B-A3B-FP8, TP 2 on A100 40GB): the collector cut the command's
    '{"method":"qwen3_next_mtp",...}' and wrote '--cpu-offload-gb 6' as the command passes it. The cut JSON was handed
    to the planner whole (which refused it, and the summary dropped the record); the offload was not read (weights
    17.50 GiB predicted against the 11.59 the log printed with 6.16 GiB offloaded)."""
    flags = '--cpu-offload-gb 6 --kv-cache-dtype fp8_e4m3 --speculative-config \'{"method":"qwen3_next_mtp",...}\''
    # the tokens were cut with the rest of the JSON: the drafter default
    assert sd.parse_speculative_config(record_speculative({"other_flags": flags})) == sd.SpeculativeConfig("mtp")
    assert record_flags({"other_flags": flags}).cpu_offload_gb == 6.0
    assert record_flags({"other_flags": "non-default args: {'cpu_offload_gb': 30}"}).cpu_offload_gb == 30.0
    assert record_flags({"other_flags": "--cpu_offload_gb=2.5"}).cpu_offload_gb == 2.5
    # a whole JSON is read as before, and a null one is no drafter
    whole = '--speculative-config \'{"method": "ngram", "num_speculative_tokens": 4}\''
    assert sd.parse_speculative_config(record_speculative({"other_flags": whole})) == sd.SpeculativeConfig("ngram", 4)
    assert record_speculative({"other_flags": "--speculative-config null"}) is None


def test_a_record_the_planner_refuses_is_counted_not_dropped() -> None:
    """A record that resolves offline but whose flags the planner refuses is listed as refused, with the planner's
    one line, instead of vanishing from both the compared and the unresolved counts."""
    u014 = next(r for r in load_records(*FIELD14) if r["id"] == "U014")
    bad = {**u014, "id": "X1", "other_flags": '--speculative-config \'{"method": "no-such-method"}\''}
    assert compare(bad) is None and unresolved_reason(bad) is None
    why = refusal(bad)
    assert why is not None and "no-such-method" in why
    s = summarize([u014, bad], [c for c in (compare(u014),) if c is not None])
    assert s.refused == ["X1"] and len(s.compared) == 1
    assert refusal(u014) is None  # compared records are not refused


def test_a_mib_total_written_with_the_name_picks_the_variant() -> None:
    """field15 W019 names its card as nvidia-smi reports it, 'NVIDIA GeForce RTX 5060 Ti (16,311 MiB)': the name alone
    is shared by the 8 and 16 GB cards, and the MiB total (nvidia-smi's memory.total, here with a thousands
    separator) is the hint resolve_gpu takes to pick one; a remark that is not a size still resolves nothing."""
    w019 = next(r for r in load_records(*FIELD15) if r["id"] == "W019")
    card = record_gpu(w019)
    assert card is not None and card.key == "rtx5060ti-16gb"
    assert card.smi_total_mib == 16311
    assert record_gpu({"gpu": "NVIDIA GeForce RTX 5060 Ti (8,000 MiB)"}).key == "rtx5060ti-8gb"  # type: ignore[union-attr]
    assert record_gpu({"gpu": "NVIDIA GeForce RTX 5060 Ti (a desktop card)"}) is None


def test_the_multimodal_limits_a_launch_sets_are_read_in_every_form() -> None:
    """field15 W016 serves Qwen3.5-9B with --limit-mm-per-prompt '{"image":0,"video":0}' ('turns off the unused vision
    tower so it reserves no memory'): vLLM then loads no tower (memory/engine.py skips_tower), which the harness must
    pass on. The older key=value form and the logged non-default args' dict read the same; the engine config's
    `limit_mm_per_prompt=None` is no limit."""
    w016 = next(r for r in load_records(*FIELD15) if r["id"] == "W016")
    assert record_mm_limits(w016) == '{"image":0,"video":0}'
    assert record_flags(w016).limit_mm_per_prompt == '{"image":0,"video":0}'
    assert record_mm_limits({"other_flags": "--limit-mm-per-prompt image=4,video=0; KV cache dtype auto"}) == (
        "image=4,video=0"
    )
    dict_form = {"other_flags": "non-default args: {'limit_mm_per_prompt': {'image': 1, 'video': 0}, 'seed': 0}"}
    assert record_mm_limits(dict_form) == '{"image": 1, "video": 0}'
    assert record_mm_limits({"other_flags": "mm_processor_kwargs=None, limit_mm_per_prompt=None, seed=0"}) is None


def test_the_desktop_rtx_3050_6gb_is_its_own_card() -> None:
    """field15 W009 names 'NVIDIA GeForce RTX 3050 (6GB)': the 2024 desktop card (GA107, 96-bit GDDR6), catalogued as
    profiles/gpus/rtx3050-6gb.yaml, not the 8 GB desktop card nor the 6 GB laptop part."""
    w009 = next(r for r in load_records(*FIELD15) if r["id"] == "W009")
    card = record_gpu(w009)
    assert card is not None and card.key == "rtx3050-6gb"
    assert record_gpu({"gpu": "NVIDIA GeForce RTX 3050"}).key == "rtx3050"  # type: ignore[union-attr]
    assert record_gpu({"gpu": "NVIDIA GeForce RTX 3050 6GB Laptop GPU"}).key == "rtx3050-6gb-laptop"  # type: ignore[union-attr]


def test_the_scheduler_line_gives_the_batched_tokens_a_record_leaves_unset() -> None:
    """field16 X020 ran llava-v1.6-mistral-7b through the LLM class, whose default on a 16 GB card is 8,192 batched
    tokens where `vllm serve` takes 2,048; its log quotes "Chunked prefill is enabled with max_num_batched_tokens=8192"
    and the record leaves the flag unset, so the harness takes the scheduler's figure. A record's own value wins."""
    from benchmarks.fidelity import FIELD16, record_batched_tokens

    x020 = next(r for r in load_records(*FIELD16) if r["id"] == "X020")
    assert x020["max_num_batched_tokens"] is None and record_batched_tokens(x020) == 8192
    assert record_batched_tokens({"max_num_batched_tokens": 4096, "raw": "max_num_batched_tokens=8192"}) == 4096
    assert record_batched_tokens({"raw": "Model loading took 2 GiB"}) is None
