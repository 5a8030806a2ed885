"""Hostile and careless input met by a new user on a fresh machine (task H51): every problem is one line that
names the file or value at fault, with a documented exit code."""

from __future__ import annotations

import errno
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from huggingface_hub import constants

from recommender import perf_profile
from recommender.cli import cli

from .conftest import ROOT, invoke


def test_a_compose_file_with_a_bad_gpu_count_is_named_in_a_folder_run(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(
        "services:\n  a:\n    image: vllm/vllm-openai\n    command: [--model, Qwen/Qwen3-8B]\n"
        "    deploy: {resources: {reservations: {devices: [{driver: nvidia, count: -3, capabilities: [gpu]}]}}}\n"
    )
    (tmp_path / "serve.sh").write_text("vllm serve Qwen/Qwen3-8B\n")
    out = invoke(["check", str(tmp_path), "--gpu", "h100"], 4).stdout
    line = next(x for x in out.splitlines() if "count -3" in x)
    assert f"{tmp_path / 'compose.yaml'}: " in line, out
    alone = invoke(["check", str(tmp_path / "compose.yaml"), "--gpu", "h100"], 2).stderr
    assert f"{tmp_path / 'compose.yaml'}: " in alone and len(alone.strip().splitlines()) == 1, alone


def test_a_revision_of_a_catalog_model_offline_says_the_catalog_has_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`org/name@rev` goes to the hub (the catalog holds one revision); offline, the line must not suggest the
    very id the user wrote as the "closest" one, but say how to use the catalog's copy."""
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    err = invoke(["show", "Qwen/Qwen3-8B@main"], 4).stderr
    assert len(err.strip().splitlines()) == 1 and "cannot fetch Qwen/Qwen3-8B" in err, err
    assert (
        "the bundled catalog has Qwen/Qwen3-8B (no revision): drop the revision (main) to plan with it offline" in err
    ), err
    assert "closest in the catalog" not in err, err


@pytest.mark.parametrize(
    ("pasted", "card"),
    [
        ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5f1b2c3d-aaaa-bbbb-cccc-0123456789ab)", "NVIDIA A100-SXM4-80GB"),
        ("GPU 3: NVIDIA H100 80GB HBM3 (UUID: GPU-0d1e2f3a-1111-2222-3333-444455556666)", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA GeForce RTX 4060 Ti, 16380 MiB", "rtx4060ti-16gb"),  # the total picks the variant the name shares
        ("NVIDIA GeForce RTX 4060 Ti, 8188 MiB", "rtx4060ti-8gb"),
        ("Tesla V100-SXM2-32GB, 32768 MiB", "Tesla V100-SXM2-32GB"),
    ],
)
def test_a_whole_nvidia_smi_line_names_its_card(pasted: str, card: str) -> None:
    """`nvidia-smi -L` and `nvidia-smi --query-gpu=name,memory.total --format=csv,noheader` lines, pasted whole."""

    def seen(name: str) -> tuple[str, float]:
        out = json.loads(invoke(["explain", "Qwen/Qwen3-0.6B", "--gpu", name, "--format", "json"]).stdout)
        return out["gpu"], out["gpu_total_gib"]

    assert seen(pasted) == seen(card), pasted


def _run_to(stdout: Any, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "recommender", *args], stdout=stdout, stderr=subprocess.PIPE)


def test_output_whose_reader_goes_away_exits_141_silently() -> None:
    """`vllm-plan models | head -1`: click's exit 1 would be `check`'s "a server fails"; 0 would let a cut-off
    `check` pass under `set -o pipefail`. 141 is what the shell reports for a command stopped by SIGPIPE."""
    proc = _run_to(subprocess.PIPE, "models")
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the command has loaded: its first write meets a closed pipe
    assert proc.wait(timeout=60) == 141
    assert proc.stderr.read() == b""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("args", [["gpus"], ["--help"], ["recommend", "--help"]])
def test_output_to_a_full_disk_is_one_line_exit_2(args: list[str]) -> None:
    with Path("/dev/full").open("wb") as full:
        proc = _run_to(full, *args)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert err.decode() == "Error: cannot write the output: No space left on device\n"


