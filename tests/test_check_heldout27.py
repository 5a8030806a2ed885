"""Readings fixed after held-out round 27 (benchmarks/data/check-heldout/round27: each case a short excerpt of the public
file its SOURCES names), each a general rule of the tool that runs the file, not a rule for that file."""

from __future__ import annotations

from pathlib import Path

from .check_support import engine_settings, found_in, write_file

# OLAF-OSS/gemma4-vllm pod.sh (round 27): podman's own `--pod NAME` takes a value (podman-run(1)), so the image is the
# first word after it that is no option's value, not the pod's name
POD_SH = """#!/bin/bash
set -euo pipefail
POD_NAME="gemma4"
IMAGE="gemma4-vllm:latest"
podman run -d \\
  --pod "$POD_NAME" \\
  --name "${POD_NAME}-vllm" \\
  --device nvidia.com/gpu=all \\
  -e HF_HUB_OFFLINE=1 \\
  "$IMAGE" \\
  --model /model \\
  --quantization bitsandbytes \\
  --max-model-len 8192 \\
  --gpu-memory-utilization 0.90
"""


def test_podmans_pod_option_takes_a_value_and_the_image_follows_it(tmp_path: Path) -> None:
    (found,) = found_in(write_file(tmp_path, "pod.sh", POD_SH))
    settings = engine_settings(found)
    assert (settings["model"], settings["max_model_len"], settings["quantization"]) == ("/model", 8192, "bitsandbytes")
    assert found.container == "gemma4-vllm:latest"
    # without --pod's value the pod's name was the image and nothing ran vLLM
    (found,) = found_in(write_file(tmp_path, "pod.sh", POD_SH.replace("--pod", "--pod-id-file")))
    assert engine_settings(found)["model"] == "/model"
