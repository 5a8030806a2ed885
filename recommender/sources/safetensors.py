"""Read safetensors headers (the 8-byte length and the JSON table of tensors) without loading any weights."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from recommender.errors import ModelConfigError

MAX_HEADER = 100 * 1024 * 1024  # safetensors caps headers at 100 MB
DTYPE_BYTES = {
    "F64": 8,
    "F32": 4,
    "F16": 2,
    "BF16": 2,
    "I64": 8,
    "I32": 4,
    "I16": 2,
    "I8": 1,
    "U8": 1,
    "BOOL": 1,
    "F8_E4M3": 1,
    "F8_E5M2": 1,
    "F8_E8M0": 1,
    "U32": 4,
    "U16": 2,
    "F4": 0.5,
}


@dataclass(frozen=True, slots=True)
class CheckpointSummary:
    """What the checkpoint files hold: tensors, bytes in total and per dtype."""

    files: int
    tensors: int
    total_bytes: int
    bytes_by_dtype: dict[str, int]

    @property
    def main_dtype(self) -> str | None:
        """The dtype holding the most bytes."""
        return max(self.bytes_by_dtype, key=lambda k: self.bytes_by_dtype[k]) if self.bytes_by_dtype else None


def read_header(path: Path) -> dict[str, dict[str, object]]:
    """The tensor table of one .safetensors file."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(8)
            if len(raw) != 8:
                raise ModelConfigError(f"{path} is not a safetensors file (shorter than its 8-byte header size)")
            (size,) = struct.unpack("<Q", raw)
            if size > MAX_HEADER:
                raise ModelConfigError(f"{path} declares a {size}-byte header: not a safetensors file")
            header = fh.read(size)
    except OSError as exc:
        raise ModelConfigError(f"cannot read {path}: {exc.strerror}") from exc
    if len(header) != size:
        raise ModelConfigError(f"{path} is truncated inside its header")
    try:
        table = json.loads(header)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelConfigError(f"{path} has a malformed safetensors header") from exc
    if not isinstance(table, dict):
        raise ModelConfigError(f"{path} has a malformed safetensors header")
    return {k: v for k, v in table.items() if k != "__metadata__" and isinstance(v, dict)}


def summarize(files: list[Path]) -> CheckpointSummary | None:
    """Totals over every shard (None when there are no safetensors files)."""
    if not files:
        return None
    by_dtype: dict[str, int] = {}
    tensors = 0
    for f in files:
        for info in read_header(f).values():
            offsets = info.get("data_offsets")
            dtype = str(info.get("dtype", "?"))
            if isinstance(offsets, list) and len(offsets) == 2:
                size = int(offsets[1]) - int(offsets[0])
            else:
                shape = info.get("shape") or []
                n = 1
                for d in shape if isinstance(shape, list) else []:
                    n *= int(d)
                size = int(n * DTYPE_BYTES.get(dtype, 1))
            by_dtype[dtype] = by_dtype.get(dtype, 0) + size
            tensors += 1
    return CheckpointSummary(len(files), tensors, sum(by_dtype.values()), dict(sorted(by_dtype.items())))
