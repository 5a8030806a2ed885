"""Embedding (pooling) models: vLLM's pooling runner allocates no LM head and runs no sampler (model/pooling.py).
Hand-checked each way: a pooling model loses exactly its head, a generator of the same architecture keeps it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from recommender.catalog import load_model
from recommender.memory.overheads import activation_peak_bytes
from recommender.memory.weights import Parallel, weight_bytes_per_gpu
from recommender.model.pooling import pooling_by_architecture
from recommender.sources.resolve import resolve_model


def _bf16_weights(model: str) -> int:
    spec = resolve_model(model)
    return weight_bytes_per_gpu(spec, Parallel(tp=1, pp=1), dtype_bytes=2, quant=None)


@pytest.mark.parametrize(
    ("arch", "pooling"),
    [
        ("MistralModel", True),  # registry _EMBEDDING_MODELS
        ("Qwen2Model", True),
        ("LlamaBidirectionalModel", True),
        ("BgeM3EmbeddingModel", True),
        ("Qwen2ForRewardModel", True),  # suffix "Model" (_SUFFIX_TO_DEFAULTS)
        ("ChatGLMModel", False),  # registered for generation
        ("Qwen2_5OmniModel", False),
        ("GPT2LMHeadModel", False),
        ("InternVLChatModel", False),
        ("Qwen2ForCausalLM", False),  # pooling only with a modules.json (the catalog entry says so)
        ("LlavaForConditionalGeneration", False),
    ],
)
def test_runner_auto_by_architecture_name(arch: str, pooling: bool) -> None:
    assert pooling_by_architecture(arch) is pooling


def test_e5_mistral_counts_no_head_and_loads_none() -> None:
    """e5-mistral-7b-instruct (MistralModel): Mistral-7B-v0.1's 7,241,732,096 parameters less its untied head of
    32,000 x 4096 = 131,072,000: 7,110,660,096 (the checkpoint's own "7.11B"), all of them loaded."""
    spec = resolve_model("intfloat/e5-mistral-7b-instruct")
    base = resolve_model("mistralai/Mistral-7B-v0.1")
    assert spec.pooling and not base.pooling
    assert spec.params is not None and base.params is not None
    assert base.params.total == 7_241_732_096
    assert spec.params.total == base.params.total - 32_000 * 4096 == 7_110_660_096
    assert spec.params.lm_head == 0
    assert _bf16_weights("mistralai/Mistral-7B-v0.1") - _bf16_weights("intfloat/e5-mistral-7b-instruct") == (
        2 * 131_072_000
    )


def test_gte_qwen2_keeps_the_checkpoint_head_but_does_not_load_it() -> None:
    """gte-Qwen2-7B-instruct is a Qwen2ForCausalLM whose repository is a sentence-transformers one: its checkpoint
    counts the 151,646 x 3584 = 543,499,264-parameter head (7,612,620,288 in all) but the pooling runner allocates
    none: its rows padded to 151,680 (ParallelLMHead pads the vocabulary to a multiple of 64) x 3584 x 2 bytes =
    1,087,242,240 bytes (1.01 GiB) less than the same spec as a generator. Qwen2-7B-Instruct keeps its head."""
    spec = resolve_model("Alibaba-NLP/gte-Qwen2-7B-instruct")
    assert spec.pooling and spec.params is not None
    assert spec.params.total == 7_612_620_288 and spec.params.lm_head == 151_646 * 3584 == 543_499_264
    par = Parallel(tp=1, pp=1)
    as_pooling = weight_bytes_per_gpu(spec, par, dtype_bytes=2, quant=None)
    as_generator = weight_bytes_per_gpu(replace(spec, pooling=False), par, dtype_bytes=2, quant=None)
    assert as_generator - as_pooling == 151_680 * 3584 * 2 == 1_087_242_240
    assert spec.encoder_only and not spec.approximate  # is_causal false: ENCODER_ONLY attention, no KV cache
    assert not resolve_model("Qwen/Qwen2-7B-Instruct").pooling


def test_pooling_profile_runs_no_sampler() -> None:
    """The profiling pass of a pooling model runs the pooler over the hidden states, not the sampler over
    [min(max_num_seqs, tokens), vocab] logits: the peak is the generator's less that sampler term."""
    spec = resolve_model("Qwen/Qwen3-Embedding-8B")
    assert spec.pooling
    kwargs = {"max_num_batched_tokens": 8192, "max_num_seqs": 256, "tp": 1, "last_stage": True, "version": (0, 19)}
    pooled = activation_peak_bytes(spec, **kwargs)  # type: ignore[arg-type]
    generated = activation_peak_bytes(replace(spec, pooling=False), **kwargs)  # type: ignore[arg-type]
    assert generated > pooled
    assert activation_peak_bytes(spec, **{**kwargs, "last_stage": False}) == pooled  # type: ignore[arg-type]


def test_runner_pooling_flag_through_the_cli() -> None:
    """`--runner pooling` (or `--convert embed`) on a generator checkpoint: Qwen2-7B-Instruct on an H100 loses its
    untied head (152,064 x 3584 x 2 bytes = 1.02 GiB: 14.19 -> 13.18 GiB) and its sampler profile term."""
    from click.testing import CliRunner

    from recommender.cli import cli

    def weights(*extra: str) -> str:
        argv = ["explain", "--gpu", "h100", "--", "vllm", "serve", "Qwen/Qwen2-7B-Instruct", *extra]
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 0, result.output
        return next(line for line in result.output.splitlines() if "W weights" in line).split()[-2]

    assert weights() == "14.19"
    assert weights("--runner", "pooling") == weights("--convert", "embed") == "13.18"
    assert weights("--runner", "generate", "--convert", "embed") == "14.19"


def test_a_local_sentence_transformers_directory_is_a_pooling_model(tmp_path: Path) -> None:
    """A local model directory with a modules.json (what vLLM's get_pooling_config reads) loads no LM head: its
    weights are the generator's less the untied head (the bundled Qwen2-7B-Instruct config, 152,064 x 3584 x 2 B)."""
    import json

    config = dict(load_model("Qwen/Qwen2-7B-Instruct").config)
    plain, embed = tmp_path / "plain", tmp_path / "embed"
    for folder in (plain, embed):
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
    (embed / "modules.json").write_text('[{"idx": 0, "name": "0", "path": "", "type": "x"}]')
    assert resolve_model(str(embed)).pooling and not resolve_model(str(plain)).pooling
    assert _bf16_weights(str(plain)) - _bf16_weights(str(embed)) == 152_064 * 3584 * 2


def test_catalog_round_7_embedding_models_by_hand() -> None:
    """gte-Qwen2-7B-instruct is Qwen2-7B with a 151,646-row vocabulary: 7,615,616,512 less 2 x 418 x 3584 rows of
    embedding and head = 7,612,620,288; e5-mistral-7b-instruct keeps Mistral-7B-v0.1's widths (the bundled base's
    count) without its head: a MistralModel checkpoint is the backbone alone (tests/test_pooling_models.py)."""
    gte = resolve_model("Alibaba-NLP/gte-Qwen2-7B-instruct")
    assert gte.params is not None and gte.params.total == 7_615_616_512 - 2 * 418 * 3584 == 7_612_620_288
    e5, base = resolve_model("intfloat/e5-mistral-7b-instruct"), resolve_model("mistralai/Mistral-7B-v0.1")
    assert e5.params is not None and base.params is not None and base.params.lm_head == 32000 * 4096
    assert e5.params == replace(base.params, lm_head=0)
