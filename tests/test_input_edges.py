"""Every input validated where it enters: numbers finite, positive and bounded, token counts as vLLM reads them,
enums, encodings, the project file and environment strict (nothing coerced), click's usage errors in one line,
and what vLLM does with a fixed --kv-cache-memory-bytes that the GPU cannot hold."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from recommender.catalog import load_gpus
from recommender.cli import cli
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.project import merge_settings
from recommender.safe_load import UntrustedDocumentError, load_json, load_yaml
from recommender.sources.resolve import resolve_model
from recommender.units import parse_human_int

from .conftest import invoke

QWEN = "Qwen/Qwen2.5-0.5B-Instruct"
QWEN_7B = "Qwen/Qwen2.5-7B-Instruct"


def one_error_line(args: list[str], code: int = 2, **env: str) -> str:
    r = CliRunner().invoke(cli, args, env=env)
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), r.stderr
    assert "Traceback" not in r.output and "internal error" not in r.stderr
    return lines[0]


# --- click's usage errors: one line, where to look ---------------------------------------------------------------

COMMANDS = ["gpus", "models", "show", "explain", "recommend", "render", "check", "perf", "calibrate"]


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_one_line_for_every_command(command: str) -> None:
    line = one_error_line([command, "--foo"])
    assert line.startswith("Error: no such option --foo") and line.endswith(f"(see vllm-plan {command} --help)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["recommend", "--formt", "json"], "no such option --formt; did you mean --format, "),
        (["explain", "--gpu"], "option '--gpu' requires an argument (see vllm-plan explain --help)"),
        (["render"], "missing argument 'PLAN_FILE' (see vllm-plan render --help)"),
        (["gpus", "--format", "csv"], "--format: 'csv' is not one of 'table', 'json', 'yaml' (see vllm-plan gpus"),
        (["bogus"], "no such command 'bogus'"),
        (["--bogus"], "no such option --bogus (see vllm-plan --help)"),
        (["explain", QWEN, "--gpu", "h100", "extra", "words"], "unrecognized arguments: extra words"),
    ],
)
def test_usage_errors_in_one_line(args: list[str], message: str) -> None:
    assert message in one_error_line(args)


def test_help_is_still_the_usage_text() -> None:
    r = invoke(["recommend", "--help"])
    assert r.stdout.startswith("Usage: vllm-plan recommend [OPTIONS]") and "--concurrency" in r.stdout


def test_hostile_text_in_an_error_cannot_add_a_line_or_move_the_cursor() -> None:
    line = one_error_line(["explain", QWEN, "--gpu", "a\nb\x1b[2J\u2028c"])
    assert "a\\nb\\x1b[2J\\u2028c" in line


# --- numbers at the edge ----------------------------------------------------------------------------------------

E = ["explain", QWEN, "--gpu", "rtx4090"]
R = ["recommend", "--model", QWEN, "--gpu", "rtx4090", "--concurrency", "8"]
P = ["perf", QWEN, "--gpu", "h100", "--input-len", "100", "--output-len", "10"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*E, "--free-memory-gib", "nan"], "--free-memory-gib: 'nan' is not a finite number"),
        ([*E, "--gpu-memory-gib", "inf"], "--gpu-memory-gib: 'inf' is not a finite number"),
        ([*E, "--free-memory-gib", "-3"], "--free-memory-gib must be zero or more, got -3"),
        ([*E, "--free-memory-gib", "30"], "--free-memory-gib 30 is more than the 23.99 GiB NVIDIA GeForce RTX 4090"),
        ([*E, "--max-model-len", "infk"], "--max-model-len: 'infk' is not a whole number"),
        ([*E, "--max-model-len", "1.5K"], "--max-model-len: '1.5K' is not a whole number"),
        ([*E, "--kv-cache-memory-bytes", str(2**63)], "--kv-cache-memory-bytes must be at most 9,007,199,254,740,992"),
        ([*E, "-tp", "0"], "--tensor-parallel-size must be at least 1, got 0"),
        ([*E, "-pp", "1e3"], "--pipeline-parallel-size: '1e3' is not a whole number"),
        ([*E, "--gpu-memory-utilization", "nan"], "--gpu-memory-utilization: 'nan' is not a finite number"),
        ([*E, "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization must be at most 1, got 1.5"),
        ([*E, "--cpu-offload-gb", "1e300"], "--cpu-offload-gb must be at most 1,048,576"),
        ([*R, "--gpus-per-node", "0"], "--gpus-per-node must be at least 1, got 0"),
        ([*R, "--nodes", "0"], "--nodes must be at least 1, got 0"),
        ([*R, "--concurrency", "60.7"], "--concurrency: '60.7' is not a whole number"),
        ([*R, "--min-context", "0"], "--min-context must be at least 1, got 0"),
        ([*R, "--replicas", "10000000"], "--replicas must be at most 10,000, got 10,000,000"),
        ([*R, "--port", "65536"], "--port must be at most 65,535, got 65,536"),
        ([*P, "--num-prompts", "1000000000"], "--num-prompts must be at most 100,000"),
        ([*P, "--burstiness", "inf"], "--burstiness: 'inf' is not a finite number"),
        (["check", "--gpu", "h100", "--concurrency", "0", "--", "vllm", "serve", QWEN], "--concurrency must be at"),
    ],
)
def test_bad_numbers_stop_at_the_edge(args: list[str], message: str) -> None:
    assert message in one_error_line(args)


def test_render_refuses_replicas_and_ports_beyond_bounds() -> None:
    plan = "examples/qwen2.5-7b-on-rtx4090/plan.yaml"
    assert "--replicas must be at most 10,000" in one_error_line(["render", plan, "--replicas", "10000000"])
    assert "--port must be at least 1, got 0" in one_error_line(["render", plan, "--port", "0"])


def test_human_readable_ints_are_read_exactly_as_vllm_reads_them() -> None:
    # vllm/utils/argparse_utils.py human_readable_int: lowercase decimal (a fraction truncated), uppercase binary
    # whole numbers only, otherwise int()
    assert [parse_human_int(t) for t in ("32k", "32K", "25.6k", "1m", "2G", " 4096 ")] == [
        32_000,
        32_768,
        25_600,
        1_000_000,
        2 << 30,
        4096,
    ]
    for bad in ("1.5K", "infk", "nank", "1e3", "9" * 400 + "k", "", "32 k", "0x10"):
        with pytest.raises(ValueError):
            parse_human_int(bad)


def test_a_huge_fixed_kv_cache_is_refused_in_bounded_time() -> None:
    start = time.perf_counter()
    one_error_line([*E, "--kv-cache-memory-bytes", str(2**63)])
    assert time.perf_counter() - start < 5  # was 18 s of bar drawing
    d = json.loads(invoke([*E, "--kv-cache-memory-bytes", str(2**53), "--format", "json"]).stdout)
    assert d["fits"] is False and "kv-cache-allocation-oom" in d["error_kinds"]


# --- --kv-cache-memory-bytes against the GPU (vLLM 0.33 v1/worker/gpu_worker.py determine_available_memory) ------


def test_a_fixed_kv_cache_larger_than_the_gpu_does_not_start() -> None:
    d = json.loads(
        invoke(["explain", QWEN_7B, "--gpu", "rtx4090", "--kv-cache-memory-bytes", "1T", "--format", "json"]).stdout
    )
    assert d["fits"] is False and d["error_kinds"] == ["kv-cache-allocation-oom"]
    assert "CUDA out of memory. Tried to allocate 1024.00 GiB" in d["errors"][0]


def test_a_fixed_kv_cache_is_named_as_the_budget_in_the_table() -> None:
    # No utilization budget applies (vLLM skips profiling): the table says where the figure comes from.
    out = invoke(["explain", QWEN_7B, "--gpu", "h100", "--kv-cache-memory-bytes", "20G"]).stdout
    assert "20.00 GiB  (= --kv-cache-memory-bytes, no utilization budget)" in out and "ceil(total" not in out
    assert "(= ceil(total x 0.92))" in invoke(["explain", QWEN_7B, "--gpu", "h100"]).stdout


def test_the_fixed_kv_cache_boundary_is_free_memory_less_weights_and_non_torch() -> None:
    """vLLM skips profiling and allocates the KV tensor after the weights: it fits while blocks x page size
    <= free - weights - non-torch memory (the profiling pass's activations are cached blocks torch releases)."""
    model = resolve_model(QWEN_7B)
    gpu = resolve_gpu("rtx4090", load_gpus())
    v = VllmVersion(0, 33)
    probe = explain(model, gpu, EngineFlags(kv_cache_memory_bytes=1 << 30), v)
    st = probe.stage
    page = st.layout.bytes_per_block
    room = gpu.total_bytes - st.weights - st.non_torch
    # 7.6B bf16 parameters (14.2 GiB) and 0.25 GiB outside torch on a 23.99 GiB card: about 9.5 GiB of room;
    # a block is 16 tokens x 28 layers x K and V x 4 KV heads x 128 dims x 2 bytes
    assert 9 << 30 < room < 10 << 30 and page == 16 * 28 * 2 * 4 * 128 * 2
    fits = explain(model, gpu, EngineFlags(kv_cache_memory_bytes=room // page * page), v)
    over = explain(model, gpu, EngineFlags(kv_cache_memory_bytes=(room // page + 1) * page), v)
    assert fits.fits and not over.fits and over.error_kinds[0].value == "kv-cache-allocation-oom"
    assert fits.num_gpu_blocks == room // page


def test_a_flag_before_the_release_that_introduced_it_fails() -> None:
    old = ["--vllm-version", "0.10.1", "--kv-cache-memory-bytes", "1G"]  # v0.10.2's arg_utils.py has it first
    line = one_error_line([*E, *old])
    assert "--kv-cache-memory-bytes is not an option of vLLM 0.10.1 (added in vLLM 0.10.2)" in line
    assert "not an option of vLLM 0.10.1" in one_error_line([*P, *old])
    invoke([*E, "--vllm-version", "0.10.2", "--kv-cache-memory-bytes", "1G"])


# --- the project file and the environment: strict, bounded ---------------------------------------------------------

# nine levels of nine aliases: 1.5 KB of text, 387 million values for whoever walks it
ALIAS_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nodes: 0\n", "nodes must be at least 1, got 0"),
        ("objective: bogus\n", "objective 'bogus': choose from min-gpus, quality"),
        ("concurrency: 60.7\n", "concurrency '60.7' is not a whole number"),
        ("concurrency: true\n", "concurrency True is not a whole number"),
        ("vllm_version: 0.10\n", "vllm_version '0.1' is a number, not text (quote it in YAML)"),
        ("gpu_memory_gib: .nan\n", "gpu_memory_gib 'nan' is not a finite number"),
        ("free_memory_gib: -1\n", "free_memory_gib must be zero or more, got -1"),
        ("context: infk\n", "context 'infk' is not a whole number"),
        ("gpus-per-node: 2\ngpus_per_node: 4\n", "gpus_per_node is given twice"),
        ("model: [a, b]\n", "model \"['a', 'b']\" is not text"),
        ("bogus: 1\n", "unknown setting 'bogus'"),
        ("- a\n- b\n", "must be a mapping of settings"),
        ('model: "a\\nb"\n', "model 'a\\nb' is not a name"),
        ("a: " + "[" * 5000 + "\n", "nested more than 8 levels deep"),
        (ALIAS_BOMB, "more than 1,000,000 values once its aliases are expanded"),
    ],
)
def test_project_file_values_are_refused_not_coerced(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "p.yaml").write_text(text)
    line = one_error_line(["recommend", "--config", str(tmp_path / "p.yaml")])
    assert message in line and str(tmp_path / "p.yaml") in line


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"model: \xff\xfe\n", "not UTF-8 text (byte 7)"),
        ("model: x\n".encode("utf-16"), "not UTF-8 text (byte 0)"),
        (b"model: a\x00b\n", "not valid YAML"),
        (b"a: 1\n" * 300_000, "larger than 1 MiB"),
    ],
)
def test_project_files_that_are_not_text_are_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "p.yaml").write_bytes(content)
    assert message in one_error_line(["recommend", "--config", str(tmp_path / "p.yaml")])


