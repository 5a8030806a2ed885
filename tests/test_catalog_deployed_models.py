"""The list of models public vLLM material serves (benchmarks/data/deployed_models.txt, read by
benchmarks/catalog_coverage.py), and catalog entries added because that list names them: each checked against its
source by hand (the docstring says which)."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.deployed_models_list import served_ids
from recommender.catalog import load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, reconstructed

LIST = Path(__file__).parent.parent / "benchmarks" / "data" / "deployed_models.txt"
# `ID  github:OWNER/NAME@COMMIT:PATH`
_LINE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+  github:[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+$")


def test_every_listed_id_names_the_repository_commit_and_file_it_comes_from() -> None:
    lines = [line for line in LIST.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    bad = [line for line in lines if not _LINE.match(line)]
    assert bad == [] and len(lines) >= 800
    pairs = [(line.split()[0].lower(), line.split()[1].split("@")[0]) for line in lines]
    assert len(pairs) == len(set(pairs)), "an id is listed twice for one repository"


def test_an_id_completed_by_a_variable_is_not_listed() -> None:
    """vLLM's recipes serve `nvidia/Llama-3.3-70B-Instruct-$DTYPE` (FP8 or FP4): the name before the variable is not
    a repository, and the ids the same page spells out are listed."""
    text = "vllm serve nvidia/Llama-3.3-70B-Instruct-$DTYPE \\\n--model org/m-{{ size }}\nvllm serve nvidia/Llama-3.3-70B-Instruct-FP8"
    assert served_ids(text, "Llama/Llama3.3-70B.md") == {"nvidia/Llama-3.3-70B-Instruct-FP8"}


def test_orion_14b_chat_by_hand() -> None:
    """Orion-14B-Chat (mlc-llm's preset, whose commit names the repository): 40 layers of 5120 with 40 full heads
    (q/k/v/o 4 x 5120^2), MLP 3 x 5120 x 15360, two norms, untied 84,608-row embedding and head, final norm:
    14,498,288,640 parameters counted with RMSNorm-sized norms (OrionStar's "14B"; vLLM's OrionForCausalLM uses
    LayerNorm with biases, 414,720 more, which is why the entry is approximate)."""
    h, vocab = 5120, 84608
    total = 40 * (4 * h * h + 3 * h * 15360 + 2 * h) + 2 * vocab * h + h
    assert total == 14_498_288_640
    spec = resolve_model("OrionStarAI/Orion-14B-Chat")
    assert spec.params is not None and spec.params.total == total
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (40, 128, 4096)
    assert any("orion" in reason for reason in spec.approximate)


def test_ministral_3_3b_reasoning_by_hand() -> None:
    """Ministral 3 3B Reasoning 2512 (mlc-llm's preset of its config.json): 26 text layers of 3072 (q 3072 x 32 x
    128, o back, k/v 3072 x 8 x 128, gated MLP 3 x 3072 x 9216, two RMSNorms), tied 131,072-row embedding, final
    norm: 3,429,006,336 text parameters (Mistral's "3.4B language model"), plus the 24-layer Pixtral encoder of 1024
    counted as vision; 262,144 positions (YaRN factor 16 over 16,384)."""
    h = 3072
    text = 26 * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 9216 + 2 * h) + 131072 * h + h
    assert text == 3_429_006_336
    spec = resolve_model("mistralai/Ministral-3-3B-Reasoning-2512")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert 0.3e9 < spec.params.vision < 0.45e9
    assert (spec.num_kv_heads, spec.head_dim, spec.max_model_len) == (8, 128, 262144)


def test_bert_and_xlm_roberta_embedders_by_hand() -> None:
    """BERT-style embedders the list names, each a pooling model by its architecture. A BERT of hidden h, L layers,
    MLP m, vocabulary v, 512 positions and 2 token types: embeddings (v + 512 + 2) x h and a LayerNorm, per layer
    q/k/v/o h^2 + h each, MLP 2 h m + m + h, two LayerNorms, and the pooler h^2 + h. e5-small (384, 12, 1536):
    33,360,000, as bge-small-en-v1.5; bge-base-en-v1.5 (BERT-base): 109,482,240 (the BERT paper's 110M).
    multilingual-e5-large is XLM-RoBERTa-large (1024, 24, 4096, 250,002 tokens, 514 positions, 1 token type):
    559,890,432 (Conneau et al.'s 550M-class large model, 560M on the hub)."""

    def bert(h: int, layers: int, mlp: int, vocab: int, positions: int, types: int) -> int:
        embeddings = (vocab + positions + types) * h + 2 * h
        layer = 4 * (h * h + h) + 2 * h + (2 * h * mlp + mlp + h) + 2 * h
        return embeddings + layers * layer + h * h + h

    for model_id, total in (
        ("intfloat/e5-small", bert(384, 12, 1536, 30522, 512, 2)),
        ("BAAI/bge-base-en-v1.5", bert(768, 12, 3072, 30522, 512, 2)),
        ("intfloat/multilingual-e5-large", bert(1024, 24, 4096, 250002, 514, 1)),
    ):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.pooling is not None and spec.max_model_len == 512, model_id
    assert bert(384, 12, 1536, 30522, 512, 2) == 33_360_000
    assert bert(768, 12, 3072, 30522, 512, 2) == 109_482_240
    assert bert(1024, 24, 4096, 250002, 514, 1) == 559_890_432


def test_bge_reranker_base_by_hand() -> None:
    """bge-reranker-base: XLM-RoBERTa-base (768, 12 layers, MLP 3072, 250,002 tokens, 514 positions, one token
    type) without a pooler, plus the classification head (dense 768^2 + 768, out_proj 768 + 1): 278,044,417
    parameters, served by the pooling runner's classify task."""
    h, vocab = 768, 250002
    encoder = (vocab + 514 + 1) * h + 2 * h + 12 * (4 * (h * h + h) + 2 * h + (2 * h * 3072 + 3072 + h) + 2 * h)
    total = encoder + h * h + h + h + 1
    assert total == 278_044_417
    spec = resolve_model("BAAI/bge-reranker-base")
    assert spec.params is not None and spec.params.total == total and spec.pooling is not None


def test_llama_3_1_8b_fine_tunes_by_hand() -> None:
    """Tulu 3 8B (its own config.json) and SuperNova-Lite (reconstructed) keep Llama 3.1 8B's 32 layers of 4096
    (q/o 4096^2, k/v 4096 x 1024, gated MLP 3 x 4096 x 14336, two RMSNorms) and untied embedding and head: 8,030,261,248
    parameters at 128,256 rows; Tulu's 8 added tokens make 8,030,326,784 (Ai2's "8B")."""
    h = 4096
    layers = 32 * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + h
    assert layers + 2 * 128256 * h == 8_030_261_248
    assert layers + 2 * 128264 * h == 8_030_326_784
    for model_id, total in (
        ("allenai/Llama-3.1-Tulu-3-8B", 8_030_326_784),
        ("arcee-ai/Llama-3.1-SuperNova-Lite", 8_030_261_248),
    ):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.max_model_len == 131072, model_id


def test_orca_2_7b_by_hand() -> None:
    """Orca-2-7b (its own config.json): Llama-2-7B's 32 layers of 4096 with full multi-head attention (4 x 4096^2),
    gated MLP 3 x 4096 x 11008, two RMSNorms, untied embedding and head of 32,003 rows, final norm: 6,738,440,192
    parameters (Llama-2-7B's 6,738,415,616 plus 3 added tokens)."""
    h = 4096
    total = 32 * (4 * h * h + 3 * h * 11008 + 2 * h) + 2 * 32003 * h + h
    assert total == 6_738_440_192 and total - 2 * 3 * h == 6_738_415_616
    spec = resolve_model("microsoft/Orca-2-7b")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 4096


def test_tinyllama_chat_v0_3_and_thebloke_quantizations_by_hand() -> None:
    """TinyLlama-1.1B-Chat-v0.3: 22 layers of 2048 (q/o 2048^2, k/v 2048 x 4 x 64, gated MLP 3 x 2048 x 5632, two
    RMSNorms), untied 32,003-row embedding and head, final norm: 1,100,060,672 parameters ("1.1B"). TheBloke's AWQ and
    GPTQ releases of it (reconstructed) are its variants, 4-bit with the same parameters."""
    h = 2048
    total = 22 * (2 * h * h + 2 * h * 256 + 3 * h * 5632 + 2 * h) + 2 * 32003 * h + h
    assert total == 1_100_060_672
    base = resolve_model("TinyLlama/TinyLlama-1.1B-Chat-v0.3")
    assert base.params is not None and base.params.total == total and base.max_model_len == 2048
    for method in ("awq", "gptq"):
        spec = resolve_model(f"TheBloke/TinyLlama-1.1B-Chat-v0.3-{method.upper()}")
        assert (
            spec.params == base.params
            and spec.quant is not None
            and (spec.quant.method, spec.quant.bits) == (method, 4)
        )


def test_all_roberta_large_v1_by_hand() -> None:
    """all-roberta-large-v1: RoBERTa-large (1024, 24 layers, MLP 4096, 50,265 tokens, 514 positions, one token type)
    with its pooler: 355,359,744 parameters (RoBERTa-large's 355M), a pooling model of 512 positions."""
    h = 1024
    total = (
        (50265 + 514 + 1) * h + 2 * h + 24 * (4 * (h * h + h) + 2 * h + (2 * h * 4096 + 4096 + h) + 2 * h) + h * h + h
    )
    assert total == 355_359_744
    spec = resolve_model("sentence-transformers/all-roberta-large-v1")
    assert (
        spec.params is not None
        and spec.params.total == total
        and spec.pooling is not None
        and spec.max_model_len == 512
    )


def test_distilgpt2_by_hand() -> None:
    """DistilGPT2: 6 GPT-2 blocks of 768 (c_attn 768 x 2304 and c_proj 768^2 with biases, MLP 768 x 3072 and back
    with biases, two LayerNorms with biases), token and position embeddings (50,257 + 1,024 rows, the head tied),
    final LayerNorm: 81,912,576 parameters (82M, the model card's)."""
    h = 768
    block = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h)
    total = (50257 + 1024) * h + 6 * block + 2 * h
    assert total == 81_912_576
    spec = resolve_model("distilbert/distilgpt2")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 1024


def test_opt_13b_by_hand() -> None:
    """OPT-13B: a tied 50,272-row embedding and 2,050 learned positions (2,048 plus OPT's offset of 2) of 5120, 40
    layers (q/k/v/o 5120^2 with biases, two LayerNorms with biases, ReLU MLP 5120 x 20480 and back with biases),
    final LayerNorm: 12,853,473,280 parameters (Meta's "13B")."""
    h = 5120
    total = (50272 + 2050) * h + 40 * (4 * (h * h + h) + 4 * h + h * 20480 + 20480 + 20480 * h + h) + 2 * h
    assert total == 12_853_473_280
    spec = resolve_model("facebook/opt-13b")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 2048


def test_opt_66b_by_hand() -> None:
    """OPT-66B: the OPT-13B formula at 9216 wide, 64 layers, MLP 36864: 65,719,701,504 parameters (Meta's "66B")."""
    h = 9216
    total = (50272 + 2050) * h + 64 * (4 * (h * h + h) + 4 * h + h * 36864 + 36864 + 36864 * h + h) + 2 * h
    assert total == 65_719_701_504
    spec = resolve_model("facebook/opt-66b")
    assert spec.params is not None and spec.params.total == total


def test_laguna_bf16_bases_read_their_fp8_releases_at_16_bits() -> None:
    """Laguna XS.2 and S-2.1 (reconstructed): Poolside's BF16 checkpoints, the recipes' default variants, from the
    config.json of their bundled llm-compressor FP8 releases without the quantization_config. They count what the
    FP8 releases count (33,186,103,296, the recipe's "33B"; 116,872,888,320 against the recipe's "118B", the entry
    approximate for the laguna architecture) and hold 16-bit weights: 61.9 and 217.8 GiB at TP1, the FP8 releases
    a little over half of that (attention, routers and shared experts kept 16-bit)."""
    flags = EngineFlags(max_model_len=4096)
    for name, total in (("Laguna-XS.2", 33_186_103_296), ("Laguna-S-2.1", 116_872_888_320)):
        base, fp8 = resolve_model(f"poolside/{name}"), resolve_model(f"poolside/{name}-FP8")
        entry = load_model(f"poolside/{name}-FP8")
        assert entry is not None and entry.base_model == f"poolside/{name}"
        assert reconstructed(f"poolside/{name}") and base.quant is None and fp8.quant is not None
        assert base.params is not None and base.params.total == total and fp8.params == base.params
        w16, w8 = (explain(s, H100, flags, V033).stage.weights for s in (base, fp8))
        assert abs(w16 - 2 * total) / (2 * total) < 0.01 and 0.5 < w8 / w16 < 0.55


def test_granite_3_0_3b_a800m_instruct_by_hand() -> None:
    """granite-3.0-3b-a800m-instruct (reconstructed from a bitsandbytes re-quantization's keys): a tied 49,155 x 1536
    embedding, 32 layers of q/o 1536^2 and k/v 1536 x 512, 40 experts of 3 x 1536 x 512 each with a 1536 x 40
    router, two RMSNorms a layer and a final one: 3,298,793,472 parameters (IBM's "3B", 800M active)."""
    h, layers = 1536, 32
    total = 49155 * h + layers * (2 * h * h + 2 * h * 512 + 40 * 3 * h * 512 + h * 40 + 2 * h) + h
    assert total == 3_298_793_472
    spec = resolve_model("ibm-granite/granite-3.0-3b-a800m-instruct")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 4096
    assert reconstructed("ibm-granite/granite-3.0-3b-a800m-instruct")


def test_amead10_llama_3_2_awq_keep_the_embedding_16_bit() -> None:
    """AMead10's AutoAWQ releases of Llama-3.2-1B/3B-Instruct (reconstructed: the bundled bases with the AWQ block of
    the same publisher's Llama-3.1-SuperNova-Lite-AWQ): the bases' parameters, 4-bit in groups of 128. AWQ quantizes
    the decoder linears only, so the tied 128,256-row embedding stays 16-bit: 1B: 262,668,288 x 2 bytes plus
    973,078,528 linear weights at half a byte (0.942 GiB) and their group scales and zeros; 3B: 394,002,432 x 2
    plus 2,818,572,288 / 2 (2.046 GiB)."""
    flags = EngineFlags(max_model_len=4096)
    for size, embedding, linear in (("1B", 262_668_288, 973_078_528), ("3B", 394_002_432, 2_818_572_288)):
        base = resolve_model(f"meta-llama/Llama-3.2-{size}-Instruct")
        spec = resolve_model(f"AMead10/Llama-3.2-{size}-Instruct-AWQ")
        assert base.params is not None and base.params.total == embedding + linear + base.params.norms
        assert spec.params == base.params and spec.quant is not None
        assert (spec.quant.method, spec.quant.bits, spec.quant.group_size) == ("awq", 4, 128)
        assert reconstructed(f"AMead10/Llama-3.2-{size}-Instruct-AWQ")
        floor = 2 * embedding + linear / 2
        assert floor <= explain(spec, H100, flags, V033).stage.weights <= 1.05 * floor


def test_gemma_1_1_2b_it_and_gemma_2_9b_it_w8a16_by_hand() -> None:
    """gemma-1.1-2b-it (reconstructed from two derivatives' keys) is Gemma 1 2B's architecture: 18 layers of 2048,
    q/o 2048 x 2048, one KV head of 256 (2 x 2048 x 256), gated MLP 3 x 2048 x 16384, two RMSNorms, a tied 256,000-row
    embedding and the final norm: 2,506,172,416 parameters, as the bundled gemma-2b-it. Neural Magic's W8A16 of
    gemma-2-9b-it (reconstructed from its model card's scheme) holds INT8 decoder linears and the 16-bit tied
    embedding, as much as its W8A8 sibling."""
    h = 2048
    total = 18 * (2 * h * h + 2 * h * 256 + 3 * h * 16384 + 2 * h) + 256000 * h + h
    assert total == 2_506_172_416
    spec = resolve_model("google/gemma-1.1-2b-it")
    assert spec.params is not None and spec.params.total == total and spec.max_model_len == 8192
    assert spec.params == resolve_model("google/gemma-2b-it").params and reconstructed("google/gemma-1.1-2b-it")
    w8a16, w8a8 = (
        resolve_model("neuralmagic/gemma-2-9b-it-quantized.w8a16"),
        resolve_model("RedHatAI/gemma-2-9b-it-quantized.w8a8"),
    )
    assert w8a16.quant is not None and (w8a16.quant.bits, w8a16.quant.group_size) == (8, -1)  # -1: per channel
    flags = EngineFlags(max_model_len=4096)
    assert explain(w8a16, H100, flags, V033).stage.weights == explain(w8a8, H100, flags, V033).stage.weights
