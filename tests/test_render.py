"""Rendered artifacts checked with real validators: kubernetes-validate schemas, the kubernetes client's models,
systemd-analyze verify, vLLM's flag table; quoting of hostile input; atomic, protected writes."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from recommender.cli.render_cmd import load_plan
from recommender.documents import plan_from_data
from recommender.errors import InputError
from recommender.memory.engine import VllmVersion
from recommender.render.context import RenderOptions
from recommender.render.engine import expand, render
from recommender.render.output import write_files
from recommender.resources import profiles_dir
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

SCENARIOS = {
    "one-gpu": ["--model", "Qwen/Qwen2.5-7B-Instruct", "--gpu", "rtx4090", "--concurrency", "60", "--context", "8192"],
    "tp4": [
        "--model",
        "meta-llama/Llama-3.1-70B-Instruct",
        "--gpu",
        "h100",
        "--gpus-per-node",
        "4",
        "--concurrency",
        "32",
        "--context",
        "16384",
    ],
    "replicas": [
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--gpu",
        "h100",
        "--gpus-per-node",
        "8",
        "--concurrency",
        "300",
        "--context",
        "8192",
        "--no-quantization",
        "--no-fp8-kv",
    ],
    "two-node": [
        "--model",
        "meta-llama/Meta-Llama-3.1-405B",
        "--gpu",
        "h100",
        "--gpus-per-node",
        "8",
        "--nodes",
        "2",
        "--context",
        "32768",
        "--no-quantization",
    ],
}


@pytest.fixture(scope="module")
def plans() -> dict[str, dict[str, Any]]:
    return {k: json.loads(invoke(["recommend", *args, "--format", "json"]).stdout) for k, args in SCENARIOS.items()}


def _render(plan: dict[str, Any], emit: str = "all", **opts: Any) -> dict[str, str]:
    files, _ = render(plan_from_data(plan, "plan.json"), expand(emit), RenderOptions(**opts), tool_version="test")
    return files


def _docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def test_scenarios_cover_the_shapes(plans: dict[str, dict[str, Any]]) -> None:
    assert plans["one-gpu"]["gpus"] == 1
    assert plans["tp4"]["tensor_parallel_size"] == 4
    assert plans["replicas"]["replicas"] > 1
    assert plans["two-node"]["pipeline_parallel_size"] == 2 and plans["two-node"]["tensor_parallel_size"] == 8


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_kubernetes_manifests_validate(plans: dict[str, dict[str, Any]], scenario: str) -> None:
    from kubernetes.client import ApiClient

    plan = plans[scenario]
    files = _render(plan, "k8s", namespace="llm", runtime_class="nvidia", storage_class="fast")
    ((name, text),) = files.items()
    docs = _docs(text)
    api = ApiClient()
    for doc in docs:
        if doc["kind"] == "LeaderWorkerSet":
            _check_lws(doc, plan)
            continue
        kubernetes_validate.validate(doc, "1.33.0", strict=True)
        model = api.deserialize(json.dumps(doc), f"V1{doc['kind']}", "application/json")
        assert model.metadata.namespace == "llm"
        if doc["kind"] == "Deployment":
            spec = model.spec.template.spec
            container = spec.containers[0]
            gpus = plan["tensor_parallel_size"] * plan["pipeline_parallel_size"]
            assert (
                container.resources.limits["nvidia.com/gpu"]
                == str(gpus)
                == container.resources.requests["nvidia.com/gpu"]
            )
            assert model.spec.replicas == plan["replicas"]
            assert spec.runtime_class_name == "nvidia" and spec.node_selector["nvidia.com/gpu.product"]
            assert {
                p.http_get.path for p in (container.startup_probe, container.readiness_probe, container.liveness_probe)
            } == {"/health"}
            shm = next(v for v in spec.volumes if v.name == "shm")
            assert shm.empty_dir.medium == "Memory"
            assert container.args[0] == plan["model"] and "--port" in container.args
            env = {e.name: e for e in container.env}
            assert env["HF_TOKEN"].value_from.secret_key_ref.name == "hf-token"
            ann = model.metadata.annotations
            assert ann["vllm-plan.io/kv-cache-tokens"] == str(plan["prediction"]["kv_cache_tokens"])
            assert ann["vllm-plan.io/gpu"] == plan["inputs"]["gpu"]
    assert name in ("kubernetes.yaml", "leaderworkerset.yaml")


def _check_lws(doc: dict[str, Any], plan: dict[str, Any]) -> None:
    assert doc["apiVersion"] == "leaderworkerset.x-k8s.io/v1"
    tmpl = doc["spec"]["leaderWorkerTemplate"]
    assert tmpl["size"] == plan["inputs"]["nodes"] == plan["pipeline_parallel_size"]
    from kubernetes.client import ApiClient

    for role in ("leaderTemplate", "workerTemplate"):
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "x", **tmpl[role]["metadata"]},
            "spec": tmpl[role]["spec"],
        }
        kubernetes_validate.validate(pod, "1.33.0", strict=True)
        model = ApiClient().deserialize(json.dumps(pod), "V1Pod", "application/json")
        assert model.spec.containers[0].resources.limits["nvidia.com/gpu"] == str(plan["tensor_parallel_size"])
    leader_cmd = tmpl["leaderTemplate"]["spec"]["containers"][0]["args"][0]
    assert "ray start --head" in leader_cmd and "--pipeline-parallel-size 2" in leader_cmd
    assert "--distributed-executor-backend ray" in leader_cmd
    assert "LWS_LEADER_ADDRESS" in tmpl["workerTemplate"]["spec"]["containers"][0]["args"][0]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_systemd_units_verify(plans: dict[str, dict[str, Any]], scenario: str, tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    fake = tmp_path / "bin" / "vllm"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    if plans[scenario]["inputs"]["nodes"] > 1:
        with pytest.raises(InputError, match="cannot run as systemd on one host"):
            _render(plans[scenario], "systemd", vllm_bin=str(fake))
        return
    files = _render(plans[scenario], "systemd", vllm_bin=str(fake))
    assert len(files) == plans[scenario]["replicas"]
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        assert "HF_TOKEN" not in text.replace("# HF_TOKEN=... lives in this file", "")
        for needle in (
            "After=network-online.target",
            "Wants=network-online.target",
            "Restart=on-failure",
            "StartLimitBurst=",
            "TimeoutStartSec=",
            "LimitNOFILE=",
            "CUDA_VISIBLE_DEVICES=",
            "EnvironmentFile=",
            f"ExecStart={fake}",
        ):
            assert needle in text, needle
    out = subprocess.run(
        [analyze, "verify", *[str(tmp_path / n) for n in files]], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_rendered_flag_exists_in_that_vllm_version(plans: dict[str, dict[str, Any]], scenario: str) -> None:
    table = yaml.safe_load((profiles_dir() / "vllm-flags.yaml").read_text())["flags"]
    plan = plans[scenario]
    version = VllmVersion.parse(plan["inputs"]["vllm_version"])
    if plan["inputs"]["nodes"] > 1:
        lws = _docs(_render(plan, "k8s")["leaderworkerset.yaml"])[0]
        leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["args"][0]
        argv = shlex.split(leader.split("&& exec ", 1)[1])
    else:
        argv = shlex.split(_render(plan, "command")["serve.sh"].split("\nexec ", 1)[1])
    assert argv[:3] == ["vllm", "serve", plan["model"]]
    for arg in argv[3:]:
        if arg.startswith("-"):
            assert arg in table, f"{arg} is not a known vLLM flag"
            entry = table[arg]
            assert VllmVersion.parse(entry["since"]) <= version
            assert "removed" not in entry or version < VllmVersion.parse(entry["removed"])
    assert parse_serve_argv(argv).values["model"] == plan["model"]


def test_helm_values_and_compose(plans: dict[str, dict[str, Any]]) -> None:
    plan = plans["tp4"]
    values = yaml.safe_load(_render(plan, "helm")["values.yaml"])
    spec = values["servingEngineSpec"]["modelSpec"][0]
    assert spec["modelURL"] == plan["model"] and spec["requestGPU"] == 4
    assert spec["vllmConfig"]["tensorParallelSize"] == 4
    assert spec["vllmConfig"]["maxModelLen"] == plan["max_model_len"]
    compose = yaml.safe_load(_render(plans["replicas"], "compose")["compose.yaml"])
    services = compose["services"]
    assert len(services) == plans["replicas"]["replicas"]
    devices = [
        d for s in services.values() for d in s["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]
    ]
    assert len(devices) == len(set(devices)) == plans["replicas"]["gpus"]


def test_replicas_option(plans: dict[str, dict[str, Any]]) -> None:
    deployment = next(
        d for d in _docs(_render(plans["one-gpu"], "k8s", replicas=3)["kubernetes.yaml"]) if d["kind"] == "Deployment"
    )
    assert deployment["spec"]["replicas"] == 3
    assert len(_render(plans["one-gpu"], "systemd", replicas=2)) == 2
    with pytest.raises(InputError, match="--replicas"):
        _render(plans["one-gpu"], "k8s", replicas=0)


def test_output_is_byte_identical_across_runs(plans: dict[str, dict[str, Any]]) -> None:
    assert _render(plans["tp4"]) == _render(plans["tp4"])


HOSTILE = ["my model $(rm -rf /); `id` \"quoted\" 'single'", "x: {a: b} # not a comment - [1]", "50% $HOME ;&| \\"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_values_stay_inert(plans: dict[str, dict[str, Any]], evil: str, tmp_path: Path) -> None:
    plan = json.loads(json.dumps(plans["one-gpu"]))
    plan["model"] = plan["prediction"]["model"] = evil
    plan["command"] = ["vllm", "serve", evil, "--served-model-name", evil, *plan["command"][3:]]
    files = _render(plan, name=evil)
    # Shell: one argument, exactly the value.
    head, command = files["serve.sh"].split("\nexec ", 1)
    assert all(line.startswith("#") for line in head.splitlines()), "a value escaped a comment line"
    argv = shlex.split(command)
    assert argv[2] == evil and argv[4] == evil
    for name in ("kubernetes.yaml", "values.yaml", "compose.yaml"):
        first = _docs(files[name])[0]
        assert set(first) <= {
            "apiVersion",
            "kind",
            "metadata",
            "spec",
            "servingEngineSpec",
            "services",
            "volumes",
            "x-vllm-plan",
        }
    # YAML artifacts: every document parses, and the values come back with `$` doubled where Kubernetes
    # ($(VAR) in container words) and compose (${VAR} anywhere) would expand it.
    deployment = next(d for d in _docs(files["kubernetes.yaml"]) if d["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args[0] == evil.replace("$", "$$") and args[2] == evil.replace("$", "$$")
    assert yaml.safe_load(files["values.yaml"])["servingEngineSpec"]["modelSpec"][0]["modelURL"] == evil.replace(
        "$", "$$"
    )
    compose = yaml.safe_load(files["compose.yaml"])
    cmd = next(iter(compose["services"].values()))["command"]
    assert cmd[0] == evil.replace("$", "$$")  # compose reads $$ as a literal $
    kubernetes_validate.validate(deployment, "1.33.0", strict=True)
    # systemd: $ and % doubled inside a quoted word, so nothing expands.
    unit = next(iter(v for k, v in files.items() if k.endswith(".service")))
    exec_line = next(x for x in unit.splitlines() if x.startswith("ExecStart="))
    assert "\n" not in exec_line and ("$$" in exec_line or "$" not in evil)
    analyze = shutil.which("systemd-analyze")
    if analyze:
        fake = tmp_path / "vllm"
        fake.write_text("#!/bin/sh\n")
        fake.chmod(0o755)
        files = _render(plan, "systemd", name="evil", vllm_bin=str(fake))
        (tmp_path / "evil.service").write_text(files["evil.service"])
        out = subprocess.run(
            [analyze, "verify", str(tmp_path / "evil.service")], capture_output=True, text=True, check=False
        )
        assert out.returncode == 0, out.stderr


def test_bad_render_input(plans: dict[str, dict[str, Any]]) -> None:
    with pytest.raises(InputError, match="--emit"):
        expand("k8s,bogus")
    with pytest.raises(InputError, match="namespace"):
        _render(plans["one-gpu"], namespace="Bad_NS")
    with pytest.raises(InputError, match="namespace"):
        _render(plans["one-gpu"], namespace="default\n")


def test_writes_are_atomic_and_protected(tmp_path: Path) -> None:
    first = write_files({"a.yaml": "one\n", "b.yaml": "two\n"}, tmp_path, force=False)
    assert [s for _, s in first] == ["written", "written"]
    assert [s for _, s in write_files({"a.yaml": "one\n"}, tmp_path, force=False)] == ["unchanged"]
    (tmp_path / "b.yaml").write_text("edited by hand\n")
    with pytest.raises(InputError, match="--force"):
        write_files({"a.yaml": "ONE\n", "b.yaml": "two\n"}, tmp_path, force=False)
    assert (tmp_path / "a.yaml").read_text() == "one\n"  # nothing written when one file is refused
    write_files({"b.yaml": "two\n"}, tmp_path, force=True)
    assert (tmp_path / "b.yaml").read_text() == "two\n"
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind


def test_render_cli_from_saved_plan(tmp_path: Path) -> None:
    invoke(["recommend", *SCENARIOS["one-gpu"], "-o", str(tmp_path / "out"), "--emit", "command"])
    plan_file = tmp_path / "out" / "plan.yaml"
    assert load_plan(plan_file).kind == "Plan"
    out = invoke(["render", str(plan_file), "--emit", "k8s"]).stdout
    assert "kind: Deployment" in out
    result = invoke(["render", str(tmp_path / "out" / "serve.sh")], exit_code=2)
    assert "not a vllm-plan plan document" in result.stderr