def test_a_device_as_project_file_is_not_read() -> None:
    assert "not a regular file" in one_error_line(["recommend", "--config", "/dev/zero"])


def test_the_environment_is_read_with_the_same_parsers(tmp_path: Path) -> None:
    line = one_error_line(["recommend", "--model", QWEN, "--gpu", "h100"], VLLM_PLAN_CONCURRENCY="60.7")
    assert "VLLM_PLAN_CONCURRENCY: concurrency '60.7' is not a whole number" in line
    assert "VLLM_PLAN_NODES: nodes must be at least 1" in one_error_line(R, VLLM_PLAN_NODES="0")
    (tmp_path / "vllm-plan.yaml").write_text("model: Qwen/Qwen2.5-0.5B-Instruct\ncontext: 8k\nnodes: 1\n")
    s = merge_settings({"gpu": "h100"}, None, cwd=tmp_path, environ={"VLLM_PLAN_CONCURRENCY": "12"})
    assert s == {"model": QWEN, "context": 8000, "nodes": 1, "concurrency": 12, "gpu": "h100"}


# --- files as documents: bounded parsing --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{}".encode("utf-16"), "not UTF-8 text"),
        (b"[" * 100_000, "nested more than 64 levels deep"),
        (b'{"a":' * 3000 + b"1" + b"}" * 3000, "nested more than 64 levels deep"),
        (b'{"hidden_size": 4096, "num_hid', "not valid JSON (line 1"),
    ],
)
def test_broken_config_files_are_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    (tmp_path / "config.json").write_bytes(content)
    assert message in one_error_line(["explain", str(tmp_path), "--gpu", "h100"])


