"""The published serving points (benchmarks/data/perf/) as the fit and the fidelity report read them."""

from __future__ import annotations

import pytest

from benchmarks.perf_points import (
    FIELD,
    HELDOUT_2,
    HELDOUT_3,
    HELDOUT_4,
    HELDOUT_5,
    HELDOUT_6,
    HELDOUT_7,
    HELDOUT_8,
    HELDOUT_9,
    HELDOUT_10,
    HELDOUT_11,
    HELDOUT_12,
    HELDOUT_13,
    HELDOUT_14,
    HELDOUT_15,
    HOLDOUT_GROUPS,
    Point,
    _random_lengths,
    points,
)
from recommender.units import GiB


def _by_id() -> dict[str, object]:
    return {p.id: p for p in points()}


def test_every_row_is_read_with_its_source_and_a_use() -> None:
    pts = points()
    assert len(pts) == 212  # 208 shared rows + 4 added (benchmarks/data/perf/added_points.jsonl)
    for p in pts:
        assert p.source.startswith("https://"), p.id
        assert p.use in ("fit", "holdout", "excluded"), p.id
        if p.use == "excluded":
            assert p.reason, p.id
        else:
            assert p.measured and p.catalog_model, p.id


def test_fit_and_held_out_combinations_never_overlap() -> None:
    fit = {p.group for p in points() if p.use == "fit"}
    held = {p.group for p in points() if p.use == "holdout"}
    assert not fit & held
    assert held <= set(HOLDOUT_GROUPS)
    assert len(fit) >= 8 and len(held) >= 4


def test_rows_are_read_as_their_sources_state() -> None:
    by = _by_id()
    # sariekr/gpu_conc P005: nominal 64 users, but 0.2250 req/s x 4,158 ms latency ~ 25 in flight (Little's law)
    p005 = by["P005"]
    assert p005.load.max_concurrency == 25  # type: ignore[attr-defined]
    assert p005.load.input_len == pytest.approx(1000 * 1.33)  # type: ignore[attr-defined]
    # gpustack: `vllm serve Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 -tp 8 --enable-expert-parallel`
    p240 = by["P240"].flags  # type: ignore[attr-defined]
    assert (p240.tensor_parallel_size, p240.enable_expert_parallel) == (8, True)
    assert by["P152"].flags.gpu_memory_utilization == 0.85  # type: ignore[attr-defined]
    assert by["P162"].flags.max_num_batched_tokens == 4096  # type: ignore[attr-defined]
    # dennislee22 Test 4: "KV 5.01 GiB" is the logged cache size; TTFT is not used (cached prompts)
    p075 = by["P075"]
    assert p075.flags.kv_cache_memory_bytes == int(5.01 * GiB)  # type: ignore[attr-defined]
    assert set(p075.measured) == {"tpot", "throughput"}  # type: ignore[attr-defined]
    # lengths from the printed totals: 215,312 input tokens over 1,000 requests
    assert by["P159"].load.input_len == pytest.approx(215.312)  # type: ignore[attr-defined]
    assert by["P159"].load.dataset == "sharegpt"  # type: ignore[attr-defined]
    assert by["P168"].load.max_concurrency == 4  # type: ignore[attr-defined]
    # vllm#44214: Qwen3.5-122B-A10B on 8 x B200, 500 prompts of 1,024 / 512 at once, main of 2026-07-16 (read as 0.24)
    a004 = by["A004"]
    assert (a004.use, a004.flags.tensor_parallel_size, a004.flags.max_model_len) == ("fit", 8, 32768)  # type: ignore[attr-defined]
    assert (a004.load.num_prompts, a004.load.max_concurrency, a004.load.output_len) == (500, None, 512)  # type: ignore[attr-defined]
    assert str(a004.version) == "0.24.0"  # type: ignore[attr-defined]


def test_rows_a_source_cannot_support_are_not_used() -> None:
    by = _by_id()
    for pid in ("P040", "P062", "P111", "P138", "P143", "P268", "P274", "P017", "A003"):
        assert by[pid].use == "excluded", pid  # type: ignore[attr-defined]


