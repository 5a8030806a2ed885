"""Model catalog and config parsing: exact parameter counts, every reference config, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.catalog import find_model, load_aliases, load_model, load_models
from recommender.errors import ModelConfigError, UnknownModelError, UnsupportedArchitectureError
from recommender.model.parse import parse_config
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
}


@pytest.mark.parametrize(("model", "billions"), sorted(CARD_PARAMS_B.items()))
def test_parameter_count_matches_model_card(model: str, billions: str) -> None:
    spec = resolve_model(model)
    assert spec.params is not None
    unit = 10.0 ** -len(billions.split(".")[1])  # cards round or truncate: within one unit of the last digit
    assert abs(spec.params.total / 1e9 - float(billions)) < unit


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
    "eos_token_id",
    "bos_token_id",
    "pad_token_id",
    "transformers_version",
    "use_cache",
    "attention_dropout",
}


def test_alias_table_is_explicit_and_safe() -> None:
    aliases, renames = load_aliases()
    assert aliases and renames
    for a in aliases.values():
        assert load_model(a.alias) is None, f"{a.alias} is itself a catalog entry"
        assert load_model(a.target) is not None, f"alias {a.alias} -> {a.target}: target is not bundled"
        assert set(a.differs) <= NOT_PLANNER_KEYS, f"{a.alias}: differs in keys the planner reads"
        if a.kind in ("instruct-of", "base-of"):
            assert a.checked_on, f"{a.alias}: an instruct/base alias needs bundled pairs that show what differs"
        for x, y in a.checked_on:
            cx, cy = load_model(x), load_model(y)
            assert cx is not None and cy is not None
            diff = {k for k in set(cx.config) | set(cy.config) if cx.config.get(k) != cy.config.get(k)}
            assert diff <= set(a.differs), f"{a.alias}: {x} and {y} differ in {sorted(diff - set(a.differs))}"


@pytest.mark.parametrize(
    ("ref", "entry", "how"),
    [
        ("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Meta-Llama-3.1-405B", "instruct-of"),
        ("meta-llama/Llama-3.1-405B", "meta-llama/Meta-Llama-3.1-405B", "renamed repository"),
        ("meta-llama/Meta-Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct", "renamed repository"),
        ("META-LLAMA/LLAMA-3.1-70B", "meta-llama/Meta-Llama-3.1-70B", "renamed repository"),
        ("qwen3-8b", "Qwen/Qwen3-8B", "only catalog entry"),
    ],
)
def test_ids_as_people_write_them(ref: str, entry: str, how: str) -> None:
    match = find_model(ref)
    assert match is not None and match.entry.id == entry and match.via is not None and how in match.via
    spec = resolve_model(ref)
    assert spec.name == ref  # the plan serves what the user named
    assert any(how in n for n in spec.notes) and entry in spec.source


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
    return sorted(p for p in HF_CONFIGS.glob("*") if p.is_dir()) if HF_CONFIGS.is_dir() else []


@pytest.mark.parametrize("folder", _reference_dirs(), ids=lambda p: p.name)
def test_every_reference_config_parses_or_names_why_not(folder: Path) -> None:
    try:
        spec = resolve_model(str(folder))
    except UnsupportedArchitectureError as exc:
        assert "not modelled" in str(exc)
        return
    assert spec.params is not None and spec.params.total > 0
    assert spec.num_layers == len(spec.layer_kinds) == len(spec.mlp_kinds)


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
