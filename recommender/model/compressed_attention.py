"""DeepSeek-V4's per-layer compression ratios, read as vLLM 0.33 reads them (pure).

vllm/transformers_utils/deepseek_v4_utils.py get_compress_ratios: the checkpoints' `compress_ratios` list (one ratio
per decoder layer, then the MTP layers), or the upstream config's `compress_rates` keyed by `layer_types`.
vllm/models/deepseek_v4/attention.py: a layer's ratio is max(1, that value) (0 in the config: the sliding window
alone); CompressorStateCache accepts only 4 and 128.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recommender.errors import ModelConfigError
from recommender.model.config_values import ConfigValues
from recommender.model.spec import CompressedAttentionSpec

RATIOS = (1, 4, 128)  # window only, C4 (compressed + indexer), C128 (compressed)


def _layer_ratios(c: ConfigValues, layers: int) -> list[Any] | None:
    """The raw per-layer ratios of the decoder layers (MTP layers dropped), or None when the config has none."""
    legacy = c.raw("compress_ratios")
    if isinstance(legacy, list):
        return legacy[:layers] if len(legacy) >= layers else None
    rates, types = c.raw("compress_rates"), c.raw("layer_types")
    if isinstance(rates, Mapping) and isinstance(types, list) and len(types) >= layers:
        return [rates.get(t, 0) if isinstance(t, str) else None for t in types[:layers]]
    return None


def compressed_attention_spec(c: ConfigValues, model_type: str, layers: int) -> CompressedAttentionSpec | None:
    """The compressed attention of a DeepSeek-V4 config, or None for any other model (or a V4 config without
    ratios, which stays approximate). A ratio vLLM cannot build is refused with one line."""
    if model_type != "deepseek_v4":
        return None
    raw = _layer_ratios(c, layers)
    if raw is None:
        return None
    ratios = []
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int) or max(1, value) not in RATIOS:
            raise ModelConfigError(f"{c.where} compress_ratios holds {value!r}; vLLM builds ratios 0, 4 and 128")
        ratios.append(max(1, value))
    return CompressedAttentionSpec(
        ratios=tuple(ratios),
        head_dim=c.get_int("head_dim"),
        window=c.get_int("sliding_window"),
        index_head_dim=c.get_int("index_head_dim", 128),
        mtp_layers=c.get_int("num_nextn_predict_layers", 0, zero_ok=True, bound=16),
        q_lora_rank=c.get_int("q_lora_rank"),
        o_lora_rank=c.get_int("o_lora_rank"),
        o_groups=c.get_int("o_groups", 1),
        index_n_heads=c.get_int("index_n_heads"),
        index_topk=c.get_int("index_topk", 0, zero_ok=True),
        hc_mult=c.get_int("hc_mult", 0, zero_ok=True, bound=64),
        hash_layers=c.get_int("num_hash_layers", 0, zero_ok=True, bound=layers),
    )
