"""check reads KServe's Hugging Face serving runtime (huggingfaceserver) as the vLLM engine it starts: the model from
--model_id or the storage URI, TP from the GPUs the container sees, KServe's own options and what its
parse_known_args drops left out (kserve/kserve aaac4e29, python/huggingfaceserver; see kserve_huggingface.py)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from recommender.check.load import read_text
from recommender.check.run import engine_summary
from recommender.cli import cli
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

_CORPUS = Path(__file__).parent / "data" / "deployments" / "kserve"

_ISVC = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: qwen}
spec:
  predictor:
    nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}
    model:
      modelFormat: {name: huggingface}
      args:
      - --model_name=qwen
      - --model_id=Qwen/Qwen2.5-7B-Instruct
      - --max_length=4096
      - --gpu_memory_utilization=0.5
      - --tensor-parallel-size=4
      - --http_port=8080
      - --num-speculative-tokens 5
      - --backend
      - vllm
      - --kv-cache-dtype=fp8
%s      resources:
        limits: {nvidia.com/gpu: "2"}
"""


def _engine(text: str) -> dict[str, object]:
    (found,) = read_text(text, "isvc.yaml", ".yaml")
    cmd = parse_serve_argv(list(found.argv))
    return {**engine_summary(cmd), "revision": cmd.dest("revision"), "gpus": found.gpus_per_pod, "argv": found.argv}


def test_the_huggingface_runtime_runs_vllm_on_model_id_with_tp_from_the_gpus_it_sees() -> None:
    read = _engine(_ISVC % "")
    assert read["model"] == "Qwen/Qwen2.5-7B-Instruct"
    # vllm_model.py sets tensor_parallel_size = torch.cuda.device_count(): 2 GPUs, whatever the args say
    assert read["tensor_parallel_size"] == 2 and read["gpus"] == 2
    assert read["max_model_len"] == 4096  # --max_length is KServe's spelling of max_model_len
    assert read["kv_cache_dtype"] == "fp8"
    # parse_known_args does not know vLLM's options written with underscores: dropped, vLLM's default stands
    assert read["gpu_memory_utilization"] is None
    argv = " ".join(str(w) for w in read["argv"])  # type: ignore[union-attr]
    assert "--http_port" not in argv and "--model_name" not in argv and "--num-speculative-tokens" not in argv


def test_cuda_visible_devices_narrows_the_tp_the_runtime_takes() -> None:
    env = "      env:\n      - {name: CUDA_VISIBLE_DEVICES, value: '0'}\n"
    assert _engine(_ISVC % env)["tensor_parallel_size"] == 1


def test_the_transformers_backend_is_no_vllm_server() -> None:
    for spelling in ("--backend=huggingface", "--backend huggingface"):
        text = (_ISVC % "").replace("- --backend\n      - vllm", "- " + spelling.replace(" ", "\n      - "))
        assert read_text(text, "isvc.yaml", ".yaml") == [], spelling


def test_an_hf_storage_uri_names_the_model_and_its_revision() -> None:
    text = (
        (_ISVC % "")
        .replace("- --model_id=Qwen/Qwen2.5-7B-Instruct\n", "")
        .replace(
            "modelFormat: {name: huggingface}",
            "modelFormat: {name: huggingface}\n      storageUri: hf://Qwen/Qwen3-8B:abc123",
        )
    )
    read = _engine(text)
    assert read["model"] == "Qwen/Qwen3-8B" and read["revision"] == "abc123"


def test_a_runtime_of_the_same_file_running_huggingfaceserver_is_read_with_its_arguments() -> None:
    runtime = """---
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: my-hf}
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
  - name: kserve-container
    image: kserve/huggingfaceserver:v0.15.0-gpu
    command: [python, -m, huggingfaceserver]
    args:
    - --model_name={{.Name}}
    - --max-model-len=2048
    - --enforce-eager
"""
    text = (_ISVC % "").replace(
        "modelFormat: {name: huggingface}", "modelFormat: {name: huggingface}\n      runtime: my-hf"
    )
    (found,) = [f for f in read_text(text + runtime, "isvc.yaml", ".yaml") if f.resource.startswith("Inference")]
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.values["max_model_len"] == 4096  # the predictor's --max_length comes after the runtime's flag
    assert cmd.values["enforce_eager"] is True and found.has_shm is False  # this runtime mounts no /dev/shm