@pytest.mark.parametrize("value", ["0.5", "abc"])
def test_a_hub_timeout_huggingface_hub_cannot_read_is_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """huggingface_hub reads HF_HUB_ETAG_TIMEOUT with int() when first imported: `0.5` was an internal error."""
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", value)
    err = invoke(["show", "acme/not-in-the-catalog"], 2).stderr
    said = f"HF_HUB_ETAG_TIMEOUT={value!r}: huggingface_hub reads it as whole seconds (e.g. HF_HUB_ETAG_TIMEOUT=2)"
    assert err == f"Error: {said}\n", err
    assert invoke(["show", "Qwen/Qwen3-8B"]).stdout  # the catalog never asks the hub, so never reads it


def test_calibrate_into_a_place_it_cannot_write_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result = ROOT / "tests" / "data" / "bench_results" / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", str(blocker / "perf-local.yaml"))  # its folder is a file
    err = invoke(["calibrate", str(result), "--gpu", "l40s", "-dp", "4"], 2).stderr
    assert err.startswith(f"Error: cannot write the local calibration {blocker / 'perf-local.yaml'}: "), err
    assert err.count("\n") == 1 and list(tmp_path.iterdir()) == [blocker]


def test_stdin_is_named_once_in_check() -> None:
    err = invoke(["check", "-", "--gpu", "h100"], 2, input="a: [unclosed\n").stderr
    assert err.startswith("Error: <stdin>: ") and "-: <stdin>" not in err, err


@pytest.mark.parametrize("command", ["perf", "recommend"])
def test_a_request_rate_too_low_to_replay_is_refused(command: str) -> None:
    """`--request-rate 1e-300` predicted TTFT 0.0 ms and 196,609 tok/s per user: the arrivals (up to 1e303 s)
    swamp the replay's millisecond steps. One request every 10,000 s is the floor."""
    model = ["Qwen/Qwen3-8B"] if command == "perf" else ["--model", "Qwen/Qwen3-8B"]
    load = ["--gpu", "h100", "--input-len", "100", "--output-len", "10", "--ttft-ms", "100"][
        : 6 if command == "perf" else 8
    ]
    err = invoke([command, *model, *load, "--request-rate", "1e-300"], 2).stderr
    assert "--request-rate must be at least 0.0001, got 1e-300" in err and err.count("\n") == 1, err
    assert invoke([command, *model, *load, "--request-rate", "0.0001", "--format", "json"]).stdout


def test_a_config_json_that_names_no_architecture_says_so(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"a": 1}')
    err = invoke(["show", str(tmp_path)], 2).stderr
    assert err.startswith("Error: config.json names no architecture (no `architectures` list, no `model_type`)"), err
    assert "unknown (model_type '')" not in err


@pytest.mark.usefixtures("offline_hub")
@pytest.mark.parametrize(
    "page",
    ["https://huggingface.co/Qwen/Qwen3-8B/tree/main", "https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json"],
)
def test_a_repository_page_address_is_that_revision(page: str) -> None:
    """A browser's address of a repository page names the repository at a revision (was: not a hub id)."""
    err = invoke(["show", page], 4).stderr
    assert "cannot fetch Qwen/Qwen3-8B" in err and "drop the revision (main)" in err, err


@pytest.fixture
def offline_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def test_a_malformed_file_in_a_folder_is_reported_under_its_own_name(tmp_path: Path) -> None:
    """The YAML reader raised the folder's first problem so far (another file's) for a file with no document:
    `b.yaml: a.yaml: malformed YAML at line 3`, and b's own problem was left for later."""
    (tmp_path / "a.yaml").write_text("a: 1\n---\nb: [\n")  # one document read, one malformed
    (tmp_path / "b.yaml").write_text("x: [\n")  # nothing read
    (tmp_path / "serve.sh").write_text("vllm serve Qwen/Qwen3-8B\n")
    out = invoke(["check", str(tmp_path), "--gpu", "h100"], 4).stdout
    problems = [line for line in out.splitlines() if "malformed YAML" in line]
    for name in ("a.yaml", "b.yaml"):
        own = re.compile(rf"{re.escape(str(tmp_path / name))}: malformed YAML at line \d+$")
        assert sum(bool(own.search(line)) for line in problems) == 1, out
    assert not any(line.count(str(tmp_path)) > 1 for line in problems), out


