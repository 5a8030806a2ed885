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
        f"Error: {path}: a Ray Serve config: its own Python, not read: vllm_serve:deployment: its module is not in "
        "the folder checked"
    )


# The shapes of a RayService serving vLLM from its repository's own Python: Ray's `import_path: module:app` with
# runtime_env env_vars (docs.ray.io/en/latest/serve/production-guide/config.html), and a deployment building
# vLLM's AsyncEngineArgs from os.environ (vLLM's engine arguments, vllm/engine/arg_utils.py)
RAY_SERVICE = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: llm}
spec:
  serveConfigV2: |
    applications:
      - name: llm
        import_path: app.serve:model
        runtime_env:
          working_dir: "https://github.com/example/repo/archive/main.zip"
          env_vars:
            MODEL_ID: "Qwen/Qwen2.5-7B-Instruct"
            TENSOR_PARALLELISM: "2"
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
            - name: ray-head
              image: rayproject/ray-ml:2.33.0.914af0-py311
    workerGroupSpecs:
      - groupName: gpu
        replicas: 1
        template:
          spec:
            containers:
              - name: llm
                image: rayproject/ray-ml:2.33.0.914af0-py311
                resources: {limits: {nvidia.com/gpu: "2"}}
"""
SERVE_PY = """import os
from ray import serve
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine

MAX_LEN = 8192

@serve.deployment(ray_actor_options={"num_gpus": 1})
class VLLMDeployment:
    def __init__(self):
        args = AsyncEngineArgs(
            model=os.environ["MODEL_ID"],
            tensor_parallel_size=int(os.environ.get("TENSOR_PARALLELISM", "1")),
            pipeline_parallel_size=int(os.environ.get("PIPELINE_PARALLELISM", "1")),
            max_model_len=MAX_LEN,
            gpu_memory_utilization=float(os.environ["GPU_UTIL"]),
        )
        self.engine = AsyncLLMEngine.from_engine_args(args)

model = VLLMDeployment.bind()
"""
# ray.serve.llm's LLMConfig built in Python (docs.ray.io/en/latest/serve/llm: build_openai_app over LLMConfigs), and
# an engine_args dict given to a deployment of its own
LLM_CONFIG_PY = """from ray.serve.llm import LLMConfig, build_openai_app

llm_config = LLMConfig(
    model_loading_config=dict(model_id="qwen", model_source="Qwen/Qwen2.5-0.5B-Instruct"),
    accelerator_type="A10G",
    engine_kwargs=dict(tensor_parallel_size=1, max_model_len=4096, enforce_eager=True),
)
app = build_openai_app({"llm_configs": [llm_config]})
"""
ENGINE_DICT_PY = """from my_serving import VLLMServer
engine_args = dict(model="meta-llama/Llama-3.1-8B-Instruct", tensor_parallel_size=4, kv_cache_dtype="fp8")
app = VLLMServer.bind(engine_args=engine_args)
"""


def test_a_ray_service_of_its_own_python_reads_the_engine_args_it_builds(tmp_path: Path) -> None:
    manifest = _write(tmp_path, "k8s/ray-service.yaml", RAY_SERVICE)
    _write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    _write(tmp_path, "app/serve.py", SERVE_PY)  # at the repository's root, two folders above the manifest
    (found,) = load_inputs((str(manifest),)).found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"  # runtime_env env_vars over the code's default
    assert cmd.values["tensor_parallel_size"] == 2 and cmd.values["pipeline_parallel_size"] == 1
    assert cmd.values["max_model_len"] == 8192  # a module-level literal
    assert found.unresolved == ("$GPU_UTIL",)  # os.environ["GPU_UTIL"], set nowhere: named, not guessed
    assert found.resource == "RayService/default/llm" and found.container == "llm (../app/serve.py)"
    assert found.gpus_total == 2 and found.gpus_at_least
    # the module not in the folder: said so, by name
    (tmp_path / "app" / "serve.py").unlink()
    (problem,) = load_inputs((str(manifest),)).problems
    assert problem.endswith("app.serve:model: its module is not in the folder checked")


def test_a_serve_config_of_its_own_python_reads_llm_configs_and_engine_args_dicts(tmp_path: Path) -> None:
    config = _write(tmp_path, "serve.yaml", CUSTOM.replace("vllm_serve:deployment", "apps.llm:app"))
    _write(tmp_path, "apps/llm.py", LLM_CONFIG_PY)
    (found,) = load_inputs((str(config),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct", "--tensor-parallel-size", "1",
                          "--max-model-len", "4096", "--enforce-eager")  # fmt: skip
    assert found.gpu_product == "A10G" and found.unresolved == ()
    _write(tmp_path, "apps/llm.py", ENGINE_DICT_PY)
    (found,) = load_inputs((str(config),)).found  # the dict and its `engine_args=engine_args` use: one engine
    assert found.argv == ("vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--tensor-parallel-size", "4",
                          "--kv-cache-dtype", "fp8")  # fmt: skip
    _write(tmp_path, "apps/llm.py", "from ray import serve\napp = serve.deployment(lambda: 1).bind()\n")
    (problem,) = load_inputs((str(config),)).problems
    assert "apps.llm:app: " in problem and "builds no vLLM engine check reads" in problem


# engine arguments the Serve config passes its own code: an application's `args` (Ray's vLLM example builds its app
# from them with vLLM's argument parser, dashed keys) and a deployment's `user_config` (round 16's shape)
ARGS_CONFIG = """applications:
  - name: llm
    import_path: llm:build_app
    args:
      model: Qwen/Qwen2.5-7B-Instruct
      tensor-parallel-size: 2
      max-model-len: 16384
  - name: other
    import_path: src.vllm_serve:deployment
    deployments:
      - name: VLLMDeployment
        user_config:
          engine_args: {model: meta-llama/Llama-3.1-8B-Instruct, gpu_memory_utilization: 0.85}
