"""Which container images run vLLM's server, on which platform, at which release (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping

# images whose name says vLLM but that run something else: the production-stack router, llama-stack's client
# distribution for a remote vLLM, the benchmark and router helpers
_NOT_A_SERVER = re.compile(r"^vllm-router|remote-vllm|vllm-benchmark|^vllm-bench|vllm-proxy|^distribution-")
_PLATFORM_WORDS = ("gaudi", "hpu", "cpu", "rocm", "tpu", "neuron", "xpu", "openvino", "ipex", "ascend", "npu")
# environment a ROCm (AMD) deployment of vLLM sets; vLLM's CUDA memory model does not describe those GPUs
_ROCM_ENV = re.compile(r"^(HIP_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|VLLM_ROCM_\w+|HSA_\w+)$")
_VISIBLE = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")


def _name(image: str) -> str:
    return image.rsplit("/", 1)[-1].split(":", 1)[0].split("@", 1)[0].lower()


# words of an image's name that say it serves something in front of vLLM, not vLLM (`vllm-latency-proxy`)
_CLIENT_WORDS = frozenset({"proxy", "router", "gateway", "client", "ui", "webui", "frontend", "exporter", "dashboard"})


# images of other inference servers (llama.cpp, SGLang, TGI, Ollama, Triton/TensorRT-LLM, LMDeploy, LocalAI): a
# container running one is not vLLM's server whatever the workload is called (a `vllm` Deployment running llama.cpp)
_OTHER_ENGINE = re.compile(
    r"llama\.cpp|ggml-org/|/llama-cpp|sglang|text-generation-inference|ollama/|tritonserver|tensorrt-llm|"
    r"openmmlab/lmdeploy|localai/"
)


# words of an image's name that say it imitates a server (llm-d's `llm-d-inference-sim`, formerly `vllm-sim`: vLLM's
# API and flags, no model, no GPU memory)
_SIMULATOR_WORDS = frozenset({"sim", "simulator", "emulator", "mock"})


def is_other_engine_image(image: str) -> bool:
    """An image of another inference server, or of a simulator of one (its name says so), which never runs vLLM's
    entrypoint."""
    simulator = bool(_SIMULATOR_WORDS & set(re.split(r"[-_.]+", _name(image))))
    return simulator or bool(_OTHER_ENGINE.search(image.lower()))


def is_vllm_image(image: str) -> bool:
    """An image whose entrypoint is vLLM's server (vllm/vllm-openai and the images built from it)."""
    name = _name(image)
    client = bool(_CLIENT_WORDS & set(re.split(r"[-_.]+", name)))
    return "vllm" in name and not client and not _NOT_A_SERVER.search(name) and "llamastack/" not in image.lower()


# a variable holding the address of an OpenAI-compatible server the container calls (PASS2_BASE_URL, OPENAI_API_BASE,
# VLLM_API_URL): the program is a client of a vLLM server, not one (HF_ENDPOINT, the hub's address, is not one)
_CLIENT_OF = re.compile(r"(^|_)(BASE_URL|API_BASE|API_URL)$")


def calls_a_server(env: Mapping[str, str]) -> str | None:
    """The variable of a container's env that gives it a server's http(s) address to call, or None."""
    return next((k for k, v in env.items() if _CLIENT_OF.search(k) and re.match(r"\s*https?://", str(v))), None)


def image_cmd_placeholder(image: str) -> str | None:
    """The word standing for the CMD of an image built on vLLM's that a container runs without arguments: vLLM's own
    images (vllm/...) have none, so vLLM serves its default model; another image's CMD, not in the file, may name
    the model (None for vLLM's own images)."""
    path = re.sub(r"^(docker\.io/)?(library/)?", "", image.split("@", 1)[0].rsplit(":", 1)[0].lower())
    return None if path.startswith("vllm/") else f"<the CMD of image {image}>"


def has_vllms_entrypoint(image: str) -> bool:
    """vLLM's own server image (vllm/vllm-openai): its ENTRYPOINT is vLLM's server (`vllm serve` since vLLM's
    docker/Dockerfile moved to it, `python3 -m vllm.entrypoints.openai.api_server` before), so a container's
    arguments (Kubernetes `args`, Compose `command`, `docker run IMAGE ARGS`) are that server's arguments."""
    path = re.sub(r"^(docker\.io/)?(library/)?", "", image.split("@", 1)[0].rsplit(":", 1)[0].lower())
    return path == "vllm/vllm-openai"


# Google Cloud's registries name the account's project first: LOCATION-docker.pkg.dev/PROJECT-ID/REPOSITORY/IMAGE
# (Artifact Registry) and [REGION.]gcr.io/PROJECT-ID/IMAGE (Container Registry), cloud.google.com/artifact-registry/
# docs/docker/names; a project ID is its owner's choice (`northam-ce-mlai-tpu`), not a word about the image's build
_GCP_PROJECT = re.compile(r"^((?:[a-z0-9-]+-docker\.pkg\.dev|(?:[a-z]+\.)?gcr\.io)/)[^/]+/")