def test_field_points_are_combinations_the_fit_never_sees() -> None:
    fitted_files = points()
    field = points((FIELD,))
    assert len(field) >= 20
    assert not {p.id for p in fitted_files if p.id.startswith("F")}  # the fit and its holdout never read them
    seen = {p.group for p in fitted_files}
    for p in field:
        assert p.id.startswith("F") and p.source.startswith("https://"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in seen, (p.id, p.group)
        if p.use == "field":
            assert p.measured and p.catalog_model, p.id


def test_second_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_2,))
    assert len(blind) >= 20
    fitted = {p.group for p in points()}
    earlier = {(p.source, p.load.num_prompts, p.load.max_concurrency) for p in points((FIELD,))}
    for p in blind:
        assert p.id.startswith("N") and p.source.startswith("https://"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in fitted, (p.id, p.group)
        assert (p.source, p.load.num_prompts, p.load.max_concurrency) not in earlier, p.id
    by = {p.id: p for p in blind}
    # TheBuccaneer/vllm-offload-profiles: RTX 3090, `--max-model-len 8192`, 20 prompts, 8 in flight; a warm run (the
    # server saw these seeded prompts before, prefix caching on): TPOT only. The server's first run compares all three.
    n004 = by["N004"]
    assert (n004.gpu, n004.flags.max_model_len, n004.load.num_prompts, n004.load.max_concurrency) == (
        "rtx3090",
        8192,
        20,
        8,
    )
    assert set(n004.measured) == {"tpot"}
    assert set(by["N001"].measured) == {"ttft", "tpot", "throughput"}
    # two A100 PCIe without NVLink, TP=2: throughput only
    assert (by["N020"].gpu, by["N020"].flags.tensor_parallel_size, set(by["N020"].measured)) == (
        "a100-80gb-pcie",
        2,
        {"throughput"},
    )


def test_third_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_3,))
    assert len(blind) >= 8
    fitted = {p.group for p in points()}
    earlier = {(p.source, p.load.num_prompts, p.load.max_concurrency) for p in points((FIELD, HELDOUT_2))}
    for p in blind:
        assert p.id.startswith("S") and p.source.startswith("https://"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in fitted, (p.id, p.group)
        assert (p.source, p.load.num_prompts, p.load.max_concurrency) not in earlier, p.id
    by = {p.id: p for p in blind}
    # recipes' Kimi-K2.5 guide prints per-GPU throughput of a TP4 + EP4 engine: 113.75 tok/s/GPU x 4
    s005 = by["S005"]
    assert (s005.flags.tensor_parallel_size, s005.load.max_concurrency, s005.measured["throughput"]) == (4, 4, 455.0)
    # InferenceX's --random-range-ratio 0.8 draws lengths uniformly in [0.8 L, L]: +-1/9 around the mean
    assert s005.load.jitter == pytest.approx(0.2 / 1.8) and s005.load.max_output is None
    # Qwen2.5-VL-7B behind four data-parallel engines, 128 prompts of ~8,000 tokens at once
    s007 = by["S007"]
    assert (s007.flags.data_parallel_size, s007.load.num_prompts, s007.load.max_concurrency) == (4, 128, None)


def test_fourth_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_4,))
    assert len(blind) >= 45
    fitted = {p.group for p in points()}
    earlier = points((FIELD, HELDOUT_2, HELDOUT_3))
    seen_loads = {(p.source, p.load.num_prompts, p.load.max_concurrency) for p in earlier}
    for p in blind:
        assert p.id.startswith("T") and p.source.startswith("https://"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in fitted, (p.id, p.group)
        assert (p.source, p.load.num_prompts, p.load.max_concurrency) not in seen_loads, p.id
    by = {p.id: p for p in blind}
    # KubeAI's L4 entry: the model's args in the chart, 1,000 ShareGPT prompts at once
    t001 = by["T001"]
    assert (t001.gpu, t001.flags.max_num_seqs, t001.flags.enforce_eager, t001.flags.max_model_len) == (
        "l4",
        16,
        True,
        8192,
    )
    assert (t001.load.num_prompts, t001.load.max_concurrency, t001.load.request_rate) == (1000, None, None)
    # DeepSeek-R1 behind eight data-parallel ranks with expert parallelism, eager
    t007 = by["T007"]
    assert (t007.flags.data_parallel_size, t007.flags.enable_expert_parallel, t007.flags.enforce_eager) == (
        8,
        True,
        True,
    )
    # a Poisson rate of 60 requests/s; a closed loop of one user with the report's fixed lengths
    assert by["T003"].load.request_rate == 60.0
    t011 = by["T011"]
    assert (t011.load.max_concurrency, t011.load.input_len, t011.load.output_len) == (1, 128.0, 1024.0)
    assert "throughput" not in t011.measured
    # dstack's CSV rows: the batch limits per row, 1,000 ShareGPT prompts at 32 req/s and all at once
    t038 = by["T038"]
    assert (t038.flags.max_num_seqs, t038.flags.max_num_batched_tokens, t038.load.request_rate) == (1024, 1024, 32.0)
    assert (by["T040"].load.num_prompts, by["T040"].load.request_rate) == (1000, None)
    # one Jetson AGX Thor; the one-user rerun hits the prefix cache of the run before it, so its TTFT is not compared
    assert (by["T042"].gpu, by["T042"].load.max_concurrency) == ("jetson-thor", 8)
    assert "ttft" not in by["T043"].measured and "tpot" in by["T043"].measured


def test_random_lengths_follow_each_clients_range_ratio() -> None:
    # SGLang's bench_serving draws in [r L, L], r = 0 by default (uniform from 1 to L); vLLM's in [L (1 - r), L (1 + r)]
    sglang = {"benchmark_tool": "sglang.bench_serving", "notes": "", "raw": ""}
    assert _random_lengths(sglang, 500.0) == (0.99, None)
    assert _random_lengths({**sglang, "notes": "--random-range-ratio 0.5"}, 750.0) == (pytest.approx(1 / 3), None)
    assert _random_lengths({**sglang, "notes": "range ratio 1, --random-output-len 800"}, 797.0) == (0.0, 800.0)
    vllm = {"benchmark_tool": "vllm bench serve", "notes": "--random-range-ratio 0.2 --ignore-eos"}
    assert _random_lengths(vllm, 1024.0) == (0.2, None)
    assert _random_lengths({"benchmark_tool": "vllm bench serve", "notes": "--ignore-eos"}, 1024.0) == (0.0, None)


def test_field_rows_are_read_as_their_sources_state() -> None:
    by = {p.id: p for p in points((FIELD,))}
    # gpustack gpt-oss-120b on H100: "ShareGPT batch size 4" block, 100 prompts, "Maximum request concurrency: 4"
    f033 = by["F033"]
    assert (f033.load.max_concurrency, f033.load.num_prompts, f033.flags.tensor_parallel_size) == (4, 100, 2)
    # `vllm serve openai/gpt-oss-120b --max-model-len 32768 --async-scheduling -pp 2`
    f022 = by["F022"]
    assert (f022.flags.pipeline_parallel_size, f022.flags.max_model_len, f022.async_scheduling) == (2, 32768, True)
    # the batched-token case is the block's comment line, not the serving script's 8192
    assert by["F008"].flags.max_num_batched_tokens == 4096
    # R1-0528 is read as its catalog entry (R1's architecture); 1,000 ShareGPT prompts at once
    f039 = by["F039"]
    assert f039.catalog_model == "deepseek-ai/DeepSeek-R1-0528" and f039.load.request_rate is None
    # `--random-input 2048 --random-output 1024` without --ignore-eos: exact prompts, outputs end at 1,024 or EOS
    f070 = by["F070"]
    assert (f070.load.jitter, f070.load.max_output) == (0.0, 1024)
    # "~100 of the 128 requested tokens: no --ignore-eos": the negation is read as such
    assert (by["F066"].load.jitter, by["F066"].load.max_output) == (0.0, 128)
    # sariekr/gpu_conc's chat client (natural prompts, a 30 s ramp-up) keeps the default spread
    assert (by["F056"].load.jitter, by["F056"].load.max_output) == (0.05, None)
    assert f039.load.input_len == pytest.approx(219.2, abs=0.1)


def test_fifth_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_5,))
    assert len(blind) >= 20
    fitted = {p.group for p in points()}
    earlier = points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4))
    seen = {p.group for p in earlier}
    for p in blind:
        assert p.id.startswith("V") and p.source.startswith("https://github.com/IOG-Foundation/"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in fitted and p.group not in seen, (p.id, p.group)
    by = {p.id: p for p in blind}
    # Nemotron-70B FP8-dynamic on two H100 PCIe at 32 Poisson req/s, 200 ShareGPT prompts (the saved JSON's figures)
    v017 = by["V017"]
    assert (v017.gpu, v017.flags.tensor_parallel_size, v017.load.num_prompts) == ("h100-pcie", 2, 200)
    # output_throughput 972.81 tok/s and mean TPOT 150.63 ms in the saved result file
    assert v017.measured == pytest.approx({"ttft": v017.measured["ttft"], "tpot": 150.63, "throughput": 972.81})


def test_sixth_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_6,))
    assert len(blind) >= 15
    fitted = {p.group for p in points()}
    seen = {p.group for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5))}
    sources = {p.source.split("/blob/")[0] for p in blind}
    assert len(sources) >= 3  # several repositories, not one
    for p in blind:
        assert p.id.startswith("W"), p.id
        assert p.use in ("field", "excluded"), p.id
        assert p.group not in fitted and p.group not in seen, (p.id, p.group)
    by = {p.id: p for p in blind}
    # Gemma 4 31B on two A100s (TP2, fp8_e5m2 KV, 16,384 context), 1,000 random 1,024/256 prompts at 4 Poisson req/s:
    # the saved result-short-rate4.json of tsho/vllm-benchmark-scripts (output 656.01 tok/s, mean TPOT 113.85 ms)
    w003 = by["W003"]
    assert (w003.gpu, w003.flags.tensor_parallel_size, w003.flags.max_model_len) == ("a100-80gb", 2, 16384)
    assert (w003.load.num_prompts, w003.load.request_rate, w003.load.max_concurrency) == (1000, 4.0, None)
    assert (w003.load.input_len, w003.load.output_len, w003.load.jitter) == (1024, 256, 0.0)
    assert w003.measured == pytest.approx({"ttft": 79213.58, "tpot": 113.85, "throughput": 656.01})
    # gpustack's quantization page prints total (not output) tokens/s: only TTFT and TPOT are compared
    assert set(by["W013"].measured) == {"ttft", "tpot"}
    # W011 / W012 re-sent cached prompts: mean TTFT below the prefill FLOP floor, so TPOT only
    assert set(by["W011"].measured) == set(by["W012"].measured) == {"tpot"}
    # DeepSeek-V3.2 on 8 x H20 (the 141 GB part) at 10 Poisson req/s (vllm-project/recipes): MoE + sparse attention
    assert (by["W015"].gpu, by["W015"].flags.tensor_parallel_size, by["W015"].load.request_rate) == ("h20-3e", 8, 10.0)