"""
BUILD_APP_PY = """from vllm.engine.arg_utils import AsyncEngineArgs

def build_app(cli_args):
    engine_args = AsyncEngineArgs(**cli_args)
    return VLLMDeployment.bind(engine_args)
"""


def test_engine_args_the_serve_config_passes_its_own_code_are_read(tmp_path: Path) -> None:
    config = _write(tmp_path, "serve.yaml", ARGS_CONFIG)
    found = load_inputs((str(config),)).found  # no Python needed: the config names the engine's arguments
    assert [f.argv for f in found] == [
        ("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2", "--max-model-len", "16384"),
        ("vllm", "serve", "meta-llama/Llama-3.1-8B-Instruct", "--gpu-memory-utilization", "0.85"),
    ]
    assert [f.container for f in found] == ["llm (its args)", "other (its args)"]
    # the code alone, building AsyncEngineArgs(**cli_args) from arguments not in the file: the model unresolved
    _write(tmp_path, "llm.py", BUILD_APP_PY)
    only = "applications:\n  - name: llm\n    import_path: llm:build_app\n"
    (found,) = load_inputs((str(_write(tmp_path, "serve.yaml", only)),)).found
    assert found.argv == ("vllm", "serve", "$model") and found.unresolved == ("$model", "$cli_args")
    # an LLMConfig whose engine_kwargs come from a name the file does not bind: named, the engine not judged as TP 1
    _write(tmp_path, "llm.py", LLM_CONFIG_PY.replace("engine_kwargs=dict(", "engine_kwargs=KWARGS, x=dict("))
    (found,) = load_inputs((str(config),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct") and found.unresolved == ("$KWARGS",)


# a RayCluster whose head starts the Serve app itself (`serve run TARGET [key=value ...]`, docs.ray.io Serve CLI:
# the arguments are the application builder's args), and one running a Serve config file of the repository
RAY_CLUSTER = """apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: llm, namespace: ml}
spec:
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray-ml:2.33.0-gpu
          command: ["/bin/bash", "-c"]
          args: ["ray start --head --block & sleep 10 && serve run --address auto TARGET"]
          resources: {limits: {nvidia.com/gpu: "2"}}
