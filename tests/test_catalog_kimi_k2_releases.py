"""Kimi K2's other releases (issue 11): Kimi-K2-Base and Kimi-K2-Instruct-0905, both reconstructed from the bundled
Kimi-K2-Instruct config.json (Moonshot's README gives the two July variants one model summary and block-FP8
checkpoints; the September release keeps the 1T / 32B MoE and doubles the context to 256K)."""

from __future__ import annotations

from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed

INSTRUCT = "moonshotai/Kimi-K2-Instruct"


def test_kimi_k2_base_is_the_instruct_architecture_in_block_fp8() -> None:
    """Kimi-K2-Base: the Instruct release's 1,026,408,232,448 parameters (Moonshot's '1T'), 128 x 128 block FP8,
    131,072 positions (the README's 128K); at TP=8 it loads what the Instruct release loads."""
    base, instruct = resolve_model("moonshotai/Kimi-K2-Base"), resolve_model(INSTRUCT)
    assert base.params is not None and base.params == instruct.params
    assert base.params.total == 1_026_408_232_448
    assert base.quant is not None and base.quant.method == "fp8" and base.quant.block == (128, 128)
    assert base.max_model_len == 131072 and reconstructed("moonshotai/Kimi-K2-Base")
    flags = EngineFlags(max_model_len=8192, tensor_parallel_size=8)
    assert explain(base, H100, flags, V033).stage.weights == explain(instruct, H100, flags, V033).stage.weights


def test_kimi_k2_instruct_0905_doubles_the_context() -> None:
    """Kimi-K2-Instruct-0905: the same parameters and FP8 blocks, but 262,144 positions (yarn factor 64 over 4,096,
    as the 256K Kimi releases write it), so a plan that takes the model's length holds twice the July release's MLA
    cache per request: (512 + 64) x 2 bytes x 61 layers per token."""
    new, old = resolve_model("moonshotai/Kimi-K2-Instruct-0905"), resolve_model(INSTRUCT)
    assert new.params is not None and new.params == old.params
    assert (new.max_model_len, old.max_model_len) == (262144, 131072)
    assert new.quant is not None and new.quant.block == (128, 128)
    e = explain(new, H100, EngineFlags(tensor_parallel_size=8), V033)
    assert e.stage.layout.bytes_per_token == (512 + 64) * 2 * 61
    assert e.max_model_len == 262144 and e.blocks_per_request == 262144 // e.stage.layout.block_size
    assert reconstructed("moonshotai/Kimi-K2-Instruct-0905")