@pytest.mark.parametrize(
    ("sweep", "said"),
    [
        ("", "--sweep '': a comma-separated list of concurrencies"),  # was: no sweep at all, silently
        ("1,0", "--sweep: a concurrency must be at least 1, got 0"),
        ("99999999999999999999999", "--sweep: a concurrency must be at most 1,073,741,824"),  # as --max-concurrency
        ("1.5", "--sweep: a concurrency '1.5' is not a whole number"),
        (",".join(str(i) for i in range(1, 3001)), "--sweep: at most 64 concurrencies, got 3,000"),  # 25 s of replays
    ],
)
def test_sweep_values_are_bounded_as_max_concurrency_is(sweep: str, said: str) -> None:
    load = ["--gpu", "h100", "--input-len", "100", "--output-len", "10"]
    err = invoke(["perf", "Qwen/Qwen3-8B", *load, "--sweep", sweep], 2).stderr
    assert err.startswith(f"Error: {said}") and err.count("\n") == 1, err


def test_calibrate_on_a_full_disk_leaves_nothing_behind(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    result = ROOT / "tests" / "data" / "bench_results" / "nerdalert-llama-3.2-3b-4xl40s-10qps.json"
    local = tmp_path / "cfg" / "perf-local.yaml"
    monkeypatch.setenv("VLLM_PLAN_PERF_LOCAL", str(local))

    def full_disk(*_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(perf_profile.yaml, "safe_dump", full_disk)
    err = invoke(["calibrate", str(result), "--gpu", "l40s", "-dp", "4"], 2).stderr
    assert err == f"Error: cannot write the local calibration {local}: No space left on device\n", err
    assert list(local.parent.iterdir()) == []  # no .perf-local.*.yaml left half-written


_TEMPLATE_POD = (
    "apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\nparameters:\n"
    "- {name: GPUS, value: 'GPU_COUNT'}\nobjects:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n  spec:\n"
    "    containers:\n    - name: c\n      image: vllm/vllm-openai\n      args: [--model, Qwen/Qwen3-8B]\n"
    "      resources: {limits: {nvidia.com/gpu: '${{GPUS}}'}}\n"
)
_COMPOSE_COUNT = (
    "services:\n  a:\n    image: vllm/vllm-openai\n    command: [--model, Qwen/Qwen3-8B]\n"
    "    gpus: [{driver: nvidia, count: 'GPU_COUNT'}]\n"
)


@pytest.mark.parametrize(
    ("name", "text", "count", "said"),
    [
        # was exit 70: int() refuses a string of more than 4,300 digits, which str.isdigit() let through
        ("t.yaml", _TEMPLATE_POD, "9" * 5000, "nvidia.com/gpu (or MIG devices): 5,000 digits is not a number of GPUs"),
        ("compose.yaml", _COMPOSE_COUNT, "9" * 5000, "reservations.devices count: 5,000 digits"),
        # was exit 70: '²' is a digit to str.isdigit() and not to int()
        ("compose.yaml", _COMPOSE_COUNT, "²", "deploy.resources.reservations.devices count '²' is not a whole number"),
        ("t.yaml", _TEMPLATE_POD, "²", "nvidia.com/gpu (or MIG devices): '²' is not a whole number of GPUs"),
    ],
)
def test_a_gpu_count_int_cannot_read_is_one_line(tmp_path: Path, name: str, text: str, count: str, said: str) -> None:
    path = tmp_path / name
    path.write_text(text.replace("GPU_COUNT", count), encoding="utf-8")
    err = invoke(["check", str(path), "--gpu", "h100"], 2).stderr
    assert err.startswith(f"Error: {path}") and said in err and err.count("\n") == 1, err[:500]


_EXTENDS_SERVE = "    image: vllm/vllm-openai\n    command: [--model, Qwen/Qwen3-8B]\n"


@pytest.mark.parametrize(
    ("files", "said"),
    [
        (  # was: "nested more than 8 deep"
            {
                "compose.yaml": f"services:\n  a:\n    extends: {{file: b.yaml, service: b}}\n{_EXTENDS_SERVE}",
                "b.yaml": "services:\n  b:\n    extends: {file: compose.yaml, service: a}\n",
            },
            "`extends` comes back to service 'b': a circular reference Compose refuses",
        ),
        (
            {"compose.yaml": f"services:\n  a:\n    extends: a\n{_EXTENDS_SERVE}"},
            "`extends` comes back to service 'a': a circular reference Compose refuses",
        ),
        (  # was: the service as written, silently
            {"compose.yaml": f"services:\n  a:\n    extends: zzz\n{_EXTENDS_SERVE}"},
            "`extends` names service 'zzz', which this file does not define",
        ),
        (
            {
                "compose.yaml": f"services:\n  a:\n    extends: {{file: b.yaml, service: zzz}}\n{_EXTENDS_SERVE}",
                "b.yaml": "- not a compose file\n",
            },
            "`extends` names service 'zzz', which b.yaml does not define",
        ),
        (  # was: str(['x']) looked up as a path
            {"compose.yaml": f"services:\n  a:\n    extends: {{file: [x], service: b}}\n{_EXTENDS_SERVE}"},
            "`extends` file must be a path, not list",
        ),
    ],
)
def test_an_extends_compose_refuses_is_one_line(tmp_path: Path, files: dict[str, str], said: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    err = invoke(["check", str(tmp_path / "compose.yaml"), "--gpu", "h100"], 2).stderr
    assert err == f"Error: {tmp_path / 'compose.yaml'} (service/a): {said}\n", err


@pytest.mark.parametrize(("base", "read"), [("../outside.yaml", False), ("inside.yaml", True)])
def test_extends_reads_no_file_outside_the_checked_folder(tmp_path: Path, base: str, read: bool) -> None:
    """A base outside the folder checked is not read: the service is not evaluated, and says why (was: judged as
    written, "no model in the command")."""
    (tmp_path / "in").mkdir()
    base_text = "services:\n  c:\n    image: vllm/vllm-openai\n    command: [--model, Qwen/Qwen3-8B]\n"
    (tmp_path / "outside.yaml").write_text(base_text)
    (tmp_path / "in" / "inside.yaml").write_text(base_text)
    compose = tmp_path / "in" / "compose.yaml"
    compose.write_text(f"services:\n  a:\n    extends: {{file: {base}, service: c}}\n    image: vllm/vllm-openai\n")
    out = invoke(["check", str(compose), "--gpu", "h100"], 0 if read else 4).stdout
    assert "no model in the command" not in out, out
    said = "it extends service c of ../outside.yaml, outside the folder of the file checked: not read"
    assert (said not in out) is read, out


@pytest.mark.parametrize(
    ("parameters", "said"),
    [
        ("  parameters: {GPUS: '1'}\n", "`parameters` must be a list of {name, value} mappings"),  # was: ignored
        ("  parameters: [7]\n", "parameters[0] needs a `name` of letters, digits and _"),
        ("  parameters: [{name: 'GP US$', value: '1'}]\n", "parameters[0] needs a `name` of letters, digits and _"),
        ("  parameters: [{name: 5, value: '1'}]\n", "parameters[0] needs a `name` of letters, digits and _"),
        # was: Python's str() of the mapping, "{'a': 1}", put in place of ${GPUS}
        ("  parameters: [{name: GPUS, value: {a: 1}}]\n", "parameter GPUS: `value` must be a string, not dict"),
    ],
)
def test_template_parameters_oc_refuses_are_one_line(tmp_path: Path, parameters: str, said: str) -> None:
    path = tmp_path / "t.yaml"
    head, _, objects = _TEMPLATE_POD.partition("parameters:\n- {name: GPUS, value: 'GPU_COUNT'}\n")
    path.write_text(head + parameters.removeprefix("  ") + objects)
    err = invoke(["check", str(path), "--gpu", "h100"], 2).stderr
    assert err == f"Error: {path} (Template/t): {said}\n", err


_KAITO = "apiVersion: kaito.sh/v1beta1\nkind: Workspace\nmetadata: {name: w}\nresource: {instanceType: Standard_NC24ads_A100_v4}\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [  # each was "no vLLM server found", which blamed the file's content rather than its shape
        ("apiVersion: v1\nkind: List\nitems: [1, {kind: Pod}]\n", "(List): items[0] (int) is not a Kubernetes object"),
        (
            "apiVersion: template.openshift.io/v1\nkind: Template\nmetadata: {name: t}\nobjects: [x]\n",
            "(Template/t): objects[0] (str) is not a Kubernetes object",
        ),
        (_KAITO + "inference: {template: [1]}\n", "(Workspace/w): inference.template must be a pod template"),
        (_KAITO + "inference: {template: {spec: 5}}\n", "(Workspace/w): inference.template must be a pod template"),
        (
            _KAITO + "inference: {template: {spec: {containers: {a: 1}}}}\n",
            "(Workspace/w): inference.template must be a pod template (a mapping with a spec.containers list)",
        ),
    ],
)
def test_a_list_template_or_workspace_of_the_wrong_shape_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    err = invoke(["check", str(path), "--gpu", "h100"], 2).stderr
    assert err.startswith(f"Error: {path} {said}") and err.count("\n") == 1, err


@pytest.mark.parametrize(
    ("release", "task", "choices"),
    [  # v0.6.4 / v0.7.2 / v0.10.0 tags: arg_utils.py's --task takes choices=get_args(TaskOption), config.py's Literal
        ("0.10.0", "frobnicate", "'auto', 'generate', 'embedding', 'embed', 'classify', 'score', 'reward', "),
        ("0.6.4", "embed", "'auto', 'generate', 'embedding')"),  # 'embed' arrived in 0.6.5
        ("0.7.2", "transcription", "'classify', 'score', 'reward')"),  # 'transcription' arrived in 0.7.3
    ],
)
def test_a_task_the_release_does_not_know_is_refused_as_its_parser_does(release: str, task: str, choices: str) -> None:
    cmd = ["vllm", "serve", "Qwen/Qwen3-8B", "--task", task]
    out = invoke(["check", "--vllm-version", release, "--gpu", "h100", "--", *cmd], 1).stdout
    said = f"vLLM {release} refuses the command line: argument --task: invalid choice: '{task}' (choose from "
    assert said in out and choices in out, out


def test_quoted_and_clipped_name_a_long_value_by_its_start_and_length() -> None:
    from recommender.quoting import clipped, quoted

    assert quoted("abc") == "'abc'" and clipped("abc") == "abc"  # short: as written
    assert quoted("x" * 81) == "'" + "x" * 80 + "...' (81 characters)"  # 80 shown, then how long it is
    assert clipped("y" * 1_000_000, 4) == "yyyy... (1,000,000 characters)"
    assert quoted(12345, 3) == "123... (5 characters)"  # not a string: its repr, clipped


@pytest.mark.parametrize(
    ("line", "said"),
    [  # a value of a million characters: its start and its length, found in well under a second (was: quadratic
        # string building in the shell reader, 100 s for 2 MB, then the whole value echoed)
        ("vllm serve Qwen/Qwen3-8B --max-model-len " + "x" * 1_000_000, "value: 'xxxx"),
        # a model id longer than any hub id: no closest-id search (difflib is quadratic; was 24 s for 20,000)
        ("vllm serve " + "Q" * 1_000_000 + " --tensor-parallel-size 1", "model 'QQQQ"),
    ],
)
def test_a_huge_value_in_a_script_is_one_short_line(tmp_path: Path, line: str, said: str) -> None:
    path = tmp_path / "serve.sh"
    path.write_text(line + "\n")
    result = CliRunner().invoke(cli, ["check", str(path), "--gpu", "h100"])
    assert result.exit_code in (1, 4), result.output[:500]
    assert said in result.output and "(1,000,000 characters)" in result.output, result.output[:500]
    assert max(len(x) for x in result.output.splitlines()) < 600


def test_a_yaml_file_nested_past_the_recursion_limit_is_one_line(tmp_path: Path) -> None:
    """100,000 `[`: check's Helm-chart probe read the file's top keys with yaml.safe_load, which recursed past
    Python's limit (exit 70, internal error); every YAML check reads now goes through safe_load's bounds."""
    deep = tmp_path / "deep.yaml"
    deep.write_text("[" * 100_000 + "\n", encoding="utf-8")
    result = invoke(["check", str(deep), "--gpu", "l4"], exit_code=2)
    assert "deep.yaml" in result.stderr and "nested more than" in result.stderr
    assert "internal error" not in result.stderr