def test_seventh_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_7,))
    assert len(blind) >= 11
    fitted = {p.group for p in points()}
    seen = {p.group for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5, HELDOUT_6))}
    sources = {p.source.split("/blob/")[0].split("/issues/")[0] for p in blind}
    assert len(sources) >= 4  # several repositories, not one
    for p in blind:
        assert p.id.startswith("X"), p.id
        assert p.use in ("field", "excluded"), (p.id, p.reason)
        assert p.group not in fitted and p.group not in seen, (p.id, p.group)
    by = {p.id: p for p in blind}
    # read after the blind run: QwQ-32B 'on H200' ran faster than one H200 can read its BF16 weights (TP not stated)
    assert [p.id for p in blind if p.use == "excluded"] == ["X010"]
    assert "tensor parallel size not stated" in by["X010"].reason
    # Llama-3.3-70B-Instruct TP8 on one Azure ND96asr_v4 (8 x A100 40GB), 200 ShareGPT prompts at 4 Poisson req/s:
    # the saved ..._qps_04.json of surajssd/llm-k8s (output 673.92 tok/s, mean TPOT 27.08 ms); the run re-sent the
    # seed-0 prompts of the qps-01 run to a server with prefix caching on, so its TTFT is not compared
    x002 = by["X002"]
    assert (x002.gpu, x002.flags.tensor_parallel_size, x002.flags.enable_prefix_caching) == ("a100-40gb", 8, True)
    assert (x002.load.num_prompts, x002.load.request_rate, x002.load.dataset) == (200, 4.0, "sharegpt")
    assert x002.load.input_len == pytest.approx(42659 / 200)
    assert x002.measured == pytest.approx({"tpot": 27.08, "throughput": 673.92})
    # the first run against the fresh server keeps its TTFT
    assert set(by["X001"].measured) == {"ttft", "tpot", "throughput"}
    # tenstorrent's GPU reference sweeps: TPOT only, one request at a time
    assert by["X005"].measured == pytest.approx({"tpot": 9.6})
    assert (by["X005"].load.max_concurrency, by["X005"].load.input_len, by["X005"].load.output_len) == (1, 128, 1024)
    # the issue text kept here gives output throughput only
    assert by["X010"].measured == pytest.approx({"throughput": 115.31})


