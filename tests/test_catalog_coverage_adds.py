"""Catalog entries added for issue #11's coverage list (benchmarks/catalog_coverage.py), each counted by hand from
vLLM's model file for its architecture and checked against the count its publisher prints."""

from __future__ import annotations

from recommender.model.family_refusals import SERVED_UNTIL
from recommender.model.pooling import pooling_by_architecture
from recommender.sources.resolve import resolve_model

from .catalog_support import reconstructed


def test_bloom_176b_by_hand_is_the_model_cards_count() -> None:
    """bigscience/bloom (vllm bloom.py): 70 layers of h = 14336, each a fused biased QKV (3h x h + 3h), a biased dense
    (h x h + h), a biased GELU MLP h -> 4h -> h and two LayerNorms (weight and bias); a 250,880-row word embedding with
    its LayerNorm, a final LayerNorm and the head tied to the embedding. The BLOOM model card: '176,247,271,424
    parameters'. The early config names the width n_embed and the heads num_attention_heads."""
    h, layers, vocab = 14336, 70, 250880
    per_layer = (3 * h * h + 3 * h) + (h * h + h) + (h * 4 * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    total = layers * per_layer + vocab * h + 2 * h + 2 * h
    assert total == 176_247_271_424
    spec = resolve_model("bigscience/bloom")
    assert spec.params is not None and spec.params.total == total
    assert spec.params.lm_head == 0 and not spec.approximate
    assert (spec.num_layers, spec.num_heads, spec.head_dim) == (70, 112, 128)


def test_mamba_2_8b_hf_by_hand() -> None:
    """state-spaces/mamba-2.8b-hf (vllm mamba.py, MambaMixer): 64 layers of d = 2560 with inner e = 5120, state 16,
    conv 4, dt rank 160: in_proj d x 2e, a biased depthwise conv (e x 4 + e), x_proj e x (160 + 2 x 16), a biased
    dt_proj (160 x e + e), A_log e x 16, D e, out_proj e x d and one RMSNorm a layer; a 50,280-row embedding tied to
    the head and a final RMSNorm: 2,768,345,600 parameters (the release's '2.8B')."""
    d, e, layers, vocab, rank, state = 2560, 5120, 64, 50280, 160, 16
    per_layer = d * 2 * e + (e * 4 + e) + e * (rank + 2 * state) + (rank * e + e) + e * state + e + e * d + d
    total = layers * per_layer + vocab * d + d
    assert total == 2_768_345_600
    spec = resolve_model("state-spaces/mamba-2.8b-hf")
    assert spec.params is not None and spec.params.total == total and not spec.approximate
    assert round(total / 1e9, 1) == 2.8


def test_internlm2_7b_is_the_chat_releases_network_and_says_reconstructed() -> None:
    """internlm/internlm2-7b (reconstructed from a test fixture named 'InternLM2 7B'): the widths of the bundled
    internlm2-chat-7b, the publisher's own file, so the same 7,737,708,544 parameters (32 layers of 4096, 32/8 heads
    of 128, MLP 14336, untied 92,544-row embedding and head)."""
    h, layers, vocab, kv = 4096, 32, 92544, 1024
    total = layers * (2 * h * h + 2 * h * kv + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    base, chat = resolve_model("internlm/internlm2-7b"), resolve_model("internlm/internlm2-chat-7b")
    assert base.params is not None and chat.params is not None
    assert base.params.total == chat.params.total == total == 7_737_708_544
    assert base.max_model_len == chat.max_model_len == 32768
    assert reconstructed("internlm/internlm2-7b") and not reconstructed("internlm/internlm2-chat-7b")


def test_lfm2_5_releases_are_lfm2s_network_at_the_cards_counts() -> None:
    """LiquidAI/LFM2.5-1.2B-* and LFM2.5-350M (reconstructed): their cards say LFM2.5 'builds on the LFM2
    architecture' and state 1.17B parameters, 16 layers (10 LIV convolution + 6 GQA blocks) and a 65,536-token
    vocabulary for the 1.2B models, the figures of LFM2-1.2B (1,170,340,608); the 350M release is LFM2-350M's network
    (354,483,968, its card's exact count)."""
    for suffix in ("Base", "Instruct", "JP", "Thinking"):
        spec = resolve_model(f"LiquidAI/LFM2.5-1.2B-{suffix}")
        assert spec.params is not None and spec.params.total == 1_170_340_608
        assert round(spec.params.total / 1e9, 2) == 1.17
        assert spec.layer_kinds.count("full") == 6 and len(spec.layer_kinds) == 16
        assert reconstructed(f"LiquidAI/LFM2.5-1.2B-{suffix}")
    small = resolve_model("LiquidAI/LFM2.5-350M")
    assert small.params is not None and small.params.total == 354_483_968
    assert reconstructed("LiquidAI/LFM2.5-350M")


def test_mistral_community_mixtral_8x22b_by_hand() -> None:
    """mistral-community/Mixtral-8x22B-v0.1 (the repository's own config.json): 56 layers of 6144, attention q/o
    6144 x 6144 and k/v 6144 x 1024, 8 experts of 3 x 6144 x 16384, a router 6144 x 8, two RMSNorms a layer, untied
    32,000-row embedding and head and a final norm: 140,620,634,112 parameters (Mistral AI: 141B), the same network as
    the bundled mistralai/Mixtral-8x22B-v0.1."""
    h, layers, vocab = 6144, 56, 32000
    per_layer = 2 * h * h + 2 * h * 1024 + 8 * 3 * h * 16384 + h * 8 + 2 * h
    total = layers * per_layer + 2 * vocab * h + h
    assert total == 140_620_634_112 and round(total / 1e9) == 141
    community, mistral = (
        resolve_model("mistral-community/Mixtral-8x22B-v0.1"),
        resolve_model("mistralai/Mixtral-8x22B-v0.1"),
    )
    assert community.params is not None and mistral.params is not None
    assert community.params.total == mistral.params.total == total and not community.approximate


def test_persimmon_8b_by_hand_from_vllms_model_file() -> None:
    """adept/persimmon-8b-base and -chat (their own config.json files; vllm persimmon.py, served until 0.25.0): 36
    layers of h = 4096 with 64 heads of 64, each a fused biased query_key_value (3h x h + 3h), a biased dense, LayerNorm
    q/k over head_dim (weight and bias: 2 x 2 x 64), a biased relu2 MLP h -> 16384 -> h and two LayerNorms; an untied
    262,144-row embedding and bias-free lm_head and a final LayerNorm: 9,397,175,296 parameters, 'fewer than 10 billion'
    as Adept's release post says (its '8B' names the class; the 262,144-row tables hold 2.1B, '70k unused embeddings'
    among them)."""
    h, layers, vocab, head, inter = 4096, 36, 262144, 64, 16384
    per_layer = (3 * h * h + 3 * h) + (h * h + h) + 2 * 2 * head + (h * inter + inter) + (inter * h + h) + 2 * 2 * h
    total = layers * per_layer + 2 * vocab * h + 2 * h
    assert total == 9_397_175_296 and total < 10**10
    for model in ("adept/persimmon-8b-base", "adept/persimmon-8b-chat"):
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == total and not spec.approximate
        assert (spec.head_dim, spec.max_model_len) == (64, 16384)


def test_gpt_bigcode_santacoder_by_hand() -> None:
    """bigcode/gpt_bigcode-santacoder (reconstructed): 24 layers of 2048 with 16 query heads of 128 and one shared K/V
    head, a biased c_attn (2048 + 2 x 128 rows) and c_proj, a biased GELU MLP of 8192, two LayerNorms a layer, a
    learned 2,048-row position table, a 49,280-row embedding tied to the head and a final LayerNorm: 1,124,886,528
    parameters (BigCode: SantaCoder, 1.1B)."""
    h, layers, vocab, inter = 2048, 24, 49280, 8192
    per_layer = ((h + 2 * 128) * h + h + 256) + (h * h + h) + (h * inter + inter) + (inter * h + h) + 2 * 2 * h
    total = layers * per_layer + vocab * h + 2048 * h + 2 * h
    assert total == 1_124_886_528 and round(total / 1e9, 1) == 1.1
    spec = resolve_model("bigcode/gpt_bigcode-santacoder")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert reconstructed("bigcode/gpt_bigcode-santacoder")


def test_minicpm_2b_is_a_tied_llama_layout_at_its_published_counts() -> None:
    """openbmb/MiniCPM-2B-dpo-bf16 (its own config.json, which names no model_type) and the bundled sft release: vllm
    minicpm.py builds a Llama-style decoder, 40 layers of 2304 with 36 heads of 64 and a gated MLP of 5760, and ties
    the 122,753-row head to the embedding (the remote MiniCPMConfig's default): 2,724,880,896 parameters, OpenBMB's
    '2.4B non-embedding' (2,442,057,984) and 2.7B in all. Before the MiniCPM row both read as an untied-by-default
    Llama guess (the dpo file: 3.0B)."""
    h, layers, vocab = 2304, 40, 122753
    non_embedding = layers * (4 * h * h + 3 * h * 5760 + 2 * h) + h
    assert non_embedding == 2_442_057_984 and round(non_embedding / 1e9, 1) == 2.4
    for model in ("openbmb/MiniCPM-2B-dpo-bf16", "openbmb/MiniCPM-2B-sft-bf16"):
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == non_embedding + vocab * h == 2_724_880_896
        assert spec.params.lm_head == 0 and not spec.approximate


def _mamba_total(d: int, layers: int, rank: int, vocab: int = 50280, state: int = 16) -> int:
    """vllm mamba.py MambaMixer per layer (inner e = 2d: in_proj, biased conv, x_proj, biased dt_proj, A_log, D,
    out_proj) and one RMSNorm, a tied embedding and the final norm."""
    e = 2 * d
    per_layer = d * 2 * e + (e * 4 + e) + e * (rank + 2 * state) + (rank * e + e) + e * state + e + e * d + d
    return layers * per_layer + vocab * d + d


def test_mamba_130m_and_790m_hf_by_hand() -> None:
    """state-spaces/mamba-130m-hf (a full fine-tune's config.json) and mamba-790m-hf (reconstructed): 24 layers of 768
    (dt rank 48) and 48 layers of 1536 (dt rank 96), tied 50,280-row vocabulary: 129,135,360 and 793,204,224
    parameters, the releases' '130m' and '790m'."""
    small, mid = resolve_model("state-spaces/mamba-130m-hf"), resolve_model("state-spaces/mamba-790m-hf")
    assert small.params is not None and small.params.total == _mamba_total(768, 24, 48) == 129_135_360
    assert mid.params is not None and mid.params.total == _mamba_total(1536, 48, 96) == 793_204_224
    assert not small.approximate and reconstructed("state-spaces/mamba-790m-hf")


def test_olmo_2_0425_1b_by_hand() -> None:
    """allenai/OLMo-2-0425-1B (a full fine-tune's config.json; vllm olmo2.py): 16 layers of 2048 with 16 heads of 128,
    q_norm / k_norm over all heads (2048 each), post-attention and post-feedforward RMSNorms, gated MLP 8192, untied
    100,352-row embedding and head and a final norm: 1,484,916,736 parameters (Ai2: 1.48B)."""
    h, layers, vocab = 2048, 16, 100352
    total = layers * (4 * h * h + 3 * h * 8192 + 4 * h) + 2 * vocab * h + h
    assert total == 1_484_916_736 and round(total / 1e9, 2) == 1.48
    spec = resolve_model("allenai/OLMo-2-0425-1B")
    assert spec.params is not None and spec.params.total == total and not spec.approximate


def test_fuyu_8b_is_persimmons_decoder_and_says_what_it_leaves_out() -> None:
    """adept/fuyu-8b (its own config.json; vllm fuyu.py): PersimmonForCausalLM built from the same flat config, so
    Persimmon-8B's 9,397,175,296 decoder weights, plus one biased ColumnParallelLinear from 30 x 30 x 3 patches to
    4096 (11,063,296 weights, 9,408,238,592 in all) that is not laid out: the entry says so (approximate), and vLLM
    0.33 refuses the architecture (served until 0.25.0, as Persimmon)."""
    patch = 30 * 30 * 3 * 4096 + 4096
    assert patch == 11_063_296 and 9_397_175_296 + patch == 9_408_238_592
    fuyu, persimmon = resolve_model("adept/fuyu-8b"), resolve_model("adept/persimmon-8b-base")
    assert fuyu.params is not None and persimmon.params is not None
    assert fuyu.params.total == persimmon.params.total
    assert any("vision_embed_tokens" in reason for reason in fuyu.approximate)
    assert SERVED_UNTIL["FuyuForCausalLM"] == SERVED_UNTIL["PersimmonForCausalLM"] == "0.25.0"


def test_aquilachat_7b_is_a_generative_aquila_model() -> None:
    """BAAI/AquilaChat-7B (its own config.json: architectures AquilaModel, model_type stated twice, the last one
    "llama"): vLLM's registry ran AquilaModel as LlamaForCausalLM until 0.24.0, a generator, so its untied head
    counts: Aquila-7B's 7,295,537,152, not the 6,885,904,384 of a headless '*Model' backbone."""
    chat, base = resolve_model("BAAI/AquilaChat-7B"), resolve_model("BAAI/Aquila-7B")
    assert chat.params is not None and base.params is not None
    assert chat.params.total == base.params.total == 7_295_537_152
    assert chat.params.lm_head == 100008 * 4096 and not pooling_by_architecture("AquilaModel")
    assert SERVED_UNTIL["AquilaModel"] == SERVED_UNTIL["AquilaForCausalLM"] == "0.24.0"


def test_opt_iml_max_30b_is_opt_30b_by_hand() -> None:
    """facebook/opt-iml-max-30b (reconstructed as OPT-30B, the model OPT-IML fine-tunes; vllm opt.py): 48 layers of
    7168 with biased q/k/v/o (4h^2 + 4h), a biased ReLU MLP of 28672 and two LayerNorms, a 50,272-row embedding tied to
    the head, a learned 2,048 + 2-row position table and a final LayerNorm: 29,974,540,288 parameters (OPT-30B)."""
    h, layers, ffn, vocab = 7168, 48, 28672, 50272
    per_layer = (4 * h * h + 4 * h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    total = layers * per_layer + vocab * h + (2048 + 2) * h + 2 * h
    assert total == 29_974_540_288 and round(total / 1e9) == 30
    spec = resolve_model("facebook/opt-iml-max-30b")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert reconstructed("facebook/opt-iml-max-30b")


def test_mpt_7b_storywriter_is_mpt_7b_at_65k() -> None:
    """mosaicml/mpt-7b-storywriter (its own config.json): MPT-7B fine-tuned at 65,536 tokens, so the bundled MPT-7B's
    6,649,286,656 parameters (32 bias-free layers of 4096, ALiBi adds no position table) and max_seq_len 65,536."""
    h, layers, vocab = 4096, 32, 50432
    total = layers * (4 * h * h + 2 * h * 4 * h + 2 * h) + vocab * h + h
    story, base = resolve_model("mosaicml/mpt-7b-storywriter"), resolve_model("mosaicml/mpt-7b")
    assert story.params is not None and base.params is not None
    assert story.params.total == base.params.total == total == 6_649_286_656
    assert (story.max_model_len, base.max_model_len) == (65536, 2048) and not story.approximate


def test_ms_marco_minilm_l6_cross_encoder_by_hand() -> None:
    """cross-encoder/ms-marco-MiniLM-L-6-v2 (a full fine-tune's config.json; vllm bert.py BertForSequenceClassification):
    word / position / token-type embeddings and their LayerNorm, 6 post-LayerNorm layers of 384 (biased q/k/v/o,
    biased GELU MLP of 1536, two LayerNorms), the pooler (384 x 384 + bias) and a one-label classifier: 22,713,601
    parameters (the card's 22.7M)."""
    h, layers, inter = 384, 6, 1536
    embeddings = 30522 * h + 512 * h + 2 * h + 2 * h
    per_layer = (4 * h * h + 4 * h) + (2 * h * inter + inter + h) + 2 * 2 * h
    total = embeddings + layers * per_layer + (h * h + h) + (h + 1)
    assert total == 22_713_601
    spec = resolve_model("cross-encoder/ms-marco-MiniLM-L-6-v2")
    assert spec.params is not None and spec.params.total == total and not spec.approximate


def test_bloomz_is_bloom_176b_and_says_reconstructed() -> None:
    """bigscience/bloomz (reconstructed): BLOOMZ fine-tunes BLOOM on xP3 without changing the network, so the 176B
    member counts BLOOM's 176,247,271,424 parameters."""
    bloomz, bloom = resolve_model("bigscience/bloomz"), resolve_model("bigscience/bloom")
    assert bloomz.params is not None and bloom.params is not None
    assert bloomz.params.total == bloom.params.total == 176_247_271_424
    assert reconstructed("bigscience/bloomz") and not reconstructed("bigscience/bloom")


def test_deepseek_v2_and_chat_are_the_236b_network() -> None:
    """deepseek-ai/DeepSeek-V2 and -Chat (reconstructed from DeepSeek-V2.5's config.json, whose widths a V2-Chat-0628
    build's file repeats): 235,741,434,880 parameters, DeepSeek's '236B total'."""
    v25 = resolve_model("deepseek-ai/DeepSeek-V2.5")
    assert v25.params is not None and round(v25.params.total / 1e9) == 236
    for model in ("deepseek-ai/DeepSeek-V2", "deepseek-ai/DeepSeek-V2-Chat"):
        spec = resolve_model(model)
        assert spec.params is not None and spec.params.total == v25.params.total == 235_741_434_880
        assert spec.mla is not None and reconstructed(model)
