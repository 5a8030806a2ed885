"""Catalog entries of GPT-style decoders (LayerNorm, biased or fused attention, ungated MLPs): BLOOM, MPT, GPT-NeoX
(Pythia, Dolly), OPT, GPT-2 and StarCoder. Entries and aliases are checked against their sources by hand; each
test's docstring names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.model.parse import parse_config
from recommender.sources.resolve import resolve_model

from .catalog_support import page_bytes


def test_bloom_560m_by_hand() -> None:
    """BLOOM: word embedding with its LayerNorm, 24 layers of 1024 (fused query_key_value 3 x 1024^2, dense 1024^2,
    dense_h_to_4h / dense_4h_to_h 4 x 1024^2 each, every linear biased, two LayerNorms with biases), final LayerNorm,
    the head tied: 559,214,592 parameters, the card's 559M. The publisher's onnx/config.json prints 756 bytes."""
    h, layers, vocab = 1024, 24, 250880
    layer = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
    total = vocab * h + 2 * h + layers * layer + 2 * h
    assert total == 559_214_592
    spec = resolve_model("bigscience/bloom-560m")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert page_bytes("bigscience/bloom-560m") == 756


def test_mpt_7b_by_hand() -> None:
    """MPT (vllm mpt.py): 32 layers of 4096, Wqkv 3 x 4096^2 and out_proj 4096^2, up/down 4 x 4096^2 each (ungated),
    no biases and bias-free LayerNorms (no_bias), ALiBi, the 50432-row embedding is the head: 6,649,286,656
    parameters, the card's 6.7B. The instruct fine-tune's config page prints 1,326 bytes; base and instruct read
    the same."""
    h, layers, vocab = 4096, 32, 50432
    total = vocab * h + layers * (4 * h * h + 8 * h * h + 2 * h) + h
    assert total == 6_649_286_656
    for model_id in ("mosaicml/mpt-7b", "mosaicml/mpt-7b-instruct"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total, model_id
        assert spec.num_layers == 32 and spec.max_model_len == 2048 and not spec.approximate
    assert page_bytes("mosaicml/mpt-7b-instruct") == 1326


def test_mpt_reader_reads_bias_and_grouped_kv_heads() -> None:
    """An MPT config with no_bias false counts every linear and LayerNorm bias; attn_config.kv_n_heads sets the KV
    heads (MPTAttention's QKVParallelLinear), here 8 of 32 heads of 128."""
    entry = load_model("mosaicml/mpt-7b-instruct")
    assert entry is not None
    config = {**entry.config, "no_bias": False, "attn_config": {**entry.config["attn_config"], "kv_n_heads": 8}}
    spec = parse_config(config, name="mpt-7b-instruct, biased", source="test")
    h, layers, vocab, kv = 4096, 32, 50432, 8 * 128
    attention = layers * ((h * h + 2 * h * kv + h + 2 * kv) + (h * h + h))
    mlp = layers * (2 * 4 * h * h + 4 * h + h)
    assert spec.num_kv_heads == 8 and spec.params is not None
    assert (spec.params.attention, spec.params.mlp) == (attention, mlp)
    assert spec.params.norms == (2 * layers + 1) * 2 * h and spec.params.embedding == vocab * h


def test_pythia_1_4b_by_hand() -> None:
    """GPT-NeoX (Pythia 1.4B): 24 layers of 2048, fused query_key_value 3 x 2048^2 and dense 2048^2 with biases, MLP
    2 x 2048 x 8192 with biases, two LayerNorms; embedding and untied embed_out 50304 x 2048, final LayerNorm:
    1,414,647,808 parameters, the Pythia suite's figure. The fine-tune's page prints 722 bytes."""
    h, layers, ffn, vocab = 2048, 24, 8192, 50304
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    total = 2 * vocab * h + layers * layer + 2 * h
    assert total == 1_414_647_808
    spec = resolve_model("EleutherAI/pythia-1.4b")
    assert spec.params is not None and spec.params.total == total
    assert page_bytes("EleutherAI/pythia-1.4b") == 722


def test_opt_1_3b_and_gpt_neox_20b_by_hand() -> None:
    """OPT-1.3B: embedding 50272 x 2048 and 2050 learned positions (OPT's offset 2), 24 layers (q, k, v, o and fc1/fc2
    of 8192, all biased; two LayerNorms), final LayerNorm, tied head: 1,315,758,080. GPT-NeoX-20B: 44 layers of 6144
    (fused QKV and dense with biases, MLP 4 x 6144 with biases, two LayerNorms), untied 50432-row embedding and head,
    final LayerNorm: 20,554,567,680, the paper's figure."""
    h, ffn = 2048, 8192
    layer = 4 * (h * h + h) + (h * ffn + ffn) + (ffn * h + h) + 2 * 2 * h
    opt = 50272 * h + (2048 + 2) * h + 24 * layer + 2 * h
    assert opt == 1_315_758_080
    spec = resolve_model("facebook/opt-1.3b")
    assert spec.params is not None and spec.params.total == opt
    assert page_bytes("facebook/opt-1.3b") == 749
    h, ffn = 6144, 24576
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    neox = 2 * 50432 * h + 44 * layer + 2 * h
    assert neox == 20_554_567_680
    spec = resolve_model("EleutherAI/gpt-neox-20b")
    assert spec.params is not None and spec.params.total == neox
    assert page_bytes("EleutherAI/gpt-neox-20b") == 692


def test_starcoder_multi_query_by_hand() -> None:
    """StarCoder (GPT-BigCode, multi_query): 40 layers of 6144, c_attn 6144 x (6144 + 2 x 128) and c_proj 6144^2 with
    biases, MLP 6144 x 24576 twice with biases, two LayerNorms; 49152-row embedding (tied head) and 8192 learned
    positions, final LayerNorm. One KV head of 128 per layer. WizardCoder-15B adds one token. Pages: 992 and 997."""
    h, ffn, head = 6144, 24576, 128
    layer = (h * (h + 2 * head) + h + 2 * head) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    total = 49152 * h + 8192 * h + 40 * layer + 2 * h
    spec = resolve_model("bigcode/starcoder")
    assert spec.params is not None and spec.params.total == total and spec.num_kv_heads == 1
    wizard = resolve_model("WizardLMTeam/WizardCoder-15B-V1.0")
    assert wizard.params is not None and wizard.params.total == total + h
    assert page_bytes("bigcode/starcoder") == 992
    assert page_bytes("WizardLMTeam/WizardCoder-15B-V1.0") == 997


def test_bloom_7b1_and_1b7_by_hand() -> None:
    """BLOOM 7B1 (30 layers of 4096) and 1B7 (24 of 2048): every linear biased, MLP 4 x H, two LayerNorms a layer,
    embedding LayerNorm and final LayerNorm, tied 250880-row head: 7,069,016,064 and 1,722,408,960, the cards'
    figures. The 1B7 config carries seq_length 4096, which vLLM reads as its context; the 7B1's has no length key."""
    for model_id, h, layers, total, positions in (
        ("bigscience/bloom-7b1", 4096, 30, 7_069_016_064, 2048),
        ("bigscience/bloom-1b7", 2048, 24, 1_722_408_960, 4096),
    ):
        layer = (3 * h * h + 3 * h) + (h * h + h) + (4 * h * h + 4 * h) + (4 * h * h + h) + 2 * 2 * h
        assert 250880 * h + 2 * h + layers * layer + 2 * h == total
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.max_model_len == positions
    assert page_bytes("bigscience/bloom-7b1") == 788
    assert page_bytes("bigscience/bloom-1b7") == 810


def test_dolly_codellama_13b_instruct_and_starcoder2_3b() -> None:
    """Dolly v2 (GPT-NeoX, 50280-row untied head; the publisher's 12B page of 825 bytes, a re-shard's 7B page of 819), CodeLlama-13b-Instruct (a
    fine-tune's copy, 646 bytes: counts as the bundled base) and StarCoder2-3B (OpenVINO's export, 738 bytes without
    a final newline: 2 KV heads, a 4096-token sliding window)."""
    h, ffn, layers = 5120, 20480, 36
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    dolly = resolve_model("databricks/dolly-v2-12b")
    assert dolly.params is not None and dolly.params.total == 2 * 50280 * h + layers * layer + 2 * h
    assert page_bytes("databricks/dolly-v2-12b") == 825
    assert page_bytes("databricks/dolly-v2-7b") == 819
    code = resolve_model("codellama/CodeLlama-13b-Instruct-hf")
    assert code.params == resolve_model("codellama/CodeLlama-13b-hf").params
    assert page_bytes("codellama/CodeLlama-13b-Instruct-hf") == 646
    sc2 = resolve_model("bigcode/starcoder2-3b")
    assert (sc2.num_kv_heads, sc2.sliding_window, sc2.vocab_size) == (2, 4096, 49152)
    assert page_bytes("bigcode/starcoder2-3b", newline=False) == 738


def test_pythia_12b_and_gpt2_xl_by_hand() -> None:
    """Pythia-12B: 36 layers of 5120 in the GPT-NeoX layout with a 50688-row untied head: 11,846,072,320, the suite's
    figure (Dolly v2 12B is the same network with 50280 rows). GPT-2 XL: 48 layers of 1600 (c_attn 3 x 1600^2, c_proj,
    MLP 4 x 1600 twice, all biased; two LayerNorms), 50257-row tied embedding and 1024 positions, final LayerNorm:
    1,557,611,200. Pages: 722 bytes (a fine-tune's) and 689 (the publisher's, no final newline)."""
    h, ffn = 5120, 20480
    layer = (3 * h * h + 3 * h) + (h * h + h) + (2 * h * ffn + ffn + h) + 2 * 2 * h
    pythia = 2 * 50688 * h + 36 * layer + 2 * h
    assert pythia == 11_846_072_320
    spec = resolve_model("EleutherAI/pythia-12b")
    assert spec.params is not None and spec.params.total == pythia
    dolly = resolve_model("databricks/dolly-v2-12b")
    assert dolly.params is not None and pythia - dolly.params.total == 2 * (50688 - 50280) * h
    h = 1600
    layer = (3 * h * h + 3 * h) + (h * h + h) + (8 * h * h + 4 * h + h) + 2 * 2 * h
    gpt2 = 50257 * h + 1024 * h + 48 * layer + 2 * h
    assert gpt2 == 1_557_611_200
    spec = resolve_model("openai-community/gpt2-xl")
    assert spec.params is not None and spec.params.total == gpt2 and spec.max_model_len == 1024
    assert page_bytes("EleutherAI/pythia-12b") == 722
    assert page_bytes("openai-community/gpt2-xl", newline=False) == 689


def test_wizardcoder_15b_by_hand() -> None:
    """WizardCoder-15B-V1.0 (the publisher's config.json, 998 bytes as its page prints): StarCoder's GPTBigCode, 40
    layers of 6144 with 48 query heads and one shared KV head (c_attn 6144 x (6144 + 2 x 128) and c_proj 6144^2,
    biased), a biased GELU MLP 6144 x 24576 x 6144, two biased LayerNorms; a 49,153-row embedding the head shares and
    8,192 learned positions, final LayerNorm: 15,517,462,528 parameters (StarCoder's 15.5B)."""
    h, i = 6144, 24576
    layer = h * (h + 256) + h + 256 + h * h + h + h * i + i + i * h + h + 4 * h
    total = 40 * layer + 49153 * h + 8192 * h + 2 * h
    assert total == 15_517_462_528
    spec = resolve_model("WizardLM/WizardCoder-15B-V1.0")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert (spec.num_kv_heads, spec.max_model_len) == (1, 8192) and spec.approximate == ()
    assert page_bytes("WizardLM/WizardCoder-15B-V1.0") == 998


def test_gpt4all_j_is_the_gpt_j_6b_network() -> None:
    """GPT4All-J (reconstructed as GPT-J 6B's config, whose keys a re-quantization of it shows): the bundled GPT-J's
    6,050,882,784 parameters (28 parallel blocks of 4096, untied 50,400-row head), 2,048 positions, 16-bit weights."""
    j, base = resolve_model("nomic-ai/gpt4all-j"), resolve_model("EleutherAI/gpt-j-6b")
    assert j.params is not None and j.params == base.params and j.params.total == 6_050_882_784
    assert j.max_model_len == 2048 and len(j.approximate) == 1


def test_cerebras_gpt_1_3b_by_hand() -> None:
    """Cerebras-GPT-1.3B (reconstructed from a full fine-tune's copy of its config; Cerebras's conversion parameters
    give the same widths, tied): 24 GPT-2 blocks of 2048 (biased c_attn 2048 x 6144, c_proj 2048^2, a GELU MLP
    2048 x 8192 x 2048, two biased LayerNorms), a tied 50,257-row embedding and 2,048 learned positions, final
    LayerNorm: 1,315,723,264 parameters (Cerebras's 1.3B)."""
    h, i = 2048, 8192
    total = 24 * (h * 3 * h + 3 * h + h * h + h + h * i + i + i * h + h + 4 * h) + 50257 * h + 2048 * h + 2 * h
    assert total == 1_315_723_264
    spec = resolve_model("cerebras/Cerebras-GPT-1.3B")
    assert spec.params is not None and spec.params.total == total and spec.params.lm_head == 0
    assert spec.max_model_len == 2048 and len(spec.approximate) == 1


def test_stablelm_tuned_alpha_7b_by_hand() -> None:
    """stablelm-tuned-alpha-7b (reconstructed from a GPTQ re-save's copy of its config, the base's own file showing
    the same widths): 16 GPT-NeoX layers of 6144 (biased query_key_value 6144 x 18432 and dense 6144^2, a biased GELU
    MLP 6144 x 24576 x 6144, two biased LayerNorms), untied 50,432-row embedding and head, final LayerNorm:
    7,868,755,968 parameters, 4,096 positions."""
    h, i = 6144, 24576
    total = 16 * (h * 3 * h + 3 * h + h * h + h + h * i + i + i * h + h + 4 * h) + 2 * 50432 * h + 2 * h
    assert total == 7_868_755_968
    spec = resolve_model("stabilityai/stablelm-tuned-alpha-7b")
    assert spec.params is not None and spec.params.total == total
    assert spec.max_model_len == 4096 and len(spec.approximate) == 1
