"""The CLI audit's leftovers (issues 10 and 11), each through the command a new user ran: exit code and output."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import invoke

ROOT = Path(__file__).parent.parent
SMALL = ["recommend", "--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "8"]


def test_recommend_o_file_keeps_a_changed_file_without_force_as_render_does(tmp_path: Path) -> None:
    """`recommend -o plan.yaml` replaced whatever the file held; now, like `render`, a file that differs from the
    new plan is refused (one line, exit 2, the file and any --plot untouched), the same plan is written again
    silently, and --force replaces it."""
    plan = tmp_path / "plan.yaml"
    plan.write_text("kept: true\n")
    refused = invoke([*SMALL, "-o", str(plan), "--plot", str(tmp_path / "p.svg")], exit_code=2)
    assert refused.stderr == f"Error: {plan} exists and differs from the new output; pass --force to overwrite it\n"
    assert plan.read_text() == "kept: true\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.yaml"]  # no plot, no temporary file left
    invoke([*SMALL, "-o", str(plan), "--force"])
    written = plan.read_text()
    assert yaml.safe_load(written)["apiVersion"] == "vllm-plan/v1"
    invoke([*SMALL, "-o", str(plan)])  # the same plan again: nothing to refuse
    assert plan.read_text() == written
    invoke([*SMALL[:-1], "9", "-o", str(plan)], exit_code=2)  # another plan: refused
    assert plan.read_text() == written


EXPLAIN = ["explain", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--max-model-len", "8192"]
CHECK = ["check", "vllm serve Qwen/Qwen2.5-7B-Instruct --max-model-len 8192", "--gpu", "h100"]
PERF = ["perf", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "h100", "--input-len", "500", "--output-len", "100"]
COMPARE = ["perf", "--gpu", "l40s", "-dp", "4", "--compare", str(ROOT / "tests/data/bench_results/"
           "nerdalert-llama-3.2-3b-4xl40s-10qps.json")]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "name", "other"),
    [
        (EXPLAIN, "budget.txt", ["--max-model-len", "4096"]),
        (CHECK, "report.html", ["--format", "markdown"]),
        (PERF, "bench.json", ["--max-concurrency", "4"]),
        (COMPARE, "compare.yaml", ["--format", "json"]),
    ],
    ids=["explain", "check", "perf", "perf-compare"],
)
def test_o_file_keeps_a_changed_file_without_force(
    tmp_path: Path, argv: list[str], name: str, other: list[str]
) -> None:
    """`explain`, `check` and `perf -o FILE` replaced whatever the file held (and `perf --compare` printed, ignoring
    -o); now, as `render` and `recommend -o`, a file that differs from the new output is refused (one line, exit 2,
    the file untouched and no temporary file left), the same output is written again silently, --force replaces
    it, and the help says so."""
    fmt = ["--format", {".txt": "table", ".html": "html", ".json": "json", ".yaml": "yaml"}[Path(name).suffix]]
    out = tmp_path / name
    out.write_text("kept: true\n")
    refused = invoke([*argv, *fmt, "-o", str(out)], exit_code=2)
    assert refused.stderr == f"Error: {out} exists and differs from the new output; pass --force to overwrite it\n"
    assert out.read_text() == "kept: true\n"
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert invoke([*argv, *fmt, "-o", str(out), "--force"]).stdout == ""
    written = out.read_text()
    assert written != "kept: true\n" and written.strip()
    invoke([*argv, *fmt, "-o", str(out)])  # the same output again: nothing to refuse
    assert out.read_text() == written
    invoke([*argv, *other, "-o", str(out)], exit_code=2)  # another output: refused
    assert out.read_text() == written
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert "--force" in invoke([argv[0], "--help"]).stdout


def test_perf_compare_o_file_is_the_printed_comparison(tmp_path: Path) -> None:
    """`perf --compare -o FILE` writes what it prints; a report or a plot it cannot draw is refused (it printed
    YAML for --format html)."""
    out = tmp_path / "compare.txt"
    printed = invoke(COMPARE).stdout
    invoke([*COMPARE, "-o", str(out)])
    assert out.read_text() == printed and "predicted" in printed
    refused = invoke([*COMPARE, "--format", "html", "-o", str(tmp_path / "c.html")], exit_code=2)
    assert "drop --format html and --plot" in refused.stderr
    invoke([*COMPARE, "--plot", str(tmp_path / "c.svg")], exit_code=2)
    assert [p.name for p in tmp_path.iterdir()] == ["compare.txt"]


def _closed_reader(*argv: str) -> tuple[int, bytes]:
    """Run a command whose stdout reader goes away before its first write (`| head` once it has read a line)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    code = proc.wait(timeout=120)
    return code, proc.stderr.read()


