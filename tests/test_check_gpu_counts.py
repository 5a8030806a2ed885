"""How many GPUs, and of which type, a server gets when no plain nvidia.com/gpu limit says it: Slurm's --gres
(sbatch(1)'s name[[:type]:count]), the devices a privileged pod's script makes visible, ROCm's HIP_VISIBLE_DEVICES
and ROCR_VISIBLE_DEVICES. The cases are hand-written in the shapes of the public files of the held-out rounds
(benchmarks/data/check-heldout/roundN, the file named in the round's SOURCES): rounds 15, 16 and 20 (nowls-stack)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.catalog import load_gpus
from recommender.check import jobs
from recommender.check.gpu_sizes import smallest_of_name
from recommender.check.inputs import load_inputs
from recommender.check.slurm_options import gpu_request
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu

from .check_support import found_in, write_file
from .conftest import invoke

# deepaksatna/Agentic-AI-Reasoning-and-Benchmarking-Framework k8s/vllm-privileged.yaml: a privileged Pod requesting
# no nvidia.com/gpu, whose `bash -c` script exports CUDA_VISIBLE_DEVICES=0,1,2,3 and runs the api_server with TP 4
PRIVILEGED = """apiVersion: v1
kind: Pod
metadata: {name: vllm-arbm}
spec:
  containers:
  - name: vllm
    image: nvcr.io/nvidia/pytorch:24.01-py3
    command: ["/bin/bash", "-c"]
    args:
    - |
      export HF_HOME=/mnt/fss/models/hub
      export CUDA_VISIBLE_DEVICES=0,1,2,3
      pip install vllm==0.6.6 --quiet
      python3 -m vllm.entrypoints.openai.api_server \\
        --model nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 \\
        --tensor-parallel-size 4 \\
        --max-model-len 8192
    securityContext: {privileged: true}
    env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
"""


def test_a_privileged_pod_without_a_gpu_request_uses_the_gpus_its_script_makes_visible(tmp_path: Path) -> None:
    (found,) = load_inputs((str(write_file(tmp_path, "pod.yaml", PRIVILEGED)),)).found
    assert found.gpus_per_pod == 4
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "4"


# claireg808/NLP_knowledge_graph run.sh: a Slurm job asking for one GPU of the site's gres.conf type `80g`
SBATCH = """#!/bin/bash
#SBATCH --gres=gpu:80g:1
#SBATCH --mem=100G
#SBATCH --qos=short

module load cuda/12.8
source ds_kg_venv/bin/activate

vllm serve deepseek-ai/DeepSeek-R1-Distill-Qwen-32B --max-model-len 35904
"""


@pytest.mark.parametrize(
    ("gres", "want"),
    [
        ("gpu:80g:1", ("80g", 1)),  # a type that starts with a digit (sbatch(1): `name[[:type]:count]`)
        ("gpu:h100:4", ("h100", 4)),
        ("gpu:2", (None, 2)),
        ("gpu", (None, 1)),  # no count: one
        ("gpu:a100", ("a100", 1)),
        ("mps:100,gpu:l40s:2", ("l40s", 2)),
        ("gpu:a100:2(S:0-1)", ("a100", 2)),  # the sockets, not the request
        ("tmpfs:10G", (None, None)),
    ],
)
def test_slurm_gres_is_read_as_sbatch_documents_it(gres: str, want: tuple[str | None, int | None]) -> None:
    kind, per_node, nodes = gpu_request({"--gres": gres})
    assert (kind, per_node, nodes) == (*want, 1)


def test_a_slurm_gpu_type_named_by_the_site_counts_one_gpu_and_is_named_as_not_a_gpu(tmp_path: Path) -> None:
    assert jobs.sbatch_gpus(SBATCH) == jobs.Gpus(1, 1, "80g")
    path = write_file(tmp_path, "run.sh", SBATCH)
    (found,) = load_inputs((str(path),)).found
    assert (found.gpus_per_pod or found.gpus_total) == 1 and found.gpu_product == "80g"
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated"
    assert "'80g' names no GPU model" in " ".join(r["not_evaluated_because"])
    with pytest.raises(UnknownGpuError, match="'80g' names no GPU model"):
        resolve_gpu("80g", load_gpus())


ROCM = """services:
  vllm:
    image: vllm/vllm-openai-rocm:v0.26.0
    devices: [/dev/kfd, /dev/dri]
    environment:
      {var}: "{value}"
    command: [--model, Qwen/Qwen3-8B, --tensor-parallel-size, "2"]