"""


def test_a_ray_cluster_running_serve_run_reads_its_app(tmp_path: Path) -> None:
    target = "llm:build_app model=Qwen/Qwen2.5-7B-Instruct tensor-parallel-size=2"
    manifest = _write(tmp_path, "cluster.yaml", RAY_CLUSTER.replace("TARGET", target))
    (found,) = load_inputs((str(manifest),)).found
    assert found.argv == ("vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--tensor-parallel-size", "2")
    assert found.resource == "RayCluster/ml/llm" and found.gpus_total == 2 and found.gpus_at_least
    # a Serve config file beside the manifest, its app's Python beside it too
    _write(tmp_path, "serve_config.yaml", CUSTOM.replace("vllm_serve:deployment", "apps.llm:app"))
    _write(tmp_path, "apps/llm.py", LLM_CONFIG_PY)
    _write(tmp_path, "cluster.yaml", RAY_CLUSTER.replace("TARGET", "serve_config.yaml"))
    (found,) = load_inputs((str(manifest),)).found
    assert found.argv[:3] == ("vllm", "serve", "Qwen/Qwen2.5-0.5B-Instruct") and found.gpu_product == "A10G"
    # a config inside the image: nothing claimed, the manifest has no server check reads
    _write(tmp_path, "cluster.yaml", RAY_CLUSTER.replace("TARGET", "/home/ray/serve.yaml"))
    assert load_inputs((str(manifest),)).found == []


def test_a_value_the_python_does_not_fix_is_named_never_empty() -> None:
    from recommender.check.ray_python_apps import engine_configs, unresolved_config

    configs = engine_configs("LLM(*argv)\nLLM(model=f'{org}/{name}', tensor_parallel_size=settings.tp)\n", {})
    assert [unresolved_config(c)[1] for c in configs or []] == [("$value",), ("$value", "$settings.tp")]


# blublinsky/vllm-ray-serve pure_vllm/vllm_serve_066_post1.py (Ray's vLLM example), shortened: the app is built from a
# dict of command-line options parsed with vLLM's own parser
CLI_DICT_PY = """import os
from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.entrypoints.openai.cli_args import make_arg_parser
from vllm.utils import FlexibleArgumentParser

def parse_vllm_args(cli_args):
    parser = make_arg_parser(FlexibleArgumentParser(description="vLLM CLI"))
    arg_strings = []
    for key, value in cli_args.items():
        arg_strings.extend([f"--{key}", str(value)])
    return parser.parse_args(args=arg_strings)

def build_app(cli_args):
    engine_args = AsyncEngineArgs.from_cli_args(parse_vllm_args(cli_args))
    return VLLMDeployment.bind(engine_args)

model = build_app(
    {
        "model": os.environ["MODEL_ID"],
        "tensor-parallel-size": os.environ["TENSOR_PARALLELISM"],
        "pipeline-parallel-size": os.environ["PIPELINE_PARALLELISM"],
    }
)
"""


def test_an_app_built_from_a_dict_of_vllm_command_line_options_reads_them(tmp_path: Path) -> None:
    """`model = build_app({"model": ..., "tensor-parallel-size": ...})` in a file that parses `--key value` with vLLM's
    make_arg_parser: those are the engine's options (env from the runtime_env); the GPU pods' node label is the GPU."""
    labelled = RAY_SERVICE.replace(
        "            containers:\n              - name: llm",
        "            nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-80GB-PCIe}\n"
        "            containers:\n              - name: llm",
    ).replace('TENSOR_PARALLELISM: "2"', 'TENSOR_PARALLELISM: "2"\n            PIPELINE_PARALLELISM: "1"')
    manifest = _write(tmp_path, "k8s/ray-service.yaml", labelled)
    _write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    _write(tmp_path, "app/serve.py", CLI_DICT_PY)
    (found,) = load_inputs((str(manifest),)).found
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct" and cmd.values["tensor_parallel_size"] == 2
    assert found.unresolved == () and found.gpus_total == 2
    assert found.node_labels == {"nvidia.com/gpu.product": "NVIDIA-A100-80GB-PCIe"}
    # the same dict in a file that does not parse it with vLLM's parser is not taken for the engine's options
    _write(
        tmp_path, "app/serve.py", CLI_DICT_PY.replace("make_arg_parser", "mine").replace("FlexibleArgumentParser", "P")
    )
    assert load_inputs((str(manifest),)).found == []
