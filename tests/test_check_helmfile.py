"""helmfile.yaml releases (helmfile's own format: `releases:`, each a chart and a `values:` list of files and inline
mappings): a release of a chart folder of the repository is rendered by helm with its values files (relative to the
helmfile) and inline values; a values file a release names is read with its chart, not alone as the values of a chart
check does not know (underpass-vllms keeps its env/*.yaml overlays outside charts/vllm, as such repositories do)."""

from __future__ import annotations

import json
from pathlib import Path

from recommender.check.inputs import load_inputs
from recommender.serve_args import parse_serve_argv

from .conftest import invoke
from .test_check_helm import PROD, _chart

HELMFILE = """releases:
  - name: llama
    namespace: llm
    chart: ./charts/servers
    values:
      - env/prod/llama.yaml
      - maxModelLen: 16384
  - name: stack
    chart: vllm/vllm-stack
    values:
      - servingEngineSpec:
          modelSpec:
          - name: qwen
            repository: vllm/vllm-openai
            tag: v0.11.0
            modelURL: Qwen/Qwen3-8B
            requestGPU: 1
            vllmConfig: {maxModelLen: 8192}
"""


def _repo(tmp_path: Path) -> Path:
    _chart(tmp_path)
    (tmp_path / "env" / "prod").mkdir(parents=True)
    (tmp_path / "env" / "prod" / "llama.yaml").write_text(PROD.replace("model:", "image: vllm/vllm-openai\nmodel:"))
    (tmp_path / "helmfile.yaml").write_text(HELMFILE)
    return tmp_path


def test_helmfile_releases_render_their_local_chart_with_their_values(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    loaded = load_inputs((str(repo / "helmfile.yaml"),))
    llama, qwen = loaded.found
    cmd = parse_serve_argv(list(llama.argv))
    assert cmd.model == "meta-llama/Llama-3.1-70B-Instruct" and llama.gpus_per_pod == 4
    assert (cmd.values["tensor_parallel_size"], cmd.values["max_model_len"], cmd.values["kv_cache_dtype"]) == (
        4,
        16384,  # the inline mapping after the file wins
        "fp8",
    )
    assert "helmfile release llama, chart ./charts/servers" in llama.source
    assert qwen.resource == "modelSpec/qwen" and parse_serve_argv(list(qwen.argv)).model == "Qwen/Qwen3-8B"


def test_a_folder_reads_a_values_file_with_the_release_that_names_it(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    r = invoke(["check", str(repo), "--gpu", "h100", "--format", "json"])  # the chart's own values, then each release
    results = json.loads(r.stdout)
    sources = [str(x["file"]) for x in results]
    assert not any(s.endswith("env/prod/llama.yaml") for s in sources), sources  # not alone as unknown values
    assert sum("helmfile release llama" in s for s in sources) == 1
    assert "read as the values of helmfile release llama, chart ./charts/servers" in r.stderr
