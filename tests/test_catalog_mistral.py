"""Catalog entries of the Mistral family (Mistral 7B and its fine-tunes, Mixtral, Mistral Small/Large, Devstral,
Magistral, SFR-Embedding). Entries and aliases are checked against their sources by hand; each test's docstring
names them (and the field set or issue that brought the model in)."""

from __future__ import annotations

from recommender.catalog import load_model
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags
from recommender.sources.resolve import resolve_model

from .catalog_support import H100, V033, page_bytes, reconstructed


def test_mixtral_awq_keeps_its_router_and_matches_its_files() -> None:
    """TheBloke's Mixtral-8x7B-Instruct AWQ: its quant_config.json keeps the MoE router (`gate`) in 16 bits; the
    weights one GPU holds come to the three safetensors files (9.97 + 9.98 + 4.7 GB on the repository's file list)
    within 1 %."""
    from recommender.memory.weights import Parallel, weight_bytes_per_gpu

    spec = resolve_model("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ")
    assert spec.quant is not None and spec.quant.method == "awq" and spec.quant.keep_unquantized == ("gate",)
    assert spec.params == resolve_model("mistralai/Mixtral-8x7B-Instruct-v0.1").params
    weights = weight_bytes_per_gpu(spec, Parallel(), dtype_bytes=2, quant=spec.quant)
    assert abs(weights / (9.97e9 + 9.98e9 + 4.7e9) - 1) < 0.01


def test_catalog_round_8_mistral_large_2411_by_hand() -> None:
    """Mistral-Large-Instruct-2411 keeps 2407's 123B layout: 88 layers of q/o 12288 x 12288, k/v 12288 x 1024, a gated
    MLP of 28672 and two norms, a 32,768-row embedding and head: 122,610,069,504, equal to the bundled 2407; its
    context is 131,072 (2407's config.json says 32,768). The AWQ and GPTQ builds count the same logical weights."""
    layer = 2 * 12288 * 12288 + 2 * 12288 * 1024 + 3 * 12288 * 28672 + 2 * 12288
    total = 88 * layer + 2 * 32768 * 12288 + 12288
    assert total == 122_610_069_504
    v2411 = resolve_model("mistralai/Mistral-Large-Instruct-2411")
    assert v2411.params is not None and v2411.params == resolve_model("mistralai/Mistral-Large-Instruct-2407").params
    assert v2411.params.total == total and v2411.max_model_len == 131072
    awq = resolve_model("TechxGenus/Mistral-Large-Instruct-2411-AWQ")
    gptq = resolve_model("ModelCloud/Mistral-Large-Instruct-2407-gptq-4bit")
    assert awq.quant is not None and (awq.quant.method, awq.quant.bits, awq.quant.group_size) == ("awq", 4, 128)
    assert gptq.quant is not None and (gptq.quant.method, gptq.quant.bits, gptq.quant.group_size) == ("gptq", 4, 128)
    assert not gptq.quant.lm_head_quantized and awq.params == gptq.params == v2411.params


def test_sfr_embedding_mistral_is_the_e5_mistral_backbone() -> None:
    """SFR-Embedding-Mistral (MistralModel, fine-tuned from e5-mistral-7b-instruct): Mistral-7B's widths without an
    LM head, 7,241,732,096 - 32000 x 4096 = 7,110,660,096 parameters; its release's three shards (4.94 + 5 + 4.28 GB)
    are 2 bytes a parameter. The re-save's page prints 664 bytes."""
    sfr, e5 = resolve_model("Salesforce/SFR-Embedding-Mistral"), resolve_model("intfloat/e5-mistral-7b-instruct")
    assert sfr.params is not None and sfr.params.total == 7_241_732_096 - 32000 * 4096 == 7_110_660_096
    assert sfr.params == e5.params and sfr.pooling
    assert 14.2e9 < 2 * sfr.params.total < 14.3e9
    assert page_bytes("Salesforce/SFR-Embedding-Mistral") == 664


def test_casperhansen_mixtral_awq_is_thebloke_s_layout() -> None:
    """casperhansen/mixtral-instruct-awq: the same quant_config.json (AWQ 4-bit g128, router kept) over the same
    Mixtral-8x7B-Instruct config as TheBloke's AWQ, so the same weights: its three shards (9.97 + 9.98 + 4.7 GB)."""
    ours, bloke = (
        resolve_model("casperhansen/mixtral-instruct-awq"),
        resolve_model("TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ"),
    )
    assert ours.quant is not None and (ours.quant.method, ours.quant.bits, ours.quant.group_size) == ("awq", 4, 128)
    assert ours.params == bloke.params and ours.quant == bloke.quant
    e = explain(ours, H100, EngineFlags(max_model_len=8192), V033)
    assert 24.6e9 < e.stage.weights < 24.7e9