def other_platform(image: str) -> str | None:
    """Why a vLLM image does not run on NVIDIA GPUs (vllm-tpu, opea/vllm-gaudi, vllm-cpu, rocm/vllm), or None."""
    name = _GCP_PROJECT.sub(r"\1", image.split("@", 1)[0].lower())
    words = set(re.split(r"[/:._-]+", name))
    hit = next((w for w in _PLATFORM_WORDS if w in words or f"vllm-{w}" in name), None)
    if hit is None and re.match(r"^(docker\.io/)?intel/vllm[:@]", name + ":"):
        hit = "xpu"  # Intel's own vLLM image on Docker Hub is its Arc / Data Center GPU (XPU) build
    if hit == "cpu":
        return cpu_backend(f"image {image} is a CPU build of vLLM")
    return f"image {image} runs vLLM on {hit.upper()}, not NVIDIA GPUs" if hit else None


def cpu_backend(why: str) -> str:
    """The reason a server vLLM runs on its CPU backend is not evaluated: no GPU memory to plan."""
    return f"CPU backend ({why}): this tool plans GPU memory"


# vLLM's build (setup.py, docs "CPU" installation: `VLLM_TARGET_DEVICE=cpu python setup.py install` /
# `uv pip install . --no-build-isolation` with it set; docker/Dockerfile.cpu) compiles the CPU backend when
# VLLM_TARGET_DEVICE is cpu; set in a container's environment it names that build
_CPU_TARGET = re.compile(r"""\bVLLM_TARGET_DEVICE\s*[=\s]\s*["']?cpu\b""", re.I)


def cpu_build(text: str) -> str | None:
    """Why a Dockerfile (or build script) builds vLLM's CPU backend: it sets VLLM_TARGET_DEVICE=cpu (ARG, ENV or a
    RUN's assignment; comment lines are not run), or None."""
    live = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return cpu_backend("built with VLLM_TARGET_DEVICE=cpu") if _CPU_TARGET.search(live) else None


def env_platform(env: Mapping[str, str]) -> str | None:
    """Why a command's environment is not an NVIDIA one (HIP_VISIBLE_DEVICES, VLLM_ROCM_USE_AITER, ...,
    VLLM_TARGET_DEVICE=cpu), or None."""
    if str(env.get("VLLM_TARGET_DEVICE", "")).strip().strip("'\"").lower() == "cpu":
        return cpu_backend("VLLM_TARGET_DEVICE=cpu")
    names = sorted(k for k in env if _ROCM_ENV.match(k))
    return f"runs vLLM on ROCm (AMD GPUs: {names[0]} is set), not NVIDIA GPUs" if names else None


# `pip install vllm==0.6.6`, `uv pip install --pre vllm==0.10.1+gptoss`, `python -m pip install "vllm[audio]==0.11.2"`:
# the release a script, a task's setup or a Dockerfile installs (a comment line is not run)
_PIP_PIN = re.compile(
    r"""\b(?:pip3?|uv\s+pip|-m\s+pip)\s+install\b[^\n]*?(?<![\w.-])["']?vllm(?:\[[^\]]*\])?==\s*([0-9][0-9A-Za-z.+-]*)"""
)


def pinned_release(text: str) -> str | None:
    """The one vLLM release the text installs with pip (None when it pins none, or several)."""
    joined = re.sub(r"\\\r?\n", " ", text)  # backslash-newline continues the command
    live = "\n".join(line for line in joined.splitlines() if not line.lstrip().startswith("#"))
    # PEP 440 spells `0.5.3post1` and `0.5.3.post1` alike: the release is 0.5.3 either way
    pins = {re.sub(r"(?<=\d)(?=post|rc|dev)", ".", m.group(1).rstrip(".")) for m in _PIP_PIN.finditer(live)}
    return pins.pop() if len(pins) == 1 else None


def image_tag(image: str) -> str | None:
    last = image.rsplit("/", 1)[-1].split("@", 1)[0]
    return last.rsplit(":", 1)[1] if ":" in last else None


def visible_devices(env: Mapping[str, str], names: tuple[str, ...] = _VISIBLE) -> int | None:
    """GPUs a process sees from CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES (a list of ids), or None."""
    for key in names:
        value = env.get(key, "").strip().strip("'\"")
        if re.fullmatch(r"\d+(,\d+)*", value):
            return len(value.split(","))
    return None


def devices_seen(env: Mapping[str, str]) -> int | None:
    """GPUs visible to the process, NVIDIA or (for a ROCm deployment) AMD."""
    return visible_devices(env, (*_VISIBLE, "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"))
