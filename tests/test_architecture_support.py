"""Which vLLM release can load which architecture: profiles/architectures.yaml, the rule, and the three commands.

The table rows below were checked by hand against the release tags of vLLM's repository (`git show
TAG:vllm/model_executor/models/__init__.py` before 0.6.5, `registry.py` after): the architecture is absent at the
tag before and present at the tag named, one row per era of the registry's layout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.architecture_table import registry_names
from recommender.catalog import first_release_from_row, load_first_releases, load_gpus
from recommender.gpu_names import resolve_gpu
from recommender.memory.architecture_support import architecture_issues
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.startup_issues import IssueKind
from recommender.model.spec import FirstRelease
from recommender.sources.resolve import resolve_model

from .conftest import invoke

# (architecture, first release, the tag before it that lacks it: checked by hand, named for the reader)
HAND_CHECKED = [
    ("LlamaForCausalLM", "0.4.0", None),  # __init__.py _MODELS at v0.4.0, the oldest release modelled
    ("Gemma2ForCausalLM", "0.5.1", "v0.5.0.post1"),  # __init__.py _GENERATION_MODELS
    ("DeepseekV3ForCausalLM", "0.6.6", "v0.6.5"),  # registry.py _TEXT_GENERATION_MODELS
    ("Qwen3ForCausalLM", "0.8.4", "v0.8.3"),
    ("NemotronHForCausalLM", "0.9.1", "v0.9.0.1"),
    ("GptOssForCausalLM", "0.10.1", "v0.10.0"),
    ("MiniMaxM2ForCausalLM", "0.11.1", "v0.11.0"),
]


@pytest.mark.parametrize(("arch", "first", "before"), HAND_CHECKED)
def test_first_release_rows_match_the_tags(arch: str, first: str, before: str | None) -> None:
    del before  # documentation: `git show {before}:...` lacks the architecture
    row = load_first_releases()[arch]
    assert (row.first, row.after, row.by) == (first, None, None)
    assert f"at tag v{first} (" in row.source


def test_pinned_and_bracket_rows() -> None:
    """Qwen3.5: 0.16.0 refuses it with vLLM's message, 0.17.0's release notes add it, and a 0.16.1 development
    build served it (field record J034): pinned to the bracket after 0.16.0, by 0.17.0, with its sources;
    MiniMaxM3SparseForCausalLM is absent at v0.14.0rc0 and in 0.33: the generated bracket."""
    table = load_first_releases()
    q35 = table["Qwen3_5MoeForConditionalGeneration"]
    assert (q35.after, q35.by) == ("0.16.0", "0.17.0") and "runpod-workers/worker-vllm/issues/279" in q35.source
    m3 = table["MiniMaxM3SparseForCausalLM"]
    assert (m3.first, m3.after, m3.by) == (None, "0.13.0", "0.33.0")


def test_gemma4_is_a_bracket_because_a_0_17_2_build_served_it() -> None:
    """Gemma 4 first shipped upstream in 0.19.0, but field16 X001 served google/gemma-4-31B-it on a 0.17.2rc1.dev133
    build (Vertex Model Garden's pytorch-vllm-serve:gemma4 image): a build numbered 0.17.2 to 0.18 may hold it, so
    those are uncertain (a warning), 0.17.1 and older are refused, 0.19.0 loads it."""
    row = load_first_releases()["Gemma4ForConditionalGeneration"]
    assert (row.first, row.after, row.by) == (None, "0.17.1", "0.19.0") and "X001" in row.source
    v = VllmVersion.parse
    assert [i.kind for i in architecture_issues(row, v("0.17.1"))] == [IssueKind.ARCHITECTURE_NOT_IN_RELEASE]
    for version in ("0.17.2", "0.18.1"):
        issues = architecture_issues(row, v(version))
        assert [i.kind for i in issues] == [IssueKind.ARCHITECTURE_RELEASE_UNCERTAIN] and not issues[0].fatal
    assert architecture_issues(row, v("0.19.0")) == []


def test_registry_names_reads_both_layouts_and_skips_what_no_checkpoint_names() -> None:
    old = '_MODELS = {\n    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),\n}\n'
    new = (
        '_TEXT_GENERATION_MODELS = {\n    "Qwen3ForCausalLM": ("qwen3", "Qwen3ForCausalLM"),\n'
        '    "Foo": (\n        "foo",\n        "FooForCausalLM",\n    ),\n}\n'
        '_SPECULATIVE_DECODING_MODELS = {\n    "EagleLlamaForCausalLM": ("llama_eagle", "EagleLlamaForCausalLM"),\n}\n'
        '_PREVIOUSLY_SUPPORTED_MODELS = {\n    "MotifForCausalLM": "0.10.2",\n}\n'
    )
    assert registry_names(old) == {"LlamaForCausalLM"}
    assert registry_names(new) == {"Qwen3ForCausalLM", "Foo"}


def test_the_rule_before_inside_and_after() -> None:
    pinned = FirstRelease("Qwen3ForCausalLM", "0.8.4", None, None, "registry.py at tag v0.8.4")
    bracket = FirstRelease("MiMoV2FlashForCausalLM", None, "0.13.0", "0.33.0", "absent at v0.14.0rc0")
    v = VllmVersion.parse
    assert [i.kind for i in architecture_issues(pinned, v("0.8.3"))] == [IssueKind.ARCHITECTURE_NOT_IN_RELEASE]
    assert architecture_issues(pinned, v("0.8.4")) == [] and architecture_issues(None, v("0.4.0")) == []
    (old,) = architecture_issues(bracket, v("0.13.0"))
    assert old.fatal and "absent from vLLM 0.13.0, present by 0.33.0" in old.message
    assert not architecture_issues(bracket, v("0.13.1"))[0].fatal  # a patch release after the tag: not known
    (inside,) = architecture_issues(bracket, v("0.20.0"))
    assert inside.kind is IssueKind.ARCHITECTURE_RELEASE_UNCERTAIN and not inside.fatal
    assert architecture_issues(bracket, v("0.33.0")) == []


def test_a_malformed_row_is_refused_with_its_name() -> None:
    with pytest.raises(ValueError, match="Foo"):
        first_release_from_row("Foo", {"first": "0.8"}, "architectures.yaml")
    with pytest.raises(ValueError, match="Foo"):
        first_release_from_row("Foo", {"first": "0.8.4", "after": "0.8.3", "source": "x"}, "architectures.yaml")


def test_explain_of_a_release_before_the_architecture_fails_with_vllms_words() -> None:
    spec = resolve_model("Qwen/Qwen3-8B")
    gpu, flags = resolve_gpu("h100", load_gpus()), EngineFlags(max_model_len=4096)
    old = explain(spec, gpu, flags, VllmVersion.parse("0.8.3"))
    assert not old.fits and IssueKind.ARCHITECTURE_NOT_IN_RELEASE in old.error_kinds
    assert old.errors[0].startswith("vLLM 0.8.3 cannot load Qwen3ForCausalLM: first in vLLM 0.8.4 (")
    assert "Model architectures ['Qwen3ForCausalLM'] are not supported for now" in old.errors[0]
    assert explain(spec, gpu, flags, VllmVersion.parse("0.8.4")).fits


def test_recommend_for_an_old_release_says_why_in_one_line() -> None:
    args = ["recommend", "--model", "Qwen/Qwen3-8B", "--gpu", "h100", "--vllm-version", "0.6.3"]
    r = invoke([*args, "--concurrency", "10"], exit_code=3)
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("Error: no configuration of Qwen/Qwen3-8B starts on vLLM 0.6.3: vLLM 0.6.3 cannot load ")
    assert "Qwen3ForCausalLM: first in vLLM 0.8.4" in line


def test_explain_cli_prints_the_error_line() -> None:
    r = invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "h100", "--vllm-version", "0.8.3"])
    assert "vLLM FAILS at startup" in r.stdout
    assert "error: vLLM 0.8.3 cannot load Qwen3ForCausalLM: first in vLLM 0.8.4" in r.stdout


# benchmarks/data/check-heldout/round15 "Noticed": the arbm Deployment (its SOURCES names the file) runs
# vllm/vllm-openai:v0.6.6 with nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 at TP 4 on OCI's 4 x A10; it passed on
# memory, but NemotronHForCausalLM is first in vLLM 0.9.1's registry.
ARBM = """apiVersion: apps/v1
kind: Deployment
metadata: {name: nemotron}
spec:
  template:
    spec:
      nodeSelector: {node.kubernetes.io/instance-type: BM.GPU.A10.4}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.6.6
        args: ["--model", "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "--tensor-parallel-size", "4"]
        resources: {limits: {nvidia.com/gpu: 4}}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"""


def test_check_fails_an_image_whose_release_cannot_load_the_model(tmp_path: Path) -> None:
    path = tmp_path / "deployment.yaml"
    path.write_text(ARBM, encoding="utf-8")
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"], exit_code=1).stdout)
    assert r["status"] == "fail"
    assert any("vLLM 0.6.6 cannot load NemotronHForCausalLM: first in vLLM 0.9.1" in f for f in r["failures"])
    newer = ARBM.replace("v0.6.6", "v0.12.0").replace('"4"]', '"4", "--gpu-memory-utilization", "0.85"]')
    path.write_text(newer, encoding="utf-8")
    (r,) = json.loads(invoke(["check", str(path), "--format", "json"]).stdout)
    assert r["status"] == "pass"


def test_show_names_the_first_release() -> None:
    out = json.loads(invoke(["show", "Qwen/Qwen3-8B", "--format", "json"]).stdout)
    assert out["vllm_first_release"] == "0.8.4"


def test_a_variant_whose_layers_came_later_decides_for_its_config() -> None:
    """NemotronHForCausalLM is in the registry from 0.9.1 (Nemotron-H, no experts); nemotron_h.py builds the MoE
    mixer (n_routed_experts, Nemotron-3-Nano) from v0.11.1 and the latent MoE (moe_latent_size, Nemotron-3-Super)
    from v0.13.0 (checked by hand at the tags)."""
    v = VllmVersion.parse
    dense = resolve_model("nvidia/Nemotron-H-56B-Base-8K").first_release
    nano = resolve_model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16").first_release
    sup = resolve_model("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8").first_release
    assert dense is not None and (dense.first, dense.config_key) == ("0.9.1", None)
    assert nano is not None and (nano.first, nano.config_key) == ("0.11.1", "n_routed_experts")
    assert sup is not None and (sup.first, sup.config_key) == ("0.13.0", "moe_latent_size")
    (issue,) = architecture_issues(nano, v("0.10.2"))
    assert issue.fatal and issue.message.startswith(
        "vLLM 0.10.2 cannot load NemotronHForCausalLM with `n_routed_experts` in config.json: first in vLLM 0.11.1"
    )
    assert architecture_issues(dense, v("0.10.2")) == [] and architecture_issues(nano, v("0.11.1")) == []
    assert architecture_issues(sup, v("0.12.0"))[0].fatal and architecture_issues(sup, v("0.13.0")) == []
    (older,) = architecture_issues(sup, v("0.8.0"))  # before the registry names it: vLLM's own refusal
    assert "first in vLLM 0.9.1" in older.message and "are not supported for now" in older.message
