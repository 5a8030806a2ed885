"""AMD's Quark releases and MiniMax's MXFP8 release that vLLM deployments serve (benchmarks/data/deployed_models.txt):
each is its bundled base model's architecture with the publisher's quantization block (reconstructed from the model
cards: the repositories' own config.json files were not found). They name their base (base_model) but are not in its
`variants:`: recommend would then offer AMD's MXFP4 / FP8-KV checkpoints on NVIDIA cards (and MXFP4 on MI300), where
vLLM runs OCP MX by emulation (quark_ocp_mx.py: "Simulated weight dequantization and activation QDQ"), and the
AMD FP8-KV repack in place of the publisher's own weights."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus, load_model
from recommender.gpu_names import resolve_gpu
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.precision import resolve_precision
from recommender.memory.weights import Parallel, tensor_bytes
from recommender.model.spec import ModelSpec
from recommender.model.tensors import model_tensors
from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed

# (release, base entry or None for an alias, method as parsed, checkpoint format)
RELEASES = (
    ("amd/Llama-3.1-70B-Instruct-FP8-KV", "meta-llama/Llama-3.1-70B-Instruct", "fp8", "fp8"),
    ("amd/Llama-3.1-405B-Instruct-FP8-KV", None, "fp8", "fp8"),
    ("amd/Kimi-K2.5-MXFP4", "moonshotai/Kimi-K2.5", "ocp-mx", "quark"),
    ("amd/GLM-5.2-MXFP4", "zai-org/GLM-5.2", "ocp-mx", "quark"),
    ("amd/MiniMax-M3-MXFP4", "MiniMaxAI/MiniMax-M3", "ocp-mx", "quark"),
    ("MiniMaxAI/MiniMax-M3-MXFP8", "MiniMaxAI/MiniMax-M3", "mxfp8", "modelopt"),
)


def _bytes_per_weight(spec: ModelSpec) -> dict[str, float]:
    """Bytes a weight per tensor group on one GPU (scales included)."""
    total: dict[str, list[int]] = {}
    for t in model_tensors(spec):
        if t.loaded:
            row = total.setdefault(t.group, [0, 0])
            row[0] += tensor_bytes(spec, t, Parallel(), 2, spec.quant)
            row[1] += t.numel
    return {group: b / n for group, (b, n) in total.items() if n}


@pytest.mark.parametrize(("release", "base", "method", "fmt"), RELEASES)
def test_release_is_its_base_in_the_publishers_precision(release: str, base: str | None, method: str, fmt: str) -> None:
    spec = resolve_model(release)
    assert spec.quant is not None and (spec.quant.method, spec.quant.checkpoint_format) == (method, fmt)
    assert reconstructed(release)
    base_spec = resolve_model(base or "meta-llama/Llama-3.1-405B-Instruct")  # an alias of the 405B base config
    assert spec.params is not None and spec.params == base_spec.params
    entry = load_model(release)
    assert entry is not None and entry.base_model == base
    if base is not None:
        base_entry = load_model(base)
        assert base_entry is not None and release not in base_entry.variants


def test_fp8_kv_releases_keep_a_16_bit_cache_under_auto() -> None:
    # Fp8Config with kv_cache_scheme static: K/V scales only; vLLM resolves `auto` to fp8 from ModelOpt's
    # kv_cache_quant_algo alone, so AMD's cards pass --kv-cache-dtype fp8
    for release in ("amd/Llama-3.1-70B-Instruct-FP8-KV", "amd/Llama-3.1-405B-Instruct-FP8-KV"):
        q = resolve_model(release).quant
        assert q is not None and q.static_input_scales and not q.kv_cache_fp8 and q.keep_unquantized == ("lm_head",)


def test_amd_mxfp4_quantizes_what_each_card_lists() -> None:
    # MXFP4: 4 bits + one e8m0 byte per 32 = 0.53125 bytes a weight; excluded groups stay bfloat16 (2 bytes)
    mx, bf16 = 0.5 + 1 / 32, 2.0
    kimi = _bytes_per_weight(resolve_model("amd/Kimi-K2.5-MXFP4"))  # layers.0.mlp, experts and shared_experts
    assert (kimi["experts"], kimi["shared_experts"], kimi["mlp"], kimi["attention"]) == (mx, mx, mx, bf16)
    for release in ("amd/GLM-5.2-MXFP4", "amd/MiniMax-M3-MXFP4"):  # dense MLP layers 0-2 excluded too
        got = _bytes_per_weight(resolve_model(release))
        assert (got["experts"], got["shared_experts"], got["mlp"], got["attention"]) == (mx, mx, bf16, bf16), release


def test_minimax_m3_mxfp8_against_its_published_size() -> None:
    # MXFP8: 1 byte + one e8m0 byte per 32 on every linear but the router and lm_head. Derived checkpoints' cards
    # give the release as ~444 GB (olka-fi/MiniMax-M3-MXFP4 "444 GB MXFP8 source", morriszjm/MiniMax-M3-MXFP8-64e
    # "~444 GB"); the bundled text model lacks the vision tower, so it lands just below.
    spec = resolve_model("MiniMaxAI/MiniMax-M3-MXFP8")
    got = _bytes_per_weight(spec)
    assert got["experts"] == got["attention"] == 1 + 1 / 32 and got["lm_head"] == 2.0
    total = sum(tensor_bytes(spec, t, Parallel(), 2, spec.quant) for t in model_tensors(spec) if t.loaded)
    assert 0.99 * 444e9 < total < 444e9


def test_amd_mxfp4_experts_take_rocms_256_round_up() -> None:
    # QuarkOCP_MX_MoEMethod.maybe_roundup_sizes -> mxfp4_round_up_hidden_size_and_intermediate_size: on ROCm the
    # hidden size and the per-partition intermediate size round up to 256. MiniMax-M3 at TP 8: 3,072 / 8 = 384 -> 512.
    # One layer's w13 on a GPU: 128 experts x [2 x 512, 6,144] at 0.5 + 1/32 byte = 128 x 3,342,336 = 427,819,008
    # (unpadded 128 x [768, 6,144] = 320,864,256); w2 128 x [6,144, 512] = 128 x 1,671,168 = 213,909,504.
    spec = resolve_model("amd/MiniMax-M3-MXFP4")
    mi355 = resolve_gpu("mi355x", load_gpus())
    precision = resolve_precision(spec, EngineFlags(tensor_parallel_size=8), mi355, VllmVersion(0, 33), [])
    assert precision.mxfp4 is not None
    layer = {t.module.rsplit(".", 1)[-1]: t for t in model_tensors(spec) if t.layer == 3 and t.group == "experts"}
    got = {n: tensor_bytes(spec, layer[n], Parallel(tp=8), 2, spec.quant, precision.mxfp4) for n in ("w13", "w2")}
    assert got == {"w13": 427_819_008, "w2": 213_909_504}
    assert tensor_bytes(spec, layer["w13"], Parallel(tp=8), 2, spec.quant) == 320_864_256  # no layout: as packed
