"""Read safetensors headers (the 8-byte length and the JSON table of tensors) without loading any weights."""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from math import prod
from pathlib import Path

from recommender.errors import ModelConfigError
from recommender.model.spec import CheckpointTensor

HeaderTable = Mapping[str, Mapping[str, object]]  # tensor name -> {"dtype", "shape", "data_offsets"}

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
    """What the checkpoint files hold: every tensor, bytes in total and per dtype."""

    files: int
    tensors: tuple[CheckpointTensor, ...]
    total_bytes: int
    bytes_by_dtype: dict[str, int]

    @property
    def elements(self) -> int:
        """Stored elements over all tensors (the parameter count of an unquantized checkpoint)."""
        return sum(prod(t.shape) for t in self.tensors)

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
    """Totals over every local shard (None when there are no safetensors files)."""
    return summarize_tables([read_header(f) for f in files]) if files else None


def summarize_tables(tables: Iterable[HeaderTable]) -> CheckpointSummary:
    """Tensors and byte totals from header tables, one per file (local shards or the hub's headers)."""
    by_dtype: dict[str, int] = {}
    tensors: list[CheckpointTensor] = []
    files = 0
    for table in tables:
        files += 1
        for name, info in table.items():
            tensor, size = _tensor(name, info)
            by_dtype[tensor.dtype] = by_dtype.get(tensor.dtype, 0) + size
            tensors.append(tensor)
    return CheckpointSummary(files, tuple(tensors), sum(by_dtype.values()), dict(sorted(by_dtype.items())))


MAX_DIM = 1 << 40  # no real tensor dimension comes near this; larger values are a malformed (or hostile) header
MAX_DIMS = 8


def _dims(values: object) -> tuple[int, ...] | None:
    """Non-negative integer dimensions (None when the list holds anything else)."""
    if not isinstance(values, (list, tuple)) or len(values) > MAX_DIMS:
        return None
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < MAX_DIM for d in values):
        return None
    return tuple(values)


def _tensor(name: str, info: Mapping[str, object]) -> tuple[CheckpointTensor, int]:
    """One header entry as a tensor and its stored bytes (from data_offsets, else shape x dtype size)."""
    dtype = str(info.get("dtype", "?"))[:16]
    shape = _dims(info.get("shape", []))
    if shape is None:
        raise ModelConfigError(f"safetensors header: tensor {name[:80]!r} has a malformed shape")
    offsets = _dims(info.get("data_offsets"))
    if offsets is not None and len(offsets) == 2 and offsets[1] >= offsets[0]:
        size = offsets[1] - offsets[0]
    else:
        size = int(prod(shape) * DTYPE_BYTES.get(dtype, 1))
    return CheckpointTensor(name, dtype, shape), size
