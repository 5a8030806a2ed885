"""Readers fixed after blind round 15 (benchmarks/data/check-heldout/round15) and round 12's underpass chart:
hand-written cases of the shapes those public files have (each names its file in the round's SOURCES)."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check.inputs import load_inputs

from .conftest import invoke

# KaveeshKhattar/inference-router k8s/vllm-deployment.yaml: a Deployment named vllm whose container runs llm-d's
# simulator with vLLM-like flags (--max-waiting-queue-length is the simulator's own)
SIMULATOR = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
      - name: simulator
        image: ghcr.io/llm-d/llm-d-inference-sim:v0.8.0
        args: [--model, meta-llama/Llama-3.1-8B-Instruct, --port, "8000", --max-num-seqs, "8",
               --max-waiting-queue-length, "50"]
"""

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

# zacharyzusin/atp-budget-study slurm/vllm_server.sh: a default that is a command's output, whose Python code holds
# double quotes and a `;` inside the double-quoted assignment
NESTED = """#!/bin/bash
MAX_MODEL_LEN="${ATP_MAX_MODEL_LEN:-$(python -c "from atp.config import load_config, B; print(load_config(B).model.max_model_len)" 2>/dev/null)}"
exec python -m vllm.entrypoints.openai.api_server \\
    --model Qwen/Qwen3-8B \\
    --max-model-len "$MAX_MODEL_LEN" \\
    --port 8000
"""

# underpass-ai/underpass-vllms (commit 4eb49f4c) charts/vllm/templates/orchestrator-deployment.yaml rendered: the
# project's own Go two-pass server (image underpass-vllms, ENTRYPOINT /two-pass-server) beside its vLLM Deployment,
# run without arguments and given the vLLM servers it calls
ORCHESTRATOR = """apiVersion: apps/v1
kind: Deployment
metadata: {name: rel-orchestrator}
spec:
  template:
    spec:
      containers:
      - name: orchestrator
        image: ghcr.io/tgarciai/underpass-vllms:20260422-openai-streaming
        env:
        - {name: SERVER_ADDR, value: ":8080"}
        - {name: PASS2_BASE_URL, value: "http://rel-structured:8000/v1"}
        - {name: PASS2_MODEL, value: google/gemma-4-31B-it}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_simulator_of_vllm_is_not_a_vllm_server(tmp_path: Path) -> None:
    path = _write(tmp_path, "vllm-deployment.yaml", SIMULATOR)
    assert load_inputs((str(path),)).found == []
    r = invoke(["check", str(path), "--gpu", "t4"], exit_code=2)
    assert "no vLLM server" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_a_privileged_pod_without_a_gpu_request_uses_the_gpus_its_script_makes_visible(tmp_path: Path) -> None:
    (found,) = load_inputs((str(_write(tmp_path, "pod.yaml", PRIVILEGED)),)).found
    assert found.gpus_per_pod == 4
    assert found.argv[found.argv.index("--tensor-parallel-size") + 1] == "4"


def test_a_command_substitution_opens_its_own_quotes_inside_double_quotes(tmp_path: Path) -> None:
    path = _write(tmp_path, "vllm_server.sh", NESTED)
    (found,) = load_inputs((str(path),)).found
    assert found.argv[found.argv.index("--max-model-len") + 1] == "$MAX_MODEL_LEN"
    assert found.unresolved == ("$MAX_MODEL_LEN",)
    (r,) = json.loads(invoke(["check", str(path), "--gpu", "h100", "--format", "json"], exit_code=4).stdout)
    assert r["status"] == "not-evaluated" and r["failures"] == []
    assert r["not_evaluated_because"] == ["unresolved $MAX_MODEL_LEN"]


def test_an_image_named_after_vllm_that_calls_a_vllm_server_is_its_client(tmp_path: Path) -> None:
    assert load_inputs((str(_write(tmp_path, "orchestrator.yaml", ORCHESTRATOR)),)).found == []
    # the same image given vLLM's arguments still runs them (its name says vLLM)
    with_args = ORCHESTRATOR.replace("        env:", "        args: [--model, Qwen/Qwen3-8B]\n        env:")
    (found,) = load_inputs((str(_write(tmp_path, "with-args.yaml", with_args)),)).found
    assert found.argv[:3] == ("vllm", "serve", "--model")