def test_the_multinode_runtime_takes_tp_and_pp_from_the_worker_spec() -> None:
    text = (_ISVC % "").replace(
        "modelFormat: {name: huggingface}", "modelFormat: {name: huggingface}\n      runtime: x"
    )
    text = (
        text.replace("runtime: x", "runtime: kserve-huggingfaceserver-multinode")
        .replace("- --tensor-parallel-size=4\n", "")
        .replace(
            "    nodeSelector:", "    workerSpec: {tensorParallelSize: 2, pipelineParallelSize: 3}\n    nodeSelector:"
        )
    )
    (found,) = read_text(text, "isvc.yaml", ".yaml")
    read = engine_summary(parse_serve_argv(list(found.argv)))
    assert (read["tensor_parallel_size"], read["pipeline_parallel_size"], found.gpus_total) == (2, 3, 6)


def test_kserves_fluid_sample_from_s3_is_not_evaluated_naming_the_storage_uri() -> None:
    # kserve/kserve docs/samples/fluid/kserve-isvc.yaml (tests/data/deployments/SOURCES)
    out = json.loads(invoke(["check", str(_CORPUS / "fluid-kserve-isvc.yaml"), "--format", "json"], exit_code=4).stdout)
    assert out[0]["status"] == "not-evaluated" and "s3://${bucket}" in json.dumps(out)


# kserve/website @f991e85aff5d, docs/modelserving/v1beta1/llm/huggingface/text_generation/README.md (Apache-2.0): its two
# `=== "Yaml"` tabs as published, each a `yaml` block holding `kubectl apply -f - <<EOF` with the manifest inside
_WEBSITE_TAB = """
=== "Yaml"

    ```yaml
    kubectl apply -f - <<EOF
    apiVersion: serving.kserve.io/v1beta1
    kind: InferenceService
    metadata:
      name: huggingface-llama3
    spec:
      predictor:
        model:
          modelFormat:
            name: huggingface
          args:
            - --model_name=llama3
            - --model_id=meta-llama/meta-llama-3-8b-instruct%s
          resources:
            limits:
              cpu: "6"
              memory: 24Gi
              nvidia.com/gpu: "1"
            requests:
              cpu: "6"
              memory: 24Gi
              nvidia.com/gpu: "1"
    EOF
    ```
"""


def test_kserves_docs_tabs_are_read_a_yaml_labelled_kubectl_here_document_included(tmp_path: Path) -> None:
    page = tmp_path / "README.md"
    page.write_text(_WEBSITE_TAB % "" + _WEBSITE_TAB % "\n            - --backend=huggingface")
    (out,) = json.loads(invoke(["check", str(page), "--gpu", "l4", "--format", "json"]).stdout)
    assert out["status"] == "pass" and "meta-llama/meta-llama-3-8b-instruct" in json.dumps(out)