def test_a_benchmark_script_piped_into_head_exits_quietly() -> None:
    """`python benchmarks/check_corpus.py | head` died with a BrokenPipeError traceback: a script whose main runs
    through run_script (every benchmark script's does, below) ends as the CLI does, exit 141 and nothing on stderr;
    its own exit code otherwise."""
    script = "from recommender.console import run_script; run_script(lambda: print('row\\n' * 100000) or {code})"
    assert _closed_reader(sys.executable, "-c", script.format(code=3)) == (141, b"")
    done = subprocess.run([sys.executable, "-c", script.format(code=3)], capture_output=True, check=False)
    assert (done.returncode, len(done.stdout), done.stderr) == (3, 400_001, b"")


def test_recommend_piped_into_head_exits_quietly() -> None:
    """`vllm-plan recommend ... | head -1`: 141, silently, as `models | head -1` (tests/test_hostile_inputs.py)."""
    assert _closed_reader(sys.executable, "-m", "recommender", *SMALL) == (141, b"")


def test_every_benchmark_script_runs_its_main_through_run_script() -> None:
    """A script added later with a bare `main()` would die with a traceback again under `| head`."""
    for script in sorted((ROOT / "benchmarks").glob("*.py")):
        text = script.read_text()
        if '__name__ == "__main__"' in text:
            assert "    run_script(" in text.split('__name__ == "__main__"', 1)[1], script.name