def test_mistral_small_3_2_is_3_1_by_hand() -> None:
    """Mistral-Small-3.2 (reconstructed: 3.1's config, whose text values a 3.2 text-only extraction repeats): 40 layers
    of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP 3 x 5120 x 32768, two RMSNorms), untied 131,072-row embedding
    and head, final norm: 23,572,403,200 text parameters, plus 3.1's Pixtral tower; 131,072 positions."""
    h, layers, vocab = 5120, 40, 131072
    text = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert text == 23_572_403_200
    spec, old = (
        resolve_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506"),
        resolve_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503"),
    )
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert spec.params == old.params and spec.vision == old.vision and spec.max_model_len == 131072
    shown = {
        "hidden_size": 5120,
        "intermediate_size": 32768,
        "max_position_embeddings": 131072,
        "num_attention_heads": 32,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "rope_theta": 1e9,
        "vocab_size": 131072,
    }
    entry = load_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert entry is not None and all(entry.config["text_config"][k] == v for k, v in shown.items())
    assert reconstructed("mistralai/Mistral-Small-3.2-24B-Instruct-2506")


def test_openhermes_2_5_is_mistral_7b_with_two_more_rows() -> None:
    """OpenHermes-2.5-Mistral-7B (reconstructed from four re-saves that agree): Mistral-7B-v0.1's 32 layers of 4096
    (q/o 4096^2, k/v 4096 x 1024, gated MLP 3 x 4096 x 14336) with a 32,002-row untied embedding and head:
    7,241,748,480 parameters, 2 x 2 x 4096 more than Mistral-7B-v0.1's 7,241,732,096; window 4096 over 32,768."""
    h, layers, vocab = 4096, 32, 32002
    total = layers * (2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h) + 2 * vocab * h + h
    assert total == 7_241_748_480
    spec, base = resolve_model("teknium/OpenHermes-2.5-Mistral-7B"), resolve_model("mistralai/Mistral-7B-v0.1")
    assert spec.params is not None and base.params is not None and spec.params.total == total
    assert spec.params.total - base.params.total == 2 * 2 * h
    assert spec.sliding_window == 4096 and spec.max_model_len == 32768
    assert reconstructed("teknium/OpenHermes-2.5-Mistral-7B")


def test_devstral_small_is_mistral_small_3_1_text_only() -> None:
    """Devstral Small 2505 and 2507 (reconstructed): Mistral-Small-3.1 fine-tuned with the vision encoder removed, so
    3.1's text model as a MistralForCausalLM: 40 layers of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP
    3 x 5120 x 32768), untied 131,072-row embedding and head: 23,572,403,200 parameters, no vision tower, 131,072
    positions."""
    h, layers, vocab = 5120, 40, 131072
    total = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert total == 23_572_403_200
    small = resolve_model("mistralai/Mistral-Small-3.1-24B-Instruct-2503")
    assert small.params is not None
    for model_id in ("mistralai/Devstral-Small-2505", "mistralai/Devstral-Small-2507"):
        spec = resolve_model(model_id)
        assert spec.params is not None and spec.params.total == total and spec.vision is None
        assert spec.params.total == small.params.total - small.params.vision
        assert spec.max_model_len == 131072 and reconstructed(model_id)


def test_magistral_small_2509_is_mistral_small_3_2_with_its_vision_encoder() -> None:
    """Magistral Small 1.2 (reconstructed: its card builds it on Mistral Small 3.2 and adds the vision encoder):
    3.2's 40 layers of 5120 (q/o 5120 x 4096, k/v 5120 x 1024, gated MLP 3 x 5120 x 32768, two RMSNorms), untied
    131,072-row embedding and head, final norm: 23,572,403,200 text parameters, plus the Pixtral tower."""
    h, layers, vocab = 5120, 40, 131072
    text = layers * (2 * h * 4096 + 2 * h * 1024 + 3 * h * 32768 + 2 * h) + 2 * vocab * h + h
    assert text == 23_572_403_200
    spec = resolve_model("mistralai/Magistral-Small-2509")
    small = resolve_model("mistralai/Mistral-Small-3.2-24B-Instruct-2506")
    assert spec.params is not None and spec.params.total - spec.params.vision == text
    assert spec.params == small.params and spec.vision == small.vision and spec.vision is not None
    assert spec.max_model_len == 131072 and reconstructed("mistralai/Magistral-Small-2509")