def test_eighth_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_8,))
    assert len(blind) >= 18
    fitted = {p.group for p in points()}
    seen = {p.group for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5, HELDOUT_6, HELDOUT_7))}
    sources = {p.source.split("/blob/")[0].split("/issues/")[0] for p in blind}
    assert len(sources) >= 4  # several publishers, not one
    for p in blind:
        assert p.id.startswith("Y"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted and p.group not in seen, (p.id, p.group)
    by = {p.id: p for p in blind}
    # databasemart's A40 page: 50 random prompts (100 in, up to 600 out) at once; medians only, so throughput alone
    y001 = by["Y001"]
    assert (y001.gpu, y001.load.num_prompts, y001.load.request_rate, y001.load.max_output) == ("a40", 50, None, 600)
    assert y001.load.output_len == pytest.approx(22170 / 50)
    assert y001.measured == pytest.approx({"throughput": 1016.6})
    # IOG-Foundation: one server runs 32, 16, 8, 4, 1 req/s on the same ShareGPT prompts with prefix caching on,
    # so the 4 req/s run keeps TPOT and throughput only and the first (32 req/s) keeps its TTFT too
    assert by["Y007"].measured == pytest.approx({"tpot": 11.07, "throughput": 809.23})
    assert set(by["Y008"].measured) == {"ttft", "tpot", "throughput"}
    # DGX Spark (GB10), vLLM 0.26.0 as the server reported it: gpt-oss-20b, fp8 KV cache, async scheduling, 300
    # random prompts (4000 in, 500 out, range ratio 0.9) at 1.5 Poisson req/s capped at 25 in flight
    y012 = by["Y012"]
    assert (y012.gpu, str(y012.version), y012.flags.kv_cache_dtype, y012.async_scheduling) == (
        "gb10",
        "0.26.0",
        "fp8",
        True,
    )
    assert (y012.load.max_concurrency, y012.load.request_rate, y012.load.jitter) == (25, 1.5, pytest.approx(0.9))
    assert y012.load.input_len == pytest.approx(1216617 / 300)
    # the client's gamma shape is read from its command (--burstiness 0.7 on the ShareGPT runs, 1.0 on the others),
    # and vLLM 0.10+'s own client rescales its delays to span num_prompts / rate (vllm-project/vllm#21108)
    assert (by["Y011"].load.burstiness, by["Y012"].load.burstiness) == (0.7, 1.0)
    assert by["Y011"].load.rescaled_arrivals and by["Y012"].load.rescaled_arrivals
    # databasemart's benchmark_serving.py, read as vLLM 0.8: one draw after another
    assert not y001.load.rescaled_arrivals
    assert y012.measured == pytest.approx({"ttft": 903.65, "tpot": 82.56, "throughput": 283.44})
    # kvcached's vanilla-vLLM baseline on a GB10: medians of 3 seeds, gpu-memory-utilization 0.5, 14.21 req/s x 128
    assert by["Y009"].flags.gpu_memory_utilization == 0.5
    assert by["Y009"].measured == pytest.approx({"ttft": 11575, "tpot": 119.3, "throughput": 1818.9})


def test_ninth_blind_set_is_new_points_from_several_publishers() -> None:
    blind = points((HELDOUT_9,))
    assert len(blind) >= 14
    fitted = {p.group for p in points()}
    seen = {
        p.group for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5, HELDOUT_6, HELDOUT_7, HELDOUT_8))
    }
    sources = {p.source.split("/blob/")[0] for p in blind}
    assert len(sources) >= 4  # several publishers, at most five points each
    assert all(sum(p.source.startswith(s) for p in blind) <= 5 for s in sources)
    for p in blind:
        assert p.id.startswith("Z"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
    # every combination but Kimi-K2.5 on H200 (the adithyaJRunpod rows) is new to every perf file
    assert {p.group for p in blind} & seen == {("moonshotai/Kimi-K2.5", "h200")}
    by = {p.id: p for p in blind}
    # DGX Spark (GB10), vLLM 0.26.0: Nemotron-3-Nano FP8, 4000/500 random prompts (range ratio 0.9) at 1.5 Poisson
    # req/s capped at 25 in flight
    z001 = by["Z001"]
    assert (z001.gpu, str(z001.version), z001.flags.kv_cache_dtype, z001.async_scheduling) == (
        "gb10",
        "0.26.0",
        "fp8",
        True,
    )
    assert (z001.load.max_concurrency, z001.load.request_rate, z001.load.jitter) == (25, 1.5, pytest.approx(0.9))
    assert z001.load.input_len == pytest.approx(1202858 / 300)
    assert z001.measured == pytest.approx({"ttft": 1078.37, "tpot": 127.93, "throughput": 188.16})
    # RTX PRO 6000 Workstation, SGLang's client against vLLM: 1000 prompts, 512 in flight, lengths uniform in [1, L]
    z006 = by["Z006"]
    assert (z006.gpu, z006.load.max_concurrency, z006.load.request_rate, z006.load.jitter) == (
        "rtx-pro-6000-ws",
        512,
        None,
        pytest.approx(0.99),
    )
    assert z006.flags.max_model_len == 10000 and z006.flags.gpu_memory_utilization == 0.8
    # MI300X, vLLM 0.18.0: the engine's /metrics give a per-user decode speed (TPOT = 1000 / 85.97) and a mean TTFT,
    # no duration, so throughput is not compared
    assert by["Z008"].measured == pytest.approx({"ttft": 138.0, "tpot": 1000 / 85.97}, rel=1e-3)
    assert (by["Z010"].load.input_len, by["Z010"].load.max_concurrency) == (32768, 2)
    # two RTX PRO 6000 at TP2: TTFT printed to 0.1 s only, so decode speed alone
    assert by["Z011"].flags.tensor_parallel_size == 2 and set(by["Z011"].measured) == {"tpot"}
    # Kimi-K2.5 on 8 x H200: the reasoning parser hides the first token from GuideLLM, so output throughput only
    assert by["Z013"].measured == pytest.approx({"throughput": 1157.0})


def test_tenth_blind_set_is_new_points_of_combinations_nobody_fitted() -> None:
    blind = points((HELDOUT_10,))
    assert len(blind) >= 11
    fitted = {p.group for p in points()}
    seen = {
        p.group
        for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_4, HELDOUT_5, HELDOUT_6, HELDOUT_7, HELDOUT_8, HELDOUT_9))
    }
    for p in blind:
        assert p.id.startswith("Q"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted and p.group not in seen, (p.id, p.group)
    by = {p.id: p for p in blind}
    # Lambda's vLLM 0.5.4 bursts: 320 ShareGPT prompts at once; a third return no text, whose zero TTFTs the client
    # averages in, so TTFT is not compared; the mean lengths are the file's token totals over 320
    q001 = by["Q001"]
    assert (q001.gpu, str(q001.version), q001.load.max_concurrency, q001.load.request_rate) == (
        "h100-sxm",
        "0.5.4",
        None,
        None,
    )
    assert q001.load.output_len == pytest.approx(71810 / 320)
    assert q001.flags.max_model_len == 2000
    assert q001.measured == pytest.approx({"tpot": 64.42, "throughput": 3281.19})
    assert by["Q007"].flags.tensor_parallel_size == 8
    # the Instruct-2507 checkpoint is read through the catalog's Thinking-2507 (same config.json)
    assert by["Q009"].catalog_model == "Qwen/Qwen3-30B-A3B-Thinking-2507"
    assert by["Q009"].flags.max_num_batched_tokens == 4096
    # MiniMax-M2 without --ignore-eos: ~942 of the 1,024 requested tokens
    assert by["Q010"].load.output_len == pytest.approx(94221 / 100)
    assert by["Q011"].measured == pytest.approx({"throughput": 684.35})


def test_eleventh_blind_set_is_new_points_of_combinations_the_fit_never_saw() -> None:
    blind = points((HELDOUT_11,))
    assert len(blind) >= 9
    fitted = {p.group for p in points()}
    for p in blind:
        assert p.id.startswith("K"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
    by = {p.id: p for p in blind}
    # PR 28200 prints throughputs, not token totals: 2,048 in per prompt, the duration from input over (total minus
    # output throughput), ~941 generated per request (no --ignore-eos) from output throughput x duration
    k001 = by["K001"]
    assert (k001.gpu, k001.flags.tensor_parallel_size, k001.load.max_concurrency) == ("h100-sxm", 4, 10)
    assert k001.load.output_len == pytest.approx(94090 / 100)
    assert k001.measured == pytest.approx({"ttft": 304.97, "tpot": 16.94, "throughput": 554.22})
    # the excerpts read stop before the latency lines: output throughput alone
    assert by["K002"].measured == pytest.approx({"throughput": 896.22})
    k003 = by["K003"]
    assert (k003.gpu, k003.flags.kv_cache_dtype, k003.flags.max_num_seqs, k003.load.max_concurrency) == (
        "h200",
        "fp8_e4m3",
        16,
        1,
    )
    assert k003.load.output_len == pytest.approx(300)
    # AUGMXNT/speed-benchmarking's saved results: the default random 1,024 / 128 (max_tokens 128, no --ignore-eos);
    # the loop re-sends the same seeded prompts to one prefix-caching server, so TTFT only for its first run
    k004, k006 = by["K004"], by["K006"]
    assert (k004.gpu, k004.load.max_concurrency, k004.load.max_output) == ("rtx-pro-6000-ws", 1, 128)
    assert k004.measured == pytest.approx({"ttft": 34.94, "tpot": 10.337, "throughput": 94.90})
    assert k004.load.input_len == pytest.approx(130632 / 128)
    assert k006.measured == pytest.approx({"tpot": 12.377, "throughput": 2466.74})
    assert by["K009"].catalog_model == "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w4a16"
    # ... and so their later runs' prompts are read as cached (each computes only its last block)
    assert not k004.load.cached_prompts and not by["K007"].load.cached_prompts
    assert all(by[i].load.cached_prompts for i in ("K005", "K006", "K008", "K009"))


def test_twelfth_blind_set_is_new_points_of_combinations_the_fit_never_saw() -> None:
    blind = points((HELDOUT_12,))
    assert len(blind) >= 19
    fitted = {p.group for p in points()}
    for p in blind:
        assert p.id.startswith("M"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
    by = {p.id: p for p in blind}
    # PR 27323's 'Before' column: throughputs only, token totals from the stated lengths (--ignore-eos)
    m001 = by["M001"]
    assert (m001.gpu, m001.flags.tensor_parallel_size, m001.load.max_concurrency) == ("mi300x", 8, 64)
    assert (m001.load.input_len, m001.load.output_len, m001.load.num_prompts) == (1024, 128, 1000)
    assert m001.measured == pytest.approx({"throughput": 794.73})
    # InferenceX's saved JSON has medians, no means: output throughput alone; TP8 with expert parallelism
    m002 = by["M002"]
    assert (m002.gpu, m002.flags.tensor_parallel_size, m002.flags.enable_expert_parallel) == ("h200", 8, True)
    assert m002.measured == pytest.approx({"throughput": 211.69})
    # systalyze's plateaus: one TP1 replica per GPU, or two TP4 replicas (DP2) on the 8 x RTX PRO 4500 node
    assert (by["M003"].gpu, by["M004"].gpu, by["M005"].gpu) == ("h200", "rtx-pro-6000", "rtx-pro-4500")
    m005 = by["M005"]
    assert (m005.flags.tensor_parallel_size, m005.flags.data_parallel_size, m005.flags.max_model_len) == (4, 2, 12288)
    assert m005.measured == pytest.approx({"throughput": 38 * 8})
    assert by["M006"].catalog_model == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
    assert by["M006"].load.input_len == pytest.approx(4425.8)
    assert by["M006"].load.output_len == pytest.approx(230.7)
    # PR 21598: SGLang's client against a vLLM server, uniform random lengths (means from the printed totals)
    m010 = by["M010"]
    assert (m010.gpu, m010.flags.tensor_parallel_size, m010.load.max_concurrency) == ("h20-3e", 8, 10)
    assert m010.load.input_len == pytest.approx(209281 / 100)
    assert m010.load.jitter > 0.9
    # pegainfer's vLLM arms: TPOT where the median equals the p99 (M011) or the page's TPOT column (M015-M019)
    assert by["M011"].gpu == "gh200"
    assert by["M011"].measured == pytest.approx({"tpot": 20.5, "throughput": 47.9})
    assert by["M014"].load.request_rate == 2
    assert (by["M015"].gpu, by["M018"].gpu) == ("rtx5090", "a100-40gb")
    assert by["M018"].measured == pytest.approx({"tpot": 8.21})
    assert by["M019"].measured == pytest.approx({"tpot": 24.06, "throughput": 1394})


def test_thirteenth_blind_set_is_new_points_of_combinations_the_fit_never_saw() -> None:
    blind = points((HELDOUT_13,))
    assert len(blind) >= 6
    fitted = {p.group for p in points()}
    earlier = {(p.source, p.load.max_concurrency, p.model) for p in points((FIELD, HELDOUT_2, HELDOUT_3, HELDOUT_12))}
    for p in blind:
        assert p.id.startswith("J"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
        assert (p.source, p.load.max_concurrency, p.model) not in earlier, p.id
    by = {p.id: p for p in blind}
    # Vultr's MiniMax-M2.5 table: TP4 from its model guide's serve command, 50 prompts at one user and 400 above
    j001, j003 = by["J001"], by["J003"]
    assert (j001.gpu, j001.flags.tensor_parallel_size, j001.flags.max_model_len) == ("b200", 4, 32768)
    assert (j001.load.num_prompts, j003.load.num_prompts, j003.load.max_concurrency) == (50, 400, 16)
    assert j001.version.minor == 12
    assert j003.measured == pytest.approx({"ttft": 77, "tpot": 15.01, "throughput": 1057})
    # the stored copy stops inside J004's TPOT cell
    assert by["J004"].measured == pytest.approx({"ttft": 91, "throughput": 1636})
    # the Ministral 3 recipe's MI300X table (PR 476's runs): means, TP1, 100 prompts of 1,024 / 1,024 at 32 in flight
    j005, j006 = by["J005"], by["J006"]
    assert (j005.gpu, j005.flags.tensor_parallel_size, j005.load.max_concurrency) == ("mi300x", 1, 32)
    assert (j005.load.num_prompts, j005.load.input_len, j005.load.output_len) == (100, 1024, 1024)
    assert j005.measured == pytest.approx({"ttft": 288, "tpot": 6.42, "throughput": 3842})
    # the 8B command's --max-num-batched-tokens; the 3B one states none
    assert (j006.flags.max_num_batched_tokens, j005.flags.max_num_batched_tokens) == (8192, None)
    assert j006.catalog_model == "mistralai/Ministral-3-8B-Instruct-2512"


def test_fourteenth_blind_set_is_new_points_of_combinations_the_fit_never_saw() -> None:
    blind = points((HELDOUT_14,))
    assert len(blind) >= 12
    fitted = {p.group for p in points()}
    earlier = {(p.source, p.load.max_concurrency, p.model) for p in points((FIELD, HELDOUT_12, HELDOUT_13))}
    for p in blind:
        assert p.id.startswith("R"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
        assert (p.source, p.load.max_concurrency, p.model) not in earlier, p.id
        if p.id <= "R014":
            assert "ttft" not in p.measured, p.id  # the #828 thread's tables print no TTFT
    by = {p.id: p for p in blind}
    # InferenceX's power sweep: TP8, --max-num-seqs = the concurrency, ten prompts a user, vLLM 0.15.1
    r001, r010 = by["R001"], by["R010"]
    assert (r001.gpu, r001.flags.tensor_parallel_size, r001.flags.max_num_seqs) == ("h100-sxm", 8, 4)
    assert (r010.load.num_prompts, r010.load.max_concurrency, r010.flags.max_model_len) == (640, 64, 10240)
    assert (r001.version.minor, r001.version.patch) == (15, 1)
    # InferenceX draws each length in [0.8 L, L]: means 921.5 / 7,372.5, a +-11 % spread around them
    assert (r010.load.input_len, r010.load.output_len) == (921.5, 7372.5)
    assert r001.load.jitter == pytest.approx(0.2 / 1.8)
    # Tput/GPU is input + output a GPU: output is that x 8 x the output share
    # output throughput: the power table's measured 'Total Out tok/s' where printed, else Tput/GPU (input + output a
    # GPU) x 8 x the output share of the mean lengths
    assert r001.measured == pytest.approx({"tpot": 3.72, "throughput": 1037})
    assert by["R011"].measured["throughput"] == pytest.approx(1080.5 * 8 * 921.5 / (7372.5 + 921.5), rel=1e-3)
    # the TP4 and TP2 runs at 64 in flight
    assert [by[i].flags.tensor_parallel_size for i in ("R013", "R014")] == [4, 2]
    assert by["R014"].measured == pytest.approx({"tpot": 15.21, "throughput": 4123})
    # InferenceMAX's run 20667906037 (vLLM 0.13.0): means from the aggregated rows, output throughput per GPU x TP;
    # B200 with an fp8 KV cache and --max-num-seqs 512, H200 / H100 with the concurrency as --max-num-seqs
    r015, r029, r053 = by["R015"], by["R029"], by["R053"]
    assert (r015.gpu, r029.gpu, r053.gpu) == ("b200", "h200", "h100-sxm")
    assert (r015.flags.kv_cache_dtype, r015.flags.max_num_seqs, r015.flags.max_model_len) == ("fp8", 512, 2068)
    assert (r029.flags.max_num_seqs, r053.flags.tensor_parallel_size, r053.flags.max_model_len) == (4, 8, 10240)
    assert r015.version.minor == 13 and r015.async_scheduling
    assert set(r015.measured) == {"ttft", "tpot", "throughput"}


def test_fifteenth_blind_set_is_new_runs_of_models_other_than_gpt_oss_on_nvidia() -> None:
    blind = points((HELDOUT_15,))
    assert len(blind) >= 20
    fitted = {p.group for p in points()}

    def run(p: Point) -> tuple[object, ...]:  # one run of a source: its GPU, load and flags (the requested length)
        return (
            p.source,
            p.gpu,
            p.load.max_concurrency,
            round(p.load.output_len, -2),
            p.load.request_rate,
            p.flags.max_num_seqs,
            p.flags.max_num_batched_tokens,
        )

    earlier = {run(p) for p in points((FIELD, HELDOUT_4, HELDOUT_12, HELDOUT_13, HELDOUT_14))}
    for p in blind:
        assert p.id.startswith("U"), p.id
        assert p.use == "field", (p.id, p.reason)
        assert p.group not in fitted, (p.id, p.group)
        assert p.model != "openai/gpt-oss-120b", p.id
        # set 4 took the rows at 8 and 64 in flight, 800 out, on both GPUs (T034-T037)
        assert run(p) not in earlier, p.id
    by = {p.id: p for p in blind}
    # dstack's DeepSeek-R1 sweep: SGLang's client sends ignore_eos, exact 3,200 / 800 tokens, 500 prompts
    u001, u008 = by["U001"], by["U008"]
    assert (u001.gpu, u001.flags.tensor_parallel_size, u001.flags.max_model_len) == ("mi300x", 8, 32768)
    assert (u008.gpu, u008.flags.max_model_len, u008.version.minor, u008.version.patch) == ("h200", None, 7, 4)
    assert (u001.load.input_len, u001.load.output_len, u001.load.num_prompts, u001.load.max_concurrency) == (
        3200,
        800,
        500,
        4,
    )
    assert (u001.load.jitter, u001.load.max_output) == (0.0, None)
    assert u001.measured == pytest.approx({"ttft": 1259.24, "tpot": 46.2, "throughput": 83.82})
    assert by["U007"].load.output_len == 6400
    # dstack's Llama-3.1-405B-FP8 flag sweep on 8 x H100: ShareGPT at a request rate, flags from the row's columns
    u017, u026 = by["U017"], by["U026"]
    assert u017.catalog_model == "meta-llama/Llama-3.1-405B-Instruct-FP8"
    assert (u017.gpu, u017.flags.max_model_len, u017.flags.max_num_batched_tokens, u017.flags.max_num_seqs) == (
        "h100-sxm",
        91680,
        512,
        512,
    )
    assert (u026.flags.max_num_seqs, u017.chunked_prefill, u017.load.dataset, u017.load.request_rate) == (
        128,
        True,
        "sharegpt",
        16.0,
    )
    assert u017.load.max_concurrency is None and not u017.load.rescaled_arrivals
    assert u017.load.input_len == pytest.approx(215.196)
    assert u017.measured == pytest.approx({"ttft": 1486.39, "tpot": 106.54, "throughput": 1198.89})


def test_only_runs_stated_to_re_send_every_prompt_are_read_as_cached() -> None:
    rows = {p.id: p for p in points()}
    rows |= {p.id: p for p in points((HELDOUT_7, HELDOUT_8))}
    assert all(rows[i].load.cached_prompts for i in ("X002", "X003", "X004", "Y007"))
    # the first run of a loop, a run re-sending only some of its prompts (A002: 900 prompts, 300 sent before), and
    # repeats the source does not single out are read as sent fresh
    assert not any(rows[i].load.cached_prompts for i in ("X001", "Y008", "A001", "A002", "P040"))
