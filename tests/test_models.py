"""Model catalog and config parsing: exact parameter counts, every reference config, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recommender.catalog import load_models
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
