"""`check` reads the vLLM server a Python program starts (a Modal app, a launcher script): hand-written inputs in the
shapes of Modal's vLLM example and the apps copied from it (tests/data/deployments3/av-ragbot/vllm_server.py is a real
one, read in test_check_corpus)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.check.commands import read_command
from recommender.check.python_apps import modal_gpu, read_python_app
from recommender.memory.engine import VllmVersion
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

MODAL_APP = """\
import modal

vllm_image = (
    modal.Image.from_registry("nvidia/cuda:12.8.0-devel-ubuntu22.04", add_python="3.12")
    .entrypoint([])
    .uv_pip_install("vllm==0.13.0", "huggingface-hub==0.36.0")
)
MODEL_NAME = "Qwen/Qwen2.5-7B-Instruct"
FAST_BOOT = False
N_GPU = 2
MINUTES = 60
VLLM_PORT = 8000
app = modal.App("example-vllm")


@app.function(image=vllm_image, gpu=f"H100:{N_GPU}", timeout=10 * MINUTES)
@modal.web_server(port=VLLM_PORT, startup_timeout=10 * MINUTES)
def serve():
    import subprocess

    cmd = ["vllm", "serve", "--uvicorn-log-level=info", MODEL_NAME, "--served-model-name", MODEL_NAME, "llm"]
    cmd += ["--host", "0.0.0.0", "--port", str(VLLM_PORT)]
    cmd += ["--enforce-eager" if FAST_BOOT else "--no-enforce-eager"]
    cmd += ["--tensor-parallel-size", str(N_GPU)]
    if not FAST_BOOT:
        cmd.extend(["--max-model-len", "8192"])
    subprocess.Popen(" ".join(cmd), shell=True)