def test_a_bad_gpu_count_names_the_inference_service(tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text((_ISVC % "").replace('{nvidia.com/gpu: "2"}', '{nvidia.com/gpu: "two"}'))
    result = invoke(["check", str(isvc), "--gpu", "l4"], exit_code=2)
    assert "InferenceService/default/qwen" in result.output and "two" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_kserve_inferenceservice_on_a_runtime_of_its_own_is_not_read_as_the_huggingface_server() -> None:
    isvc = """apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: gpt2}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: huggingface-cpu-runtime
      storageUri: pvc://model-pvc/gpt2
"""
    assert read_text(isvc, "isvc.yaml", ".yaml") == []
    default = isvc.replace("huggingface-cpu-runtime", "kserve-huggingfaceserver")
    (found,) = read_text(default, "isvc.yaml", ".yaml")
    assert found.argv[2] == "/mnt/models"


# johnahull/llm-d-xks-gke, deployments/llm-d-infra-xks-gke-tpu-native-gateway/manifests/llmisvc-gpu-pattern3.yaml at
# 434c463 (trimmed): the main container has no command, only `args:` (one block of text).
_LLMISVC_ARGS_ONLY = """apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: qwen2-3b-pattern3-gpu, namespace: llm-d-inference-scheduling}
spec:
  model: {uri: "hf://Qwen/Qwen2.5-3B-Instruct", name: Qwen/Qwen2.5-3B-Instruct}
  template:
    nodeSelector: {cloud.google.com/gke-accelerator: nvidia-tesla-t4}
    containers:
    - name: main
      image: registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.0.0
      args:
      - |
        python3 -m vllm.entrypoints.openai.api_server \\
          --model=/mnt/models \\
          --max-model-len=2048 \\
          --gpu-memory-utilization=0.75
      resources: {limits: {nvidia.com/gpu: "1"}}
"""


def test_llm_inference_service_args_are_vllm_serve_arguments() -> None:
    """Without a command of its own, the main container runs KServe's template command, `eval "vllm serve
    /mnt/models ... $@"` with the args as its positional parameters (config/llmisvcconfig/config-llm-template.yaml,
    v0.18.0 on): the args are vLLM's, split again by eval; /mnt/models is where the storage initializer puts the
    `uri` model, also as `--model=/mnt/models`. A command of its own keeps running as written."""
    (found,) = read_text(_LLMISVC_ARGS_ONLY, "llmisvc.yaml")
    assert found.argv[:4] == ("vllm", "serve", "Qwen/Qwen2.5-3B-Instruct", "python3") and found.gpus_per_pod == 1
    assert found.node_labels["cloud.google.com/gke-accelerator"] == "nvidia-tesla-t4"
    summary = engine_summary(parse_serve_argv(list(found.argv)))
    assert summary["model"] == "Qwen/Qwen2.5-3B-Instruct"  # --model moves to the front (FlexibleArgumentParser)
    assert summary["max_model_len"] == 2048 and summary["gpu_memory_utilization"] == 0.75
    own = _LLMISVC_ARGS_ONLY.replace("      args:\n", "      command: [/bin/sh, -c]\n      args:\n")
    (script,) = read_text(own, "llmisvc.yaml")
    assert script.serve_form is False  # the api_server module, its own model flag
    assert script.argv[2:] == (
        "--model=Qwen/Qwen2.5-3B-Instruct",
        "--max-model-len=2048",
        "--gpu-memory-utilization=0.75",
    )


# ahmedwaleedmalik/k8s-llm-inference-platform serving/llm-d/llminferenceservice.yaml (2026), shortened
_LLMISVC_PREFILL = """apiVersion: serving.kserve.io/v1alpha1
kind: LLMInferenceService
metadata: {name: qwen-llmd, namespace: llm-d}
spec:
  model: {uri: "hf://Qwen/Qwen2.5-0.5B-Instruct", name: qwen2.5-0.5b-instruct}
  replicas: 1
  template:
    containers:
      - name: main
        image: ghcr.io/llm-d/llm-d-dev:v0.2.2
        resources: {limits: {nvidia.com/gpu: 1}}
  prefill:
    replicas: 1
    parallelism: {tensor: 2}
    template:
      containers:
        - name: main
          image: ghcr.io/llm-d/llm-d-dev:v0.2.2
          resources: {limits: {nvidia.com/gpu: 2}}
  router: {scheduler: {}, route: {}}
"""


def test_llm_inference_service_prefill_workload_is_a_server() -> None:
    """`spec.prefill` (a WorkloadSpec: replicas, parallelism, template) makes KServe create a second deployment of
    the same model for prompt processing (llm_inference_service_types.go): two servers, each its own GPUs and TP."""
    decode, prefill = read_text(_LLMISVC_PREFILL, "llmisvc.yaml")
    assert (decode.container, prefill.container) == ("main", "prefill/main")
    assert decode.argv == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct") and decode.gpus_per_pod == 1
    assert prefill.argv == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--tensor-parallel-size", "2")
    assert prefill.gpus_per_pod == 2
    assert len(read_text(_LLMISVC_PREFILL.split("  prefill:")[0], "llmisvc.yaml")) == 1


_LLMISVC_NODES = """apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: qwen3-coder, namespace: ai-serving}
spec:
  model:
    uri: hf://Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8
    name: Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8
  template:
    containers:
    - name: main
      env:
      - name: VLLM_ADDITIONAL_ARGS
        value: >-
          --max-model-len 32768
          --gpu-memory-utilization 0.90
      resources:
        limits:
          nvidia.com/gpu: "1"
    nodeSelector:
      node.kubernetes.io/instance-type: g6e.2xlarge
"""


def test_llm_inference_service_template_node_selector_names_the_gpu(tmp_path: Path) -> None:
    """An LLMInferenceService's `template` is the pod's spec (corev1.PodSpec), so its nodeSelector picks the nodes:
    an AWS g6e.2xlarge is one L40S. Excerpt of nirjhar17/synapxe-opencode-demo llminferenceservice.yaml (round 28),
    read before as no GPU type."""
    (found,) = read_text(_LLMISVC_NODES, "llmisvc.yaml")
    assert found.node_labels == {"node.kubernetes.io/instance-type": "g6e.2xlarge"}
    assert found.argv[:3] == ("vllm", "serve", "Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8")
    path = tmp_path / "llmisvc.yaml"
    path.write_text(_LLMISVC_NODES, encoding="utf-8")
    (result,) = json.loads(CliRunner().invoke(cli, ["check", str(path), "--format", "json"]).stdout)
    assert result["gpu"] == "NVIDIA L40S"
