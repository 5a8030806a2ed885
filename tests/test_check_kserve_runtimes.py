"""check combines a KServe InferenceService with the ServingRuntime it runs on, in the same file or in another file
of a checked folder, as KServe's controller does (kserve/kserve 2d25317a, MergeRuntimeContainers: the runtime's
kserve-container patched by the predictor's model spec, args concatenated; see kserve_runtimes.py). The folder is
redhat-ai-services/ai-accelerator's single-model-serving-vllm example (tests/data/kserve-split/SOURCES)."""

from __future__ import annotations

from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.check.load import read_text
from recommender.check.run import engine_summary
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

_PAIR = Path(__file__).parent / "data" / "kserve-split" / "ai-accelerator"
_ISVC = (_PAIR / "inference-service.yaml").read_text()
_RUNTIME = (_PAIR / "serving-runtime.yaml").read_text()


def test_a_folder_combines_the_inference_service_with_its_runtime_in_another_file() -> None:
    loaded = load_inputs((str(_PAIR),))
    (found,) = loaded.found
    assert found.resource.startswith("InferenceService/") and found.resource.endswith("granite")
    # the runtime's args (the image runs vLLM's OpenAI server), the predictor's GPUs and tolerations
    assert found.argv[2:4] == ("--model", "/mnt/models/") and "--max-model-len" in found.argv
    assert found.gpus_per_pod == 1 and found.container == "kserve-container"
    assert found.image_tag == "0.4.2"
    # the model is an S3 connection KServe copies to /mnt/models: named, not guessed
    assert found.not_evaluable and "aws-connection-vllm:models/granite-3b-code-base" in found.not_evaluable
    # the runtime alone is a template, not a second server: its file is a note saying where it was read
    assert any("ServingRuntime/vllm: read with the InferenceService" in n for n in loaded.notes)
    assert not loaded.problems


def test_the_runtime_file_alone_is_still_read_as_the_container_it_holds() -> None:
    (found,) = read_text(_RUNTIME, "serving-runtime.yaml", ".yaml")
    assert found.resource.startswith("ServingRuntime/") and found.gpus_per_pod is None


def test_the_predictor_args_follow_the_runtime_args_and_an_hf_uri_names_the_model() -> None:
    isvc = _ISVC.replace(
        "      runtime: vllm\n",
        "      runtime: vllm\n      storageUri: hf://ibm-granite/granite-3b-code-base\n"
        "      args:\n      - --max-model-len=4096\n      - '--served-model-name={{.Name}}'\n"
        "      env: [{name: CUDA_VISIBLE_DEVICES, value: '0'}]\n",
    ).replace("nvidia.com/gpu: '1'", "nvidia.com/gpu: '2'")
    (found,) = read_text(isvc + "---\n" + _RUNTIME, "pair.yaml", ".yaml")  # one file holding both
    cmd = parse_serve_argv(list(found.argv))
    # KServe concatenates: the runtime's --max-model-len 2048 first, the predictor's 4096 after (argparse: last wins)
    assert engine_summary(cmd)["max_model_len"] == 4096
    assert engine_summary(cmd)["model"] == "ibm-granite/granite-3b-code-base" and found.not_evaluable is None
    assert "--served-model-name=granite" in found.argv  # ReplacePlaceholders: the InferenceService's name
    assert found.gpus_per_pod == 2 and found.env.get("CUDA_VISIBLE_DEVICES") == "0"


def test_a_predictor_naming_no_runtime_gets_the_one_that_auto_selects_its_format(tmp_path: Path) -> None:
    (tmp_path / "isvc.yaml").write_text(_ISVC.replace("      runtime: vllm\n", ""))
    (tmp_path / "runtime.yaml").write_text(_RUNTIME)
    (found,) = load_inputs((str(tmp_path),)).found
    assert found.resource.endswith("granite") and "--max-model-len" in found.argv
    other = _RUNTIME.replace("name: pytorch", "name: onnx")
    (tmp_path / "runtime.yaml").write_text(other)
    loaded = load_inputs((str(tmp_path),))  # no runtime serves pytorch: the runtime file is read on its own
    assert [f.resource.split("/")[0] for f in loaded.found] == ["ServingRuntime"]


def test_check_on_the_folder_reports_the_combined_server() -> None:
    result = invoke(["check", str(_PAIR), "--gpu", "L4"], exit_code=4)
    assert "InferenceService/default/granite" in result.stdout and "ServingRuntime/default/vllm" not in result.stdout


def test_the_inference_service_alone_names_the_runtime_it_needs(tmp_path: Path) -> None:
    # Checked without its ServingRuntime (the vLLM command is in the runtime's container): one line naming the
    # runtime and what to pass, the exit code of an input that holds no server (2), not a bare "nothing found".
    isvc = tmp_path / "inference-service.yaml"
    isvc.write_text(_ISVC)
    r = invoke(["check", "--gpu", "a100", str(isvc)], 2)
    assert "no vLLM server found: InferenceService/" in r.output
    assert (
        "runs ServingRuntime 'vllm', which is not in this file; check it together with the runtime's file" in r.output
    )
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
