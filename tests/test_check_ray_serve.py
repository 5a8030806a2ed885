"""Ray Serve config files (`serve run config.yaml` / `serve deploy`) and LLMConfig files of ray.serve.llm: the vLLM
engine each LLMConfig starts, from model_loading_config and engine_kwargs (EngineArgs keywords). The texts are Ray's
documentation examples (ray-project/ray doc/source/serve/llm: the quickstart's inline and standalone configs, the
S3 model-loading example) and a community deployment's serve_config.yaml with `${VAR}` placeholders."""

from __future__ import annotations

from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

INLINE = """proxy_location: EveryNode
http_options: {host: 0.0.0.0, port: 8000}
applications:
  - name: multimodal_app
    import_path: ray.serve.llm:build_openai_app
    route_prefix: "/"
    args:
      llm_configs:
        - model_loading_config:
            model_id: qwen-vl
            model_source: Qwen/Qwen2.5-VL-7B-Instruct
          accelerator_type: A10G
          engine_kwargs:
            max_model_len: 8192
            gpu_memory_utilization: 0.7
            tensor_parallel_size: 2
            trust_remote_code: true
          deployment_config:
            autoscaling_config: {min_replicas: 1, max_replicas: 1}
        - model_loading_config:
            model_id: my_llama
            model_source:
              bucket_uri: s3://anonymous@air-example-data/rayllm-ossci/meta-Llama-3.2-1B-Instruct
          engine_kwargs:
            max_model_len: ${MAX_MODEL_LEN}
"""
STANDALONE = """applications:
- args:
    llm_configs:
        - models/qwen-0.5b.yaml
  import_path: ray.serve.llm:build_openai_app
  name: llm_app
  route_prefix: "/"
"""
MODEL = """model_loading_config:
  model_id: qwen-0.5b
  model_source: Qwen/Qwen2.5-0.5B-Instruct
accelerator_type: A10G
deployment_config:
  autoscaling_config: {min_replicas: 1, max_replicas: 2}
"""
CUSTOM = """applications:
  - name: app
    import_path: vllm_serve:deployment
    runtime_env: {pip: [vllm]}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_a_serve_config_starts_one_engine_per_llm_config(tmp_path: Path) -> None:
    vl, llama = load_inputs((str(_write(tmp_path, "serve_config.yaml", INLINE)),)).found
    cmd = parse_serve_argv(list(vl.argv))
    assert cmd.model == "Qwen/Qwen2.5-VL-7B-Instruct" and vl.gpu_product == "A10G"
    assert cmd.values["tensor_parallel_size"] == 2 and cmd.values["max_model_len"] == 8192
    assert cmd.values["gpu_memory_utilization"] == 0.7 and vl.has_shm
    assert vl.container == "llm_config/qwen-vl" and vl.resource == "serve config"
    assert llama.argv[2] == "s3://anonymous@air-example-data/rayllm-ossci/meta-Llama-3.2-1B-Instruct"
    assert llama.argv[3:] == ("--max-model-len", "${MAX_MODEL_LEN}")


def test_an_llm_config_file_is_one_engine_and_its_serve_config_names_it(tmp_path: Path) -> None:
    config = _write(tmp_path, "config.yaml", STANDALONE)
    model = _write(tmp_path, "models/qwen-0.5b.yaml", MODEL)
    (found,) = load_inputs((str(model),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct") and found.gpu_product == "A10G"
    (problem,) = load_inputs((str(config),)).problems
    assert problem.endswith(
        "a Ray Serve config: its llm_configs are the files models/qwen-0.5b.yaml: check those files"
    )
    (once,) = load_inputs((str(tmp_path),)).found  # the folder: the LLMConfig file read once
    assert once.argv[2] == "Qwen/Qwen2.5-0.5B-Instruct"


def test_a_serve_config_of_python_code_of_its_own_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, "serve.yaml", CUSTOM)
    r = invoke(["check", str(path), "--gpu", "a10g"], exit_code=2)
    assert r.stderr.strip() == (
        f"Error: {path}: a Ray Serve config: it runs the Ray Serve application vllm_serve:deployment: Python code of "
        "its own, which check does not read"
    )
