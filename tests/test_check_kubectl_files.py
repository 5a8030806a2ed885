"""A script that writes a manifest from a here-document into a file and then `kubectl apply -f`s that file deploys
the manifest (bash(1) here-documents and redirections; the shape of a public setup script:
benchmarks/data/check-heldout/round21/SOURCES, aws-dlc). Hand-written minimal scripts."""

from __future__ import annotations

import pytest

from recommender.check.commands import read_command
from recommender.check.load import read_text

MANIFEST = """apiVersion: apps/v1
kind: Deployment
metadata: {name: llm, namespace: $NS}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.9.0
        args: ["--model", "Qwen/Qwen3-8B", "--max-model-len", "8192"]
        resources: {limits: {nvidia.com/gpu: 2}}
"""


def _read(script: str) -> list[tuple[str, tuple[str, ...], int | None]]:
    found = read_command(script, "setup.sh", read_manifest=lambda text, src: read_text(text, src, ".yaml"))
    return [(f.resource, f.argv[2:], f.gpus_per_pod) for f in found]


@pytest.mark.parametrize(
    "write",
    ["cat > vllm.yaml << 'EOF'", "cat <<EOF >vllm.yaml", "tee vllm.yaml <<'EOF' >/dev/null"],
)
def test_a_manifest_written_from_a_here_document_then_applied(write: str) -> None:
    script = f"NS=prod\n{write}\n{MANIFEST}EOF\necho written\nkubectl apply -f vllm.yaml -n $NS\n"
    ((resource, args, gpus),) = _read(script)
    assert args == ("--model", "Qwen/Qwen3-8B", "--max-model-len", "8192") and gpus == 2
    # a quoted delimiter keeps `$NS` as written; an unquoted one expands it
    assert resource == ("Deployment/$NS/llm" if "'EOF'" in write else "Deployment/prod/llm")


def test_a_written_manifest_that_is_never_applied_deploys_nothing() -> None:
    assert _read(f"cat > vllm.yaml <<'EOF'\n{MANIFEST}EOF\nkubectl apply -f other.yaml\n") == []
