"""The plan document: written and read by one definition, validated once, every field typed and bounded;
tampered plans rejected (render) or failed (check); the vllm-plan.io annotations encoded and decoded in one
place."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from recommender.documents import PlanDocumentError, dump, plan_annotations, plan_from_data, plan_from_text
from recommender.documents.plan import Plan
from recommender.documents.schema import SchemaError, count, load, text
from recommender.memory.engine import VllmVersion

from .conftest import ROOT, invoke

EXAMPLE_PLANS = sorted((ROOT / "examples").glob("*/plan.yaml"))

# Values no field accepts: control characters and what YAML, systemd or a shell read as a line break.
LINE_BREAKING = ["8192\nExecStartPre=/bin/sh -c evil", "x\r\n[Service]", "a\u2028b: c", "a\u2029b", "a\x85b", "\x00"]


@pytest.fixture(scope="module")
def plan_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "qwen2.5-7b-on-rtx4090" / "plan.yaml").read_text())
    return data


def _leaves(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every scalar, with the paths the validator reports."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, node


def _set(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    node: Any = out
    for part in parts[:-1]:
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    last = parts[-1]
    node[int(last[1:-1]) if last.startswith("[") else last] = value
    return out


def _error(data: object) -> str:
    with pytest.raises(PlanDocumentError) as info:
        plan_from_data(data, "deploy/plan.yaml")
    message = str(info.value)
    assert "\n" not in message and message.startswith("deploy/plan.yaml")
    return message


@pytest.mark.parametrize("path", EXAMPLE_PLANS, ids=lambda p: p.parent.name)
def test_writer_and_reader_share_one_definition(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    plan = plan_from_data(data, str(path))
    assert dump(plan) == data
    assert yaml.safe_dump(dump(plan), sort_keys=False, width=120) == path.read_text()


def test_recommend_json_is_the_plan_document() -> None:
    out = invoke(["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "l4", "--concurrency", "8", "--format", "json"])
    data = json.loads(out.stdout)
    assert dump(plan_from_data(data, "-")) == data


def test_every_field_refuses_line_breaks_and_wrong_types(plan_data: dict[str, Any]) -> None:
    """Hostile values in every field: rejected, with the file and the field named on one line."""
    leaves = list(_leaves(plan_data))
    assert len(leaves) > 100
    for path, value in leaves:
        if path in ("apiVersion", "kind"):
            continue
        wrong: list[Any] = [*LINE_BREAKING[::2], [value], {"a": value}]
        if isinstance(value, bool):
            wrong += [1, "true"]
        elif isinstance(value, int):
            wrong += [-3, True, 60.7, str(value), 10**30]
        elif isinstance(value, float):
            wrong += [float("nan"), float("inf"), True, str(value), -1e300]
        for bad in wrong:
            message = _error(_set(plan_data, path, bad))
            assert f": {path}: " in message, (path, bad, message)


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        ("replicas", -3, "must be between 1 and 10,000"),
        ("replicas", 10**7, "must be between 1 and 10,000"),
        ("tensor_parallel_size", 0, "must be between 1 and 1,024"),
        ("inputs.objective", "bogus", "is not one of min-gpus"),
        ("inputs.concurrency", 60.7, "expected an integer"),
        ("inputs.concurrency", True, "expected an integer"),
        ("inputs.vllm_version", 0.33, "expected a string (quote it)"),
        ("inputs.vllm_version", "9.1.0", "supported versions are 0.4 to 0.33"),
        ("prediction.gpu_memory_utilization", 1.5, "must be above 0 and at most 1"),
        ("kv_cache_dtype", "fp9", "is not one of auto"),
        ("gpus", 2, "is not replicas x TP x PP x DP = 1"),
        ("prediction.max_model_len", 4096, "disagrees with the chosen command"),
        ("model", "Qwen/Qwen2.5-7B-Instruct", "disagrees with the command"),
        ("command[6]", "nan", "gpu_memory_utilization nan is not in (0, 1]"),
        ("command[4]", "0.92", "kv_cache_dtype '0.92' is not one of vLLM's choices"),
        ("command[5]", "--quantization", "quantization '0.92' is not one of vLLM's choices"),
        ("command[8]", "1e9", "argument --max-model-len: invalid human_readable_int_or_auto value: '1e9'"),
        ("command[0]", "python", "must start with vllm, serve, MODEL"),
    ],
)
def test_wrong_answers_are_refused(plan_data: dict[str, Any], path: str, value: Any, problem: str) -> None:
    message = _error(_set(plan_data, path, value))
    assert problem in message, message


def test_unknown_missing_and_foreign_documents(plan_data: dict[str, Any]) -> None:
    assert "prediction.bogus: unknown field" in _error(_set(plan_data, "prediction.bogus", 1))
    data = copy.deepcopy(plan_data)
    del data["prediction"]["kv_cache_tokens"]
    assert "prediction.kv_cache_tokens: missing" in _error(data)
    message = _error(_set(plan_data, "apiVersion", "vllm-plan/v2"))
    assert "apiVersion 'vllm-plan/v2' is not supported" in message and "reads vllm-plan/v1" in message
    assert "not a vllm-plan plan document" in _error({"kind": "Deployment", "apiVersion": "apps/v1"})
    assert "not a vllm-plan plan document" in _error(["a list"])
    assert "not a vllm-plan plan document" in _error(_set(plan_data, "apiVersion", 1))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[" * 5000, "nested too deeply"),
        ("kind: Plan\napiVersion: vllm-plan/v1\nsearched: " + "9" * 5000, "not a plan document"),
        ("kind: [unclosed", "not valid YAML or JSON at line 1"),
        ("just text", "not a vllm-plan plan document"),
    ],
)
def test_bad_files(text: str, problem: str) -> None:
    with pytest.raises(PlanDocumentError, match=re.escape(problem)):
        plan_from_text(text, "plan.yaml")


def test_render_cli_refuses_bad_plans(plan_data: dict[str, Any], tmp_path: Path) -> None:
    cases = {
        "injected.yaml": yaml.safe_dump(_set(plan_data, "prediction.kv_cache_tokens", LINE_BREAKING[0])),
        "binary.yaml": b"\xff\xfe\x00plan",
        "negative.json": json.dumps(_set(plan_data, "replicas", -3)),
    }
    with (tmp_path / "huge.yaml").open("wb") as fh:
        fh.truncate((64 << 20) + 1)  # sparse: 64 MiB and a byte, read but never stored
    cases["huge.yaml"] = b""
    for name, content in cases.items():
        path = tmp_path / name
        if content:
            path.write_bytes(content if isinstance(content, bytes) else content.encode())
        result = invoke(["render", str(path), "-o", str(tmp_path / "out")], exit_code=2)
        assert result.stderr.count("\n") == 1 and str(path) in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_check_fails_tampered_and_refuses_malformed_plans(plan_data: dict[str, Any], tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(plan_data, sort_keys=False))
    invoke(["check", str(good)])
    overstated = tmp_path / "overstated.yaml"
    overstated.write_text(yaml.safe_dump(_set(plan_data, "prediction.kv_cache_tokens", 900_000), sort_keys=False))
    out = invoke(["check", str(overstated)], exit_code=1).stdout
    assert "claims 900,000 KV-cache tokens but these flags give 495,360" in out and "fix:" not in out
    understated = tmp_path / "understated.yaml"
    understated.write_text(yaml.safe_dump(_set(plan_data, "prediction.max_concurrency", 50.0), sort_keys=False))
    out = invoke(["check", str(understated), "--format", "json"]).stdout
    assert "stale plan" in json.loads(out)[0]["warnings"][-1]
    injected = tmp_path / "injected.yaml"
    injected.write_text(yaml.safe_dump(_set(plan_data, "inputs.vllm_version", LINE_BREAKING[0])))
    assert "inputs.vllm_version" in invoke(["check", str(injected)], exit_code=2).stderr
    folder = tmp_path / "deploy"
    folder.mkdir()
    (folder / "plan.yaml").write_text(injected.read_text())
    assert "malformed plan document" in invoke(["check", str(folder)], exit_code=2).stderr


def test_annotations_round_trip_and_malformed_values(plan_data: dict[str, Any]) -> None:
    plan = plan_from_data(plan_data, "plan.yaml")
    claimed = plan_annotations.from_plan(plan, tool_version="0.1.0", replicas=3)
    raw = dict(plan_annotations.encode(claimed))
    assert tuple(raw) == plan_annotations.NAMES[:-1]  # a memory plan has no target-users: left out, not empty
    assert plan_annotations.decode(raw) == (claimed, ())
    raw["vllm-plan.io/replicas"] = "-3"
    raw["vllm-plan.io/kv-cache-tokens"] = "1e30"
    raw["vllm-plan.io/target-context"] = ""
    decoded, problems = plan_annotations.decode(raw)
    assert decoded.replicas is None and decoded.kv_cache_tokens is None and decoded.target_context is None
    assert problems == (
        "annotation vllm-plan.io/kv-cache-tokens: '1e30' is not a positive integer in range",
        "annotation vllm-plan.io/replicas: '-3' is not a positive integer in range",
    )


def test_drift_is_compared_only_on_the_planned_setup(plan_data: dict[str, Any]) -> None:
    from recommender.catalog import load_gpus
    from recommender.gpu_names import resolve_gpu
    from recommender.memory.budget import explain
    from recommender.memory.engine import EngineFlags
    from recommender.serve_args import parse_serve_argv
    from recommender.sources.resolve import resolve_model

    plan = plan_from_data(_set(plan_data, "prediction.kv_cache_tokens", 900_000), "plan.yaml")
    cmd = parse_serve_argv(list(plan.best.command))
    values = dict(cmd.values)
    assert cmd.model is not None
    model = resolve_model(cmd.model)
    gpu = resolve_gpu("rtx4090", load_gpus())
    version = VllmVersion.parse("0.33.0")
    e = explain(model, gpu, EngineFlags(**values), version)
    claimed = plan_annotations.from_plan(plan, tool_version="x")
    fail, warn = plan_annotations.prediction_drift(claimed, e, gpu_key=gpu.key, version=version)
    assert len(fail) == 1 and not warn
    assert plan_annotations.prediction_drift(claimed, e, gpu_key="h100-sxm", version=version) == ([], [])
    older = VllmVersion.parse("0.19.0")
    assert plan_annotations.prediction_drift(claimed, e, gpu_key=gpu.key, version=older) == ([], [])


def test_schema_reader_on_its_own() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True, kw_only=True)
    class Doc:
        n: int = count(1, 10)
        name: str = text(8, pattern=r"[a-z]+")
        note: str | None = text(default=None)

    assert load(Doc, {"n": 3, "name": "abc"}) == Doc(n=3, name="abc")
    for data, where in (
        ({"n": 11, "name": "abc"}, "n"),
        ({"n": 1, "name": "ABC"}, "name"),
        ({"n": 1, "name": "abcdefghi"}, "name"),
        ({"n": 1, "name": "abc", "note": 5}, "note"),
        ({"n": 1}, "name"),
    ):
        with pytest.raises(SchemaError) as info:
            load(Doc, data)
        assert info.value.path == where
    assert isinstance(Plan.__dataclass_fields__["best"].metadata["flatten"], bool)


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4", "--gpu", "b200", "--concurrency", "16"],
        ["--model", "google/gemma-3-27b-it", "--gpu", "l40s", "--gpus-per-node", "2", "--context", "16k"],
    ],
    ids=["nvfp4-moe", "multimodal"],
)
def test_recommended_plans_of_other_shapes_read_back(args: list[str]) -> None:
    data = json.loads(invoke(["recommend", *args, "--format", "json"]).stdout)
    assert dump(plan_from_data(data, "-")) == data


def test_data_parallel_engines_count_their_gpus(plan_data: dict[str, Any]) -> None:
    """An engine with --data-parallel-size holds TP x PP x DP GPUs: the plan says so and render requests them."""
    from recommender.render.engine import render
    from recommender.render.options import RenderOptions

    data = _set(plan_data, "command", [*plan_data["command"], "--data-parallel-size", "2"])
    assert "is not replicas x TP x PP x DP = 2" in _error(data)
    data = _set(_set(_set(data, "gpus", 2), "prediction.data_parallel_size", 2), "prediction.gpus", 2)
    plan = plan_from_data(data, "plan.yaml")
    assert plan.best.gpus_per_engine == 2
    files, _ = render(plan, ("k8s", "systemd"), RenderOptions(name="v"), tool_version="t")
    assert 'nvidia.com/gpu: "2"' in files["kubernetes.yaml"]
    assert "Environment=CUDA_VISIBLE_DEVICES=0,1" in files["v.service"]
    assert "disagrees with the chosen command (2)" in _error(_set(data, "prediction.data_parallel_size", 1))
