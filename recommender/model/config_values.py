"""Typed, bounded reads of config.json values (untrusted input), each failure one line (ModelConfigError, exit 2).

Every count the tensor inventory loops over is bounded here, so a hostile config (`num_hidden_layers: 10**8`,
`vision_config.depth: 10**9`, `num_local_experts: 1e30`) is refused at the edge instead of computed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from recommender.errors import ModelConfigError

# Bounds: far above every published model, low enough that the work they cause stays small (the inventory is one
# tensor list per layer). Deepest published decoders: Llama-3.1-405B 126 layers, Nemotron-3 Ultra 108.
MAX_LAYERS = 1024
MAX_VISION_DEPTH = 256  # deepest published vision towers: InternViT-6B 45 blocks, Llama-3.2-Vision 32 + 8
MAX_HIDDEN = 1 << 17  # widest published: 18,432 (Nemotron-4 340B)
MAX_HEADS = 1 << 12  # most published: 128 (DeepSeek-V3)
MAX_EXPERTS = 1 << 14  # most published: 512 routed experts (Qwen3-Next, Nemotron-3 Super)
MAX_VOCAB = 1 << 24  # largest published: 262,144 (Gemma 3/4)
MAX_DIM = 1 << 20  # any other width (intermediate sizes, head dims, ranks, windows)
MAX_POSITIONS = 1 << 30  # longest published: 10,485,760 (Llama-4 Scout)


class ConfigValues:
    """Read-only view of one (merged) config mapping with validated accessors."""

    def __init__(self, data: Mapping[str, Any], where: str = "config.json") -> None:
        self.data = data
        self.where = where

    def has(self, key: str) -> bool:
        """True when `key` is present and not null."""
        return self.data.get(key) is not None

    def raw(self, key: str, default: Any = None) -> Any:
        """The value as stored (for the few keys whose type varies)."""
        value = self.data.get(key)
        return default if value is None else value

    def get_int(self, key: str, default: int | None = None, *, bound: int = MAX_DIM, zero_ok: bool = False) -> int:
        """A positive integer (or 0 with `zero_ok`) no larger than `bound`; `default` when absent or null."""
        value = self.data.get(key)
        if value is None:
            if default is None:
                raise ModelConfigError(f"{self.where} is missing {key!r}")
            return default
        return checked_int(value, f"{self.where} {key!r}", bound=bound, zero_ok=zero_ok)

    def opt_int(self, key: str, *, bound: int = MAX_DIM, zero_ok: bool = False) -> int | None:
        """Like `int`, but None when absent or null."""
        return None if self.data.get(key) is None else self.get_int(key, bound=bound, zero_ok=zero_ok)

    def first_int(self, keys: tuple[str, ...], default: int, *, bound: int = MAX_DIM) -> int:
        """The first of `keys` that is set to a non-zero value, else `default` (0 allowed)."""
        for key in keys:
            value = self.data.get(key)
            if value is not None and value != 0 and value is not False:
                return self.get_int(key, bound=bound)
        return default

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean switch; null means the default."""
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ModelConfigError(f"{self.where} {key!r} must be true or false, got {value!r}")
        return value

    def number(self, key: str, default: float) -> float:
        """A finite number; null means the default."""
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ModelConfigError(f"{self.where} {key!r} must be a finite number, got {value!r}")
        return float(value)

    def text(self, key: str, default: str = "") -> str:
        """A string value; null means the default."""
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise ModelConfigError(f"{self.where} {key!r} must be a string, got {value!r}")
        return value

    def int_list(self, key: str, *, length: int | None = None, bound: int = MAX_DIM) -> list[int] | None:
        """A list of non-negative integers (of `length` items when given), or None when absent."""
        value = self.data.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or (length is not None and len(value) != length):
            size = f" of {length} integers" if length is not None else ""
            raise ModelConfigError(f"{self.where} {key!r} must be a list{size}")
        return [checked_int(v, f"{self.where} {key!r}", bound=bound, zero_ok=True) for v in value]

    def mapping(self, key: str) -> Mapping[str, Any]:
        """A nested object, or an empty one when absent."""
        value = self.data.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ModelConfigError(f"{self.where} {key!r} must be an object")
        return value


def checked_int(value: Any, what: str, *, bound: int = MAX_DIM, zero_ok: bool = False) -> int:
    """`value` as an int within (0 or 1)..bound, or a one-line ModelConfigError naming `what`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelConfigError(f"{what} must be an integer, got {_short(value)}")
    if value < 0 or (value == 0 and not zero_ok):
        raise ModelConfigError(f"{what} must be positive, got {value}")
    if value > bound:
        raise ModelConfigError(f"{what} is {value:,}, above the supported maximum of {bound:,}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