def test_untrusted_yaml_and_json_are_bounded() -> None:
    assert load_yaml("a: {b: [1, 2]}\n") == {"a": {"b": [1, 2]}}
    assert load_json('{"a": NaN}')["a"] != load_json('{"a": NaN}')["a"]  # NaN is read; its use is checked later
    for text, message in (
        ("a:\n" + "".join(" " * (i + 1) + f"a{i}:\n" for i in range(40)), "nested more than 32 levels deep"),
        ("!!python/object/apply:os.system ['true']\n", "not valid YAML"),
        ("a: b: c\n", r"not valid YAML \(line 1\): mapping values are not allowed here"),
    ):
        with pytest.raises(UntrustedDocumentError, match=message):
            load_yaml(text)


def test_the_readme_shows_the_usage_error_as_printed() -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert f"`{one_error_line(['recommend', '--foo'])}`" in readme


def test_check_refuses_an_alias_bomb_inside_a_manifest(tmp_path: Path) -> None:
    bomb = "".join("    " + line + "\n" for line in ALIAS_BOMB.splitlines())
    (tmp_path / "k8s.yaml").write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  extra:\n"
        + bomb
        + "  template:\n    spec:\n      containers:\n      - {name: a, image: vllm/vllm-openai, command: [vllm, serve, "
        + QWEN
        + "]}\n"
    )
    start = time.perf_counter()
    line = one_error_line(["check", str(tmp_path / "k8s.yaml"), "--gpu", "h100"])
    assert "more than 1,000,000 values once its aliases are expanded" in line and time.perf_counter() - start < 5