def test_explain_and_perf_take_the_model_and_release_recommend_plans_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """explain read VLLM_PLAN_GPU but not VLLM_PLAN_MODEL (`no model given`) while recommend read both; now
    explain, perf and calibrate read the model, the GPU and the release from the environment or ./vllm-plan.yaml
    as recommend does, the command line first."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLLM_PLAN_MODEL", "Qwen/Qwen3-8B")
    monkeypatch.setenv("VLLM_PLAN_GPU", "h100")
    head = invoke(["explain"]).stdout.splitlines()[0]
    assert head == "Qwen/Qwen3-8B on NVIDIA H100 80GB HBM3 — vLLM 0.33.0"
    perf = invoke(["perf", "--input-len", "100", "--output-len", "10"]).stdout.splitlines()[0]
    assert perf == "Qwen/Qwen3-8B on NVIDIA H100 80GB HBM3 (vLLM 0.33.0)"
    monkeypatch.delenv("VLLM_PLAN_MODEL")
    (tmp_path / "vllm-plan.yaml").write_text('model: Qwen/Qwen3-0.6B\nvllm_version: "0.11.0"\n')
    assert invoke(["explain"]).stdout.startswith("Qwen/Qwen3-0.6B on NVIDIA H100 80GB HBM3 — vLLM 0.11.0\n")
    given = invoke(["explain", "Qwen/Qwen3-8B", "--vllm-version", "0.33.0"]).stdout  # the command line wins
    assert given.startswith("Qwen/Qwen3-8B on NVIDIA H100 80GB HBM3 — vLLM 0.33.0\n")
    (tmp_path / "vllm-plan.yaml").unlink()
    missing = invoke(["explain"], exit_code=2).stderr
    assert missing == (
        "Error: no model given: pass MODEL, --model, or `-- vllm serve MODEL ...`, set VLLM_PLAN_MODEL, or add "
        "`model:` to ./vllm-plan.yaml\n"
    )


def test_a_plan_on_a_gpu_without_bfloat16_names_the_float16_vllm_loads(tmp_path: Path) -> None:
    """A T4 (compute capability 7.5) plan labelled Qwen2.5's bfloat16 weights "bfloat16" while explain, rightly, said
    float16: vLLM 0.33's _resolve_auto_dtype falls back to the platform's first dtype (CUDA's supported_dtypes lead
    with float16 below 8.0). An L4 (8.9) keeps bfloat16."""
    t4 = ["recommend", "--model", "Qwen/Qwen2.5-1.5B-Instruct", "--gpu", "t4", "--concurrency", "4"]
    out = invoke(t4).stdout.splitlines()
    assert out[1].startswith("  TP=1 PP=1, float16 (bfloat16 checkpoint), KV auto: "), out[1]
    doc = yaml.safe_load(invoke([*t4, "--format", "yaml"]).stdout)
    assert (doc["weights"], doc["prediction"]["dtype"]) == ("float16 (bfloat16 checkpoint)", "float16")
    l4 = invoke([*t4[:-3], "l4", *t4[-2:]]).stdout.splitlines()[1]
    assert l4.startswith("  TP=1 PP=1, bfloat16, KV auto: "), l4
    plan = tmp_path / "plan.yaml"
    invoke([*t4, "-o", str(plan)])
    invoke(["check", str(plan)])  # the plan document with its new label reads back and passes


def _explained(*args: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(invoke(["explain", "--format", "json", *args]).stdout)
    return doc


def test_a_block_size_the_release_refuses_is_refused_as_that_release_does() -> None:
    """`--block-size 7` was computed as if vLLM ran it. Releases 0.8.5-0.14.0 refuse it at parsing (argparse
    choices, profiles/vllm-flags.yaml): one line, exit 2, as for the same flag in a command. vLLM 0.33's parser
    takes any int (CacheConfig: block_size gt=0), but no CUDA attention backend takes a size that is not a multiple
    of 16 and vLLM exits building the model: explain's verdict fails with that error, check fails the server and
    says to drop the flag."""
    old = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--block-size", "7", "--vllm-version", "0.11.0"], 2)
    assert old.stderr == "Error: argument --block-size: invalid choice: 7 (choose from 1, 8, 16, 32, 64, 128)\n"
    invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--block-size", "256", "--vllm-version", "0.11.0"], 2)
    assert _explained("Qwen/Qwen3-8B", "--gpu", "h100", "--block-size", "256", "--vllm-version", "0.11.1")["fits"]
    perf = ["perf", "Qwen/Qwen3-8B", "--gpu", "h100", "--input-len", "10", "--output-len", "10"]
    assert "invalid choice: 7" in invoke([*perf, "--block-size", "7", "--vllm-version", "0.11.0"], 2).stderr
    new = _explained("Qwen/Qwen3-8B", "--gpu", "h100", "--block-size", "7")
    assert (new["fits"], new["error_kinds"]) == (False, ["block-size-unsupported"])
    assert new["errors"][0].startswith("No valid attention backend found for cuda with block_size=7.")
    for fine in ("16", "48", "256"):
        assert _explained("Qwen/Qwen3-8B", "--gpu", "h100", "--block-size", fine)["error_kinds"] == [], fine
    # not judged where the backends were not read: an AMD GPU, an attention-free (pure Mamba) model
    assert _explained("Qwen/Qwen3-8B", "--gpu", "mi300x", "--block-size", "7")["error_kinds"] == []
    assert _explained("tiiuae/falcon-mamba-7b", "--gpu", "h100", "--block-size", "7")["error_kinds"] == []
    out = invoke(["check", "--gpu", "h100", "vllm serve Qwen/Qwen3-8B --block-size 24"], 1).stdout
    assert "FAIL <argument> (command): No valid attention backend found for cuda with block_size=24." in out
    assert "  fix: remove --block-size (vLLM then picks one; " in out


# vLLM's own docs, docs/deployment/docker.md ("Persist the compile cache across containers"), vllm-project/vllm at
# 02319794a1415e663baaf6de2f8197f795bd8c03, verbatim: the image's entrypoint serves the model named after it
DOCS_DOCKER_RUN = """docker run --rm --gpus all \\
    -v ~/.cache/huggingface:/root/.cache/huggingface \\
    -v vllm-cache:/root/.cache/vllm \\
    -p 8000:8000 \\
    vllm/vllm-openai:latest \\
    meta-llama/Llama-3.1-8B-Instruct"""
BRIEF_DOCKER_RUN = (
    "docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.11.0 --model Qwen/Qwen3-8B --max-model-len 8192"
)
API_SERVER = """python -m vllm.entrypoints.openai.api_server \\
  --model Qwen/Qwen3-8B \\
  --max-model-len 8192"""


def shell_words(text: str) -> list[str]:
    """The words a POSIX shell hands over after `--`: backslash-newline removed (sh(1), 2.2.1: a line continuation),
    then split and unquoted (shlex alone keeps the newline as a word)."""
    return shlex.split(text.replace("\\\n", ""))


def _checked(*args: str) -> dict[str, Any]:
    (server,) = json.loads(invoke(["check", "--gpu", "h100", "--format", "json", *args]).stdout)
    return dict(server)


@pytest.mark.parametrize(
    "pasted", [DOCS_DOCKER_RUN, BRIEF_DOCKER_RUN, API_SERVER, "vllm serve Qwen/Qwen3-8B \\\n  -tp 2"]
)
def test_explain_and_check_take_a_pasted_command_quoted_or_after_dashes(pasted: str) -> None:
    """`explain -- docker run ... vllm/vllm-openai:v0.11.0 --model X` was 'unrecognized arguments: docker run ...'
    and check called each word a missing file; a quoted command's line continuations were unrecognized arguments to
    explain. Both now read the command with check's readers: the same server, the same release (the image tag's),
    the same KV cache, quoted (continuations and all) or as the words the shell passes after `--`."""
    words = shell_words(pasted)
    quoted_doc = _explained("--gpu", "h100", pasted)
    assert _explained("--gpu", "h100", "--", *words) == quoted_doc
    server = _checked(pasted)
    assert _checked("--", *words) == server
    assert (server["verdict"], server["vllm_version"]) == ("pass", quoted_doc["vllm_version"])
    assert server["figures"]["kv_cache_tokens"] == quoted_doc["kv_cache_tokens"]


def test_a_pasted_docker_run_is_explained_at_its_images_release() -> None:
    doc = _explained("--gpu", "h100", "--", *shell_words(BRIEF_DOCKER_RUN))
    assert (doc["model"], doc["vllm_version"], doc["max_model_len"]) == ("Qwen/Qwen3-8B", "0.11.0", 8192)
    given = _explained("--gpu", "h100", "--vllm-version", "0.33.0", BRIEF_DOCKER_RUN)  # the option wins
    assert given["vllm_version"] == "0.33.0"
    docs = _explained("--gpu", "h100", DOCS_DOCKER_RUN)  # `latest` names no release: the default
    assert (docs["model"], docs["vllm_version"]) == ("meta-llama/Llama-3.1-8B-Instruct", "0.33.0")


@pytest.mark.parametrize(
    ("pasted", "error"),
    [
        (
            "docker run --gpus all ubuntu:24.04 bash",
            "Error: 'docker run --gpus all ubuntu:24.04 bash' does not start vLLM's server (`vllm serve ...`, "
            "`python -m vllm.entrypoints.openai.api_server ...`, or `docker run` of a vLLM image)\n",
        ),
        (
            "vllm serve $MODEL --max-model-len 8192",
            "Error: the command uses $MODEL, which is not set here: write its value\n",
        ),
    ],
)
def test_a_pasted_command_explain_cannot_read_is_one_line(pasted: str, error: str) -> None:
    assert invoke(["explain", "--gpu", "h100", pasted], 2).stderr == error