"""


def test_hip_and_rocr_visible_devices_give_the_gpus_of_a_rocm_service(tmp_path: Path) -> None:
    path = tmp_path / "docker-compose.yml"
    for var, value, gpus in [("HIP_VISIBLE_DEVICES", "0,1", 2), ("ROCR_VISIBLE_DEVICES", "3", 1), ("HSA_X", "1", None)]:
        path.write_text(ROCM.replace("{var}", var).replace("{value}", value))
        (found,) = found_in(path)
        assert found.gpus_per_pod == gpus, var
        assert found.not_evaluable  # AMD GPUs either way


def test_a_unit_and_a_pod_without_a_gpu_request_see_the_rocm_devices_listed(tmp_path: Path) -> None:
    unit = tmp_path / "vllm.service"
    unit.write_text(
        "[Service]\nEnvironment=HIP_VISIBLE_DEVICES=0,1,2,3\nExecStart=/opt/venv/bin/vllm serve m --tensor-parallel-size 4\n"
    )
    (found,) = found_in(unit)
    assert found.gpus_per_pod == 4
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        "    image: rocm/vllm:latest\n    command: [vllm, serve, m]\n"
        "    env: [{name: ROCR_VISIBLE_DEVICES, value: '0,1'}]\n"
    )
    (found,) = found_in(pod)
    assert found.gpus_per_pod == 2


# a Slurm job on a site whose gres.conf names its A100s `a100` (sbatch(1): the type is the site's own word), as
# round 24's Freya jobs do; the 32B model at TP 2 and 32,768 tokens fits two 80 GB cards, not two 40 GB ones
BARE_A100 = """#!/bin/bash
#SBATCH --job-name=vllm
#SBATCH --nodes=1
#SBATCH --gres=gpu:a100:2
vllm serve Qwen/Qwen2.5-32B-Instruct --tensor-parallel-size 2 --max-model-len 32768
"""


@pytest.mark.parametrize(
    ("written", "key"),
    [
        ("a100", "a100-40gb"),  # the catalog's `a100` is the SXM4 80GB: the same board's 40GB
        ("A100", "a100-40gb"),
        ("a100-80gb", "a100-80gb"),  # a size written is kept
        ("NVIDIA-A100-SXM4-80GB", "a100-80gb"),
        ("a800", "a800-40gb-pcie"),  # the only smaller card of that name
        ("l4", "l4"),  # one size only
    ],
)
def test_a_gpu_named_without_a_size_is_the_smallest_card_of_that_name(written: str, key: str) -> None:
    catalog = load_gpus()
    assert smallest_of_name(written, resolve_gpu(written, catalog), catalog).key == key


def test_a_bare_a100_gres_is_judged_on_the_40gb_card_and_says_so(tmp_path: Path) -> None:
    job = write_file(tmp_path, "job.sbatch", BARE_A100)
    out = json.loads(invoke(["check", "--format", "json", str(job)], exit_code=1).stdout)
    assert [(r["status"], r["gpu"]) for r in out] == [("fail", "NVIDIA A100-SXM4-40GB")]
    assert any(
        "'a100' names no memory size: judged on the smaller NVIDIA A100-SXM4-40GB" in w for w in out[0]["warnings"]
    )
    text = invoke(["check", str(job)], exit_code=1).stdout
    assert "names no memory size" in text
    # --gpu is the user's own choice: `a100` is then the documented default, the 80 GB card, with no note
    given = json.loads(invoke(["check", "--format", "json", "--gpu", "a100", str(job)]).stdout)
    assert [(r["status"], r["gpu"]) for r in given] == [("pass", "NVIDIA A100-SXM4-80GB")]
    assert not any("memory size" in w for w in given[0]["warnings"])


def test_a_node_label_naming_a_bare_a100_is_judged_on_the_40gb_card(tmp_path: Path) -> None:
    # `gpu.nvidia.com/model` names the GPU by name (profiles/instance-types.yaml, kind name); `A100` writes no size and
    # no memory label (nvidia.com/gpu.memory) tells it: the smaller card, said so; with the memory label, that card
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      nodeSelector: {gpu.nvidia.com/model: A100MEMORY}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        args: [--model, Qwen/Qwen2.5-32B-Instruct, --tensor-parallel-size, "2", --max-model-len, "32768"]
        resources: {limits: {nvidia.com/gpu: "2"}}
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""
    path = write_file(tmp_path, "vllm.yaml", manifest.replace("MEMORY", ""))
    (r,) = json.loads(invoke(["check", "--format", "json", str(path)], exit_code=1).stdout)
    assert (r["status"], r["gpu"]) == ("fail", "NVIDIA A100-SXM4-40GB")
    assert any("'A100' names no memory size" in w for w in r["warnings"])
    path.write_text(manifest.replace("MEMORY", ", nvidia.com/gpu.memory: '81920'"))
    (r,) = json.loads(invoke(["check", "--format", "json", str(path)]).stdout)
    assert (r["status"], r["gpu"]) == ("pass", "NVIDIA A100-SXM4-80GB")
    assert not any("memory size" in w for w in r["warnings"])
