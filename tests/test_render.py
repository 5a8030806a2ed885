"""Rendered artifacts checked with real validators: kubernetes-validate schemas, the kubernetes client's models,
systemd-analyze verify, vLLM's flag table; quoting of hostile input; atomic, protected writes."""

from __future__ import annotations

import errno
import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from recommender.catalog import load_flag_table
from recommender.cli.render_cmd import load_plan
from recommender.documents import plan_from_data
from recommender.errors import InputError
from recommender.memory.engine import VllmVersion
from recommender.render.engine import expand, render
from recommender.render.options import RenderOptions
from recommender.render.output import LocalDisk, write_files
from recommender.serve_args import parse_serve_argv
from recommender.serve_release_errors import strict_errors

from .conftest import invoke

SCENARIOS = {
    "one-gpu": [
        "--model",
        "Qwen/Qwen2.5-7B-Instruct",
        "--gpu",
        "rtx4090",
        "--gpus-per-node",
        "1",
        "--concurrency",
        "60",
        "--context",
        "8192",
    ],
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
    table = load_flag_table()
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
            assert arg in table.options, f"{arg} is not a known vLLM flag"
            assert table.options[arg][0].accepted_in(version), f"{arg} is not accepted by vLLM {version}"
    cmd = parse_serve_argv(argv)
    assert cmd.model == plan["model"] and strict_errors(cmd, version) == []


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


class FailingDisk(LocalDisk):
    """Raises an OSError on the n-th call of one operation (ENOSPC on a write chunk, EIO on a rename)."""

    def __init__(self, operation: str, n: int, code: int) -> None:
        self.operation, self.n, self.code, self.calls = operation, n, code, 0

    def _maybe_fail(self, operation: str) -> None:
        if operation == self.operation:
            self.calls += 1
            if self.calls == self.n:
                raise OSError(self.code, os.strerror(self.code))

    def write_chunk(self, fd: int, data: bytes) -> None:
        self._maybe_fail("write")
        super().write_chunk(fd, data)

    def replace(self, src: Path, dst: Path) -> None:
        self._maybe_fail("replace")
        super().replace(src, dst)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("operation", "code"), [("write", errno.ENOSPC), ("replace", errno.EIO)])
def test_failed_writes_leave_nothing_behind(tmp_path: Path, operation: str, code: int) -> None:
    """Disk full on the n-th write (or a failing rename): the directory is exactly as before, for every n."""
    existing = tmp_path / "deploy"
    write_files({"a.yaml": "old a\n", "b.service": "old b\n"}, existing, force=False)
    before = _tree(tmp_path)
    big = "x" * 200_000  # several write chunks
    new = {"a.yaml": "new a\n", "b.service": big, "c.sh": "#!/bin/sh\n", "d.yaml": big}
    counter = FailingDisk(operation, 0, code)  # never fails: counts the calls a successful write makes
    write_files(new, tmp_path / "scratch", force=True, disk=counter)
    shutil.rmtree(tmp_path / "scratch")
    assert counter.calls >= 4
    for n in range(1, counter.calls + 1):
        for target in (existing, tmp_path / "fresh" / "nested"):
            with pytest.raises(InputError, match="nothing was written") as info:
                write_files(new, target, force=True, disk=FailingDisk(operation, n, code))
            assert os.strerror(code) in str(info.value) and "\n" not in str(info.value)
            assert _tree(tmp_path) == before and not (tmp_path / "fresh").exists(), (n, target)
    write_files(new, existing, force=True)  # and without a failure everything lands
    assert _tree(existing) == {k: v.encode() for k, v in new.items()}


@contextmanager
def _tmpfs(path: Path, options: str) -> Iterator[bool]:
    """A real tmpfs mounted at `path` (root only; False when it cannot be mounted here)."""
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        yield False
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True)
    try:
        yield mounted.returncode == 0
    finally:
        if mounted.returncode == 0:
            subprocess.run(["umount", str(path)], check=True)


def test_read_only_directory_exits_2_and_leaves_nothing(plans: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["one-gpu"]))
    target = tmp_path / "ro"
    with _tmpfs(target, "ro,size=1m") as mounted:
        if not mounted:
            if os.geteuid() == 0:
                pytest.skip("root ignores permissions and tmpfs cannot be mounted here")
            target.chmod(0o555)
        for out in (target, target / "sub"):
            result = invoke(["render", str(plan_file), "-o", str(out)], exit_code=2)
            assert result.stderr.count("\n") == 1 and "nothing was written" in result.stderr, result.stderr
            assert not list(target.iterdir())
        if not mounted:
            target.chmod(0o755)


def test_full_disk_exits_2_and_leaves_nothing(plans: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plans["one-gpu"]))
    target = tmp_path / "small"
    with _tmpfs(target, "size=16k") as mounted:
        if not mounted:
            pytest.skip("a small tmpfs cannot be mounted here (test_failed_writes_leave_nothing_behind injects ENOSPC)")
        (target / "keep.txt").write_text("already here\n")
        result = invoke(["render", str(plan_file), "-o", str(target / "deploy")], exit_code=2)
        assert "No space left on device; nothing was written" in result.stderr, result.stderr
        assert [p.name for p in target.iterdir()] == ["keep.txt"]


def test_templates_place_exactly_their_context() -> None:
    """Each template's variables are its context's fields (a renamed field fails here, not at render time),
    and the engine places nothing but numbers and escaped text."""
    import dataclasses

    import jinja2.meta

    from recommender.render import context as c
    from recommender.render.engine import TEMPLATES, environment
    from recommender.render.escape import yaml_str

    env = environment()
    assert env.loader is not None
    contexts = {
        "command": c.ScriptContext,
        "systemd": c.UnitContext,
        "k8s": c.KubernetesContext,
        "lws": c.KubernetesContext,
        "helm": c.HelmContext,
        "compose": c.ComposeContext,
    }
    used: dict[type, set[str]] = {}
    for artifact, cls in contexts.items():
        source = env.loader.get_source(env, TEMPLATES[artifact])[0]
        fields = {f.name for f in dataclasses.fields(cls)}
        # a field named like a Jinja global (namespace) shadows it and is not reported as undeclared
        names = jinja2.meta.find_undeclared_variables(env.parse(source)) | {
            n for n in fields & set(env.globals) if n in source
        }
        assert names <= fields, f"{TEMPLATES[artifact]} uses {names - fields}"
        used.setdefault(cls, set()).update(names)
    for cls, names in used.items():
        assert names == {f.name for f in dataclasses.fields(cls)}, f"{cls.__name__} has unused fields"
    template = env.from_string("{{ x }}")
    assert template.render(x=yaml_str("a: b")) == '"a: b"' and template.render(x=3) == "3"
    for raw in ("a: b", True, None, ["x"]):
        with pytest.raises(TypeError, match="unescaped"):
            template.render(x=raw)