def test_names_no_file_system_takes_are_bad_input_not_crashes(tmp_path: Path) -> None:
    long = "A" * 400  # longer than NAME_MAX: stat() raises ENAMETOOLONG rather than answering 'missing'
    assert "model 'AAAA" in one_error_line(["explain", long, "--gpu", "h100"])
    assert "cannot read" in one_error_line(["render", long])
    assert long[:20] in one_error_line(["recommend", "--config", long])
    plan = "examples/qwen2.5-7b-on-rtx4090/plan.yaml"
    assert "cannot write" in one_error_line(["render", plan, "-o", str(tmp_path / long)])
    assert list(tmp_path.iterdir()) == []
    r = invoke(["check", "--gpu", "h100", f"vllm serve {QWEN} --served-model-name {long}"])
    assert "PASS" in r.stdout


def test_a_result_file_cannot_ask_for_an_unbounded_replay(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parent / "data" / "bench_results" / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
    doc = json.loads(src.read_text(encoding="utf-8"))
    (tmp_path / "r.json").write_text(json.dumps({**doc, "num_prompts": 10**9}))
    args = ["perf", "--model", QWEN, "--gpu", "l40s", "--compare", str(tmp_path / "r.json")]
    assert "--num-prompts 1,000,000,000 is more than the 100,000 prompts" in one_error_line(args)


# --- files that are not files, names that are not outputs (H41) -----------------------------------------------------


def test_check_names_a_device_a_dangling_link_and_a_link_loop(tmp_path: Path) -> None:
    """Each was 'no such file or directory': the name exists, it just is not a file to read."""
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "gone.yaml")
    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    assert one_error_line(["check", "/dev/null"]).endswith(
        "/dev/null: not a regular file (a device, FIFO or socket): not read"
    )
    for name in ("dangling.yaml", "loop1"):
        line = one_error_line(["check", str(tmp_path / name), "--gpu", "h100"])
        assert line.endswith(f"{name}: a symbolic link to nothing (or a loop of links): not read"), line
    line = one_error_line(["check", str(tmp_path / "missing.yaml")])
    assert line.endswith("missing.yaml: no such file or directory (and not a `vllm serve ...` command)")


def test_recommend_o_with_a_suffix_that_names_no_format_writes_nothing(tmp_path: Path) -> None:
    """`-o plan.yamll` made a folder `plan.yamll/` of six artifacts: now one line, before any planning."""
    out = tmp_path / "plan.yamll"
    line = one_error_line(["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "8", "-o", str(out)])
    assert "not a plan file name (ending in .htm, .html, .json, .txt, .yaml, .yml) and not an existing folder" in line
    assert not out.exists() and list(tmp_path.iterdir()) == []
    folder = tmp_path / "deploy.v2"
    args = ["recommend", "--model", QWEN_7B, "--gpu", "rtx4090", "--concurrency", "8", "--emit", "command"]
    invoke([*args, "-o", str(folder)])
    assert sorted(p.name for p in folder.iterdir()) == ["plan.yaml", "serve.sh"]  # with --emit the name is a folder


def test_an_empty_model_or_gpu_says_the_three_ways_to_give_one() -> None:
    """`--model "$MODEL"` with MODEL unset: it said only 'no model given'."""
    line = one_error_line(["recommend", "--model", "", "--gpu", "rtx4090", "--concurrency", "4"])
    assert line.startswith("Error: no model given: pass --model on the command line, set VLLM_PLAN_MODEL"), line
    line = one_error_line(["recommend", "--model", QWEN_7B, "--gpu", "", "--concurrency", "4"])
    assert line.startswith("Error: no gpu given: pass --gpu on the command line, set VLLM_PLAN_GPU"), line
