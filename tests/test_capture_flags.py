"""The CUDA-graph capture flags a launch passes (memory/capture_config.py), read into the capture lists and the graph
estimate as vLLM reads them (vllm/config/vllm.py _set_cudagraph_sizes, config/compilation.py, engine/arg_utils.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from recommender.catalog import load_gpus
from recommender.cli import cli
from recommender.errors import FlagError
from recommender.gpu_names import resolve_gpu
from recommender.memory import overheads
from recommender.memory.budget import explain
from recommender.memory.capture_config import capture_request, effective_mode, explicit_sizes
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.profile_run import capture_lists, graph_count
from recommender.memory.scheduler import SchedulerLimits
from recommender.memory.startup_issues import IssueKind
from recommender.serve_args import parse_serve_argv
from recommender.serve_argv_builder import build_serve_argv
from recommender.sources.resolve import resolve_model

H100 = resolve_gpu("h100", load_gpus())
LLAMA = "meta-llama/Llama-3.1-8B-Instruct"
V021 = VllmVersion.parse("0.21.0")
# 8,192 batched tokens and 64 sequences: the default largest size is min(2 x 64, 512) = 128
LIMITS = SchedulerLimits(max_model_len=8192, auto_fit=False, max_num_seqs=64, max_num_batched_tokens=8192)


def _lists(flags: EngineFlags, version: VllmVersion = V021, limits: SchedulerLimits = LIMITS):
    return capture_lists(resolve_model(LLAMA), H100, flags, limits, version)


def test_compilation_config_json_and_the_dedicated_flags() -> None:
    req = capture_request('{"cudagraph_capture_sizes": [8, 4, 4, 1], "cudagraph_mode": "piecewise"}', None, None, None)
    assert req.sizes == (8, 4, 4, 1) and req.mode == "PIECEWISE" and not req.level0
    # -O with a JSON object is the older alias of --compilation-config; {"level": 0} asks for no compilation
    assert capture_request(None, '{"level": 0}', None, None).level0
    assert capture_request(None, "0", None, None).level0 and not capture_request(None, "3", None, None).level0
    # arg_utils.py copies --cudagraph-capture-sizes / --max-cudagraph-capture-size over the JSON's keys
    req = capture_request('{"cudagraph_capture_sizes": [8], "max_cudagraph_capture_size": 8}', None, (1, 2), 2)
    assert req.sizes == (1, 2) and req.max_size == 2
    for bad in ('{"cudagraph_mode": "FULL_DECODE"}', '{"cudagraph_capture_sizes": []}', "[1, 2]", "{'level': 3"):
        with pytest.raises(FlagError):
            capture_request(bad, None, None, None)


def test_explicit_list_sorted_deduplicated_and_filtered_by_batched_tokens_from_0_11_1() -> None:
    # 0.11.1 on: set() then `i <= max_num_tokens`, sorted ascending; before, init_with_cudagraph_sizes kept the
    # config's list whole (de-duplicated, sorted)
    assert explicit_sizes((8, 4, 4, 1, 16384), max_num_batched_tokens=8192, release=(0, 21, 0)) == (1, 4, 8)
    assert explicit_sizes((8, 4, 4, 1, 16384), max_num_batched_tokens=8192, release=(0, 10, 1)) == (1, 4, 8, 16384)


def test_max_capture_size_sets_the_default_list_and_the_decode_list_follows_max_num_seqs() -> None:
    default, default_decode = _lists(EngineFlags())
    # up to 128: [1, 2, 4] + range(8, 129, 8) = 3 + 16 sizes, both lists (64 sequences: 3 + 8 decode sizes)
    assert len(default or ()) == 19 and len(default_decode or ()) == 11
    sizes, decode = _lists(EngineFlags(max_cudagraph_capture_size=256))
    # up to 256: [1, 2, 4] + range(8, 256, 8) + range(256, 257, 16) = 3 + 31 + 1 = 35; decode sizes <= 64: still 11
    assert sizes is not None and len(sizes) == 35 and sizes[-2:] == (248, 256)
    assert decode is not None and len(decode) == 11 and decode[-1] == 64
    # the maximum is capped by max_num_batched_tokens: 2,048 tokens keep 3 + 31 + range(256, 2049, 16) = 34 + 113
    few = SchedulerLimits(max_model_len=2048, auto_fit=False, max_num_seqs=1024, max_num_batched_tokens=2048)
    big, _ = _lists(EngineFlags(max_cudagraph_capture_size=4096), limits=few)
    assert big is not None and len(big) == 147 and big[-1] == 2048


def test_cudagraph_mode_decides_which_lists_exist() -> None:
    flags = EngineFlags(compilation_config='{"cudagraph_capture_sizes": [1, 2, 4, 8, 16, 32, 64, 128]}')
    sizes, decode = _lists(flags)
    assert sizes == (1, 2, 4, 8, 16, 32, 64, 128) and decode == (1, 2, 4, 8, 16, 32, 64)  # FULL: <= 64 sequences
    for mode, expected in (("PIECEWISE", sizes), ("FULL", sizes), ("FULL_DECODE_ONLY", decode)):
        one = EngineFlags(
            compilation_config=f'{{"cudagraph_capture_sizes": {list(sizes)}, "cudagraph_mode": "{mode}"}}'
        )
        # one list where 0.21's default captures two: an empty FULL list (counted against the fit's two lists)
        assert _lists(one) == (expected, ())
    none = EngineFlags(compilation_config='{"cudagraph_mode": "NONE"}')
    assert _lists(none) == ((), None) and graph_count(resolve_model(LLAMA), H100, none, LIMITS, V021) == 0
    # before 0.10.2 CompilationConfig has no cudagraph_mode: the release's PIECEWISE list, no FULL list
    old = VllmVersion.parse("0.10.1")
    sizes_old, decode_old = _lists(EngineFlags(compilation_config='{"cudagraph_mode": "NONE"}'), old)
    assert sizes_old is not None and len(sizes_old) == 19 and decode_old is None
    assert effective_mode(capture_request(None, "0", None, None), default="PIECEWISE", release=(0, 10, 1)) == "NONE"


def test_graph_estimate_follows_the_given_list() -> None:
    """Llama-3.1-8B (32 layers) on an H100, vLLM 0.21, [1, 2, 4, 8] in both modes (64 sequences), from
    overheads.cudagraph_bytes' rule: first = 8 / 512 of the fit's first capture; graphs after the first 3 + 3 of the
    fit's 50 + 50, second-largest 4 tokens: the per-graph share 0.61728 x 570,425,344 x 24 / 49,600 = 170,376 B is
    below 6 graphs x 1 MiB, so the layer part is 570,425,344 x 0.382716 x 8 / 512 = 3,411,110 + 6,291,456; the base
    128,849,018 (the floor) + (300,647,710 - 128,849,018) x 8 / 512 = 2,684,354: 141,235,938 B (0.13 GiB), where the
    default list (up to 128) gives more."""
    flags = EngineFlags(max_num_seqs=64, compilation_config='{"cudagraph_capture_sizes": [1, 2, 4, 8]}')
    e = explain(resolve_model(LLAMA), H100, flags, V021)
    assert abs(e.stage.cudagraph - 141_235_938) <= 2
    assert (e.capture_sizes, e.decode_capture_sizes) == (4, 4)
    default = explain(resolve_model(LLAMA), H100, EngineFlags(max_num_seqs=64), V021)
    assert default.stage.cudagraph > e.stage.cudagraph and default.capture_sizes == 19
    assert explain(resolve_model(LLAMA), H100, EngineFlags(optimization_level="0"), V021).stage.cudagraph == 0


def test_cuda_graph_sizes_one_value_is_the_largest_size() -> None:
    # SchedulerConfig.cuda_graph_sizes (0.9.0 to 0.12): one value N is [1, 2, 4] + range(8, N + 1, 8)
    one = parse_serve_argv("vllm serve m --cuda-graph-sizes 64").engine_flags()
    assert one.max_cudagraph_capture_size == 64 and one.cudagraph_capture_sizes is None
    sizes, decode = _lists(one, VllmVersion.parse("0.10.1"))
    assert sizes is not None and len(sizes) == 11 and decode is None
    several = parse_serve_argv("vllm serve m --cuda-graph-sizes 1 2 8").engine_flags()
    assert several.cudagraph_capture_sizes == (1, 2, 8)
    assert parse_serve_argv("vllm serve m --cudagraph-capture-sizes 1 x").errors == (
        "argument --cudagraph-capture-sizes: invalid int value: 'x'",
    )


def test_v0_captures_the_given_list() -> None:
    # V0 (model_runner.py capture_model) captures compilation_config.cudagraph_capture_sizes when given: 3 graphs
    # where 256 sequences take [1, 2, 4] + range(8, 257, 8) = 35
    model, limits = resolve_model(LLAMA), SchedulerLimits(2048, False, 256, 2048)
    v0 = VllmVersion.parse("0.8.2")
    assert graph_count(model, H100, EngineFlags(), limits, v0, v0=True) == overheads.v0_cudagraph_capture_count(256)
    assert overheads.v0_cudagraph_capture_count(256) == 35
    given = EngineFlags(compilation_config='{"cudagraph_capture_sizes": [4, 2, 1, 1]}')
    assert graph_count(model, H100, given, limits, v0, v0=True) == 3


def test_explain_cli_reads_the_compilation_config() -> None:
    runner = CliRunner()
    base = [
        "explain",
        "--gpu",
        "h100",
        "--vllm-version",
        "0.21.0",
        "--",
        "vllm",
        "serve",
        LLAMA,
        "--max-num-seqs",
        "64",
    ]
    result = runner.invoke(cli, [*base, "--compilation-config", '{"cudagraph_capture_sizes": [1, 2, 4, 8]}'])
    assert result.exit_code == 0, result.output
    assert "  G CUDA graphs         0.13 GiB\n    graph sizes            4 + 4 FULL decode\n" in result.stdout
    assert "    graph sizes           19 + 11 FULL decode\n" in runner.invoke(cli, base).stdout
    bad = runner.invoke(cli, [*base, "--compilation-config", '{"cudagraph_mode": "FULL_DECODE"}'])
    assert bad.exit_code == 2 and "cudagraph_mode 'FULL_DECODE'" in bad.stderr and bad.stderr.count("\n") == 1
    assert bad.exception is None or isinstance(bad.exception, SystemExit)


def test_capture_flags_survive_the_rebuilt_command() -> None:
    written = (
        'vllm serve m -O \'{"level": 3}\' --compilation-config \'{"cudagraph_mode": "PIECEWISE"}\' '
        "--max-cudagraph-capture-size 64 --cudagraph-capture-sizes 1 2 4"
    )
    flags = parse_serve_argv(written).engine_flags()
    assert parse_serve_argv(build_serve_argv("m", flags)).engine_flags() == flags


def test_the_mamba_block_check_needs_full_graphs() -> None:
    """config/compilation.py resolve_cudagraph_mode_and_sizes refuses max_num_seqs above the Mamba cache blocks only
    when `cudagraph_mode.has_full_cudagraphs()`: Qwen3.8-27B on an RTX PRO 6000 Max-Q at 0.95 with 1,024 sequences
    (fewer blocks, tests/test_at_risk.py) is refused by default and under FULL_DECODE_ONLY, not under PIECEWISE or -O0."""
    spec, maxq, v26 = (
        resolve_model("Qwen/Qwen3.8-27B"),
        resolve_gpu("rtx-pro-6000-maxq", load_gpus()),
        VllmVersion(0, 26),
    )

    def refused(**kw: object) -> bool:
        e = explain(spec, maxq, EngineFlags(gpu_memory_utilization=0.95, **kw), v26)  # type: ignore[arg-type]
        return e.has(IssueKind.MAMBA_BLOCKS)

    assert refused() and refused(compilation_config='{"cudagraph_mode": "FULL_DECODE_ONLY"}')
    assert not refused(compilation_config='{"cudagraph_mode": "PIECEWISE"}') and not refused(optimization_level="0")