"""


def _read(text: str) -> list:  # type: ignore[type-arg]
    return read_python_app(text, "app.py", read_command) or []


def test_a_modal_app_is_its_command_on_its_decorators_gpus() -> None:
    (found,) = _read(MODAL_APP)
    assert found.resource == "modal/serve"
    assert found.gpu_product == "H100" and found.gpus_per_pod == 2
    assert found.image_tag == "0.13.0"  # the release the image installs
    cmd = parse_serve_argv(list(found.argv))
    assert cmd.model == "Qwen/Qwen2.5-7B-Instruct"
    assert cmd.values["tensor_parallel_size"] == 2 and cmd.values["max_model_len"] == 8192
    assert cmd.values["enforce_eager"] is False and found.unresolved == ()


def test_check_judges_the_modal_app_on_the_release_it_installs(tmp_path: Path) -> None:
    app = tmp_path / "vllm_app.py"
    app.write_text(MODAL_APP)
    out = json.loads(invoke(["check", str(app), "--format", "json"], exit_code=0).stdout)
    (server,) = out
    assert server["status"] == "pass" and server["vllm_version"] == "0.13.0"
    assert server["gpu"] == "NVIDIA H100 80GB HBM3" and server["read"]["tensor_parallel_size"] == 2
    # the same file on vLLM 0.17 or newer fails: --served-model-name with the model not first (vllm#34973)
    newest = app.with_name("newest.py")
    newest.write_text(MODAL_APP.replace('"vllm==0.13.0"', '"vllm==0.33.0"'))
    result = invoke(["check", str(newest)], exit_code=1)
    assert "should be provided as the first positional argument" in result.stdout


def test_the_served_model_name_rule_starts_at_vllm_0_17() -> None:
    argv = ["--port", "8000", "org/m", "--served-model-name", "m"]
    assert parse_serve_argv(argv, version=VllmVersion.parse("0.16.0")).errors == ()
    assert parse_serve_argv(argv, version=VllmVersion.parse("0.16.0")).model == "org/m"
    assert any(
        "first positional argument" in e for e in parse_serve_argv(argv, version=VllmVersion.parse("0.17")).errors
    )
    assert any("first positional argument" in e for e in parse_serve_argv(argv).errors)  # the newest release


@pytest.mark.parametrize(
    ("spec", "gpu", "count"),
    [
        ("H100", "H100", 1),
        ("h100:8", "H100", 8),  # case-insensitive
        ("H100!", "H100", 1),  # `!`: no automatic upgrade to an H200
        ("B200+", "B200", 1),
        ("A100", "A100-40GB", 1),  # modal.gpu.A100's size "Defaults to 40GB"
        ("A100-80GB:4", "A100-80GB", 4),
        (["L40S", "A100-80GB"], "L40S", 1),  # a fallback chain: the first is preferred
        (None, None, None),
        ("H100:\u00b2", "H100", 1),  # str.isdigit takes a superscript two; int() would not
        ("H100:" + "9" * 5000, "H100", 1),  # int() refuses thousands of digits: not read as a count
    ],
)
def test_modal_gpu_strings(spec: str | list[str] | None, gpu: str | None, count: int | None) -> None:
    assert modal_gpu(spec) == (gpu, count)  # type: ignore[arg-type]


def test_the_deprecated_gpu_objects() -> None:
    text = MODAL_APP.replace('gpu=f"H100:{N_GPU}"', 'gpu=modal.gpu.A100(count=N_GPU, size="80GB")')
    (found,) = _read(text)
    assert (found.gpu_product, found.gpus_per_pod) == ("A100-80GB", 2)
    (found,) = _read(MODAL_APP.replace('gpu=f"H100:{N_GPU}"', "gpu=modal.gpu.A100()"))
    assert (found.gpu_product, found.gpus_per_pod) == ("A100-40GB", 1)


def test_a_value_the_file_does_not_fix_is_unresolved(tmp_path: Path) -> None:
    text = MODAL_APP.replace('MODEL_NAME = "Qwen/Qwen2.5-7B-Instruct"', "MODEL_NAME = load_model_name()")
    (found,) = _read(text)
    assert found.unresolved == ("$load_model_name",)
    app = tmp_path / "app.py"
    app.write_text(text)
    result = invoke(["check", str(app)], exit_code=4)
    assert "unresolved $load_model_name" in result.stdout


def test_an_environment_default_is_read_as_a_shell_default() -> None:
    text = MODAL_APP.replace("N_GPU = 2", 'N_GPU = int(os.environ.get("N_GPU", "4"))')
    (found,) = _read(text)
    assert found.gpus_per_pod == 4 and parse_serve_argv(list(found.argv)).values["tensor_parallel_size"] == 4


def test_a_launcher_script_without_modal(tmp_path: Path) -> None:
    script = tmp_path / "launch.py"
    script.write_text(
        "import subprocess, sys\n"
        "TP = 2\n"
        "args = ['vllm', 'serve', 'Qwen/Qwen2.5-7B-Instruct', '--tensor-parallel-size', str(TP)]\n"
        "args.append('--gpu-memory-utilization=0.85')\n"
        "sys.exit(subprocess.run(args).returncode)\n"
    )
    out = json.loads(invoke(["check", str(script), "--gpu", "h100", "--format", "json"]).stdout)
    assert out[0]["read"]["tensor_parallel_size"] == 2 and out[0]["read"]["gpu_memory_utilization"] == 0.85
    assert out[0]["resource"] == "command"


@pytest.mark.parametrize(
    "text",
    [
        "def f(:\n",  # not Python
        "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",  # nesting the parser refuses
        "import modal\ncmd = ['vllm', 'serve', 'm']\n" + "cmd = cmd + cmd\n" * 200,  # never run, and bounded
        "import subprocess\nsubprocess.run(['echo', 'hello'])\n",  # runs something else
    ],
)
def test_python_that_starts_no_server_says_so_in_one_line(tmp_path: Path, text: str) -> None:
    app = tmp_path / "app.py"
    app.write_text(text)
    result = invoke(["check", str(app)], exit_code=2)
    assert "not read" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_command_doubled_past_the_bound_is_not_built() -> None:
    text = "import subprocess\ncmd = ['vllm', 'serve', 'm']\n" + "cmd = cmd + cmd\n" * 200 + "subprocess.run(cmd)\n"
    assert _read(text) == []  # the list past 10,000 words is left unknown, not built: no command to read


def test_json_dumps_options_are_bounded() -> None:
    # an untrusted file may ask json.dumps for an indent of a billion spaces: that text is not built
    line = "import subprocess, json\nsubprocess.run(['vllm', 'serve', 'm', '--limit-mm-per-prompt', json.dumps({{'image': 0}}, {}) ])\n"
    (huge,) = _read(line.format("indent=1000000000"))
    assert huge.unresolved == ("$dumps",)
    (compact,) = _read(line.format("separators=(',', ':')"))
    assert compact.argv[-1] == '{"image":0}' and compact.unresolved == ()


JSON_DUMPS_APP = """\
import json
import subprocess

import modal

app = modal.App("gemma")


@app.function(gpu="H100")
@modal.web_server(port=8000)
def serve() -> None:
    cmd = [
        "vllm",
        "serve",
        "google/gemma-3-4b-it",
        "--limit-mm-per-prompt",
        json.dumps({"image": 0, "video": 0}),
        "--hf-overrides",
        json.dumps({"a": [1, 2]}, separators=(",", ":")),
        "--override-generation-config",
        json.dumps(GENERATION),
    ]
    subprocess.Popen(cmd)
"""


def test_json_dumps_of_a_literal_is_the_text_python_gives() -> None:
    (found,) = read_python_app(JSON_DUMPS_APP, "app.py", read_command) or []
    argv = list(found.argv)
    assert argv[argv.index("--limit-mm-per-prompt") + 1] == '{"image": 0, "video": 0}'
    assert argv[argv.index("--hf-overrides") + 1] == '{"a":[1,2]}'
    assert "--override-generation-config" in argv
    assert found.unresolved  # json.dumps of a name the file does not set is not guessed
