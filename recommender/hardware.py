"""GPU facts as frozen values, and name resolution over a catalog (pure: no file access)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from recommender.errors import InputError, UnknownGpuError
from recommender.units import MiB


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU type. `total_bytes` is the device total as CUDA reports it (vLLM's utilization base)."""

    key: str
    name: str
    vendor: str
    total_bytes: int
    marketed_gb: float | None = None
    memory_type: str = ""
    unified_memory: bool = False
    bandwidth_gbps: float | None = None
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    fp4_tflops: float | None = None
    compute_capability: str = ""
    fp8: bool = False
    fp4: bool = False
    interconnect: str = ""
    gfd_product_label: str | None = None
    aliases: tuple[str, ...] = ()
    estimated: tuple[str, ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def nvlink(self) -> bool:
        """True where GPUs of one node talk over NVLink / Infinity Fabric (custom all-reduce is used)."""
        text = self.interconnect.lower()
        return ("nvlink" in text and "bridge" not in text) or "infinity fabric" in text

    @property
    def cc_major_minor(self) -> tuple[int, int] | None:
        """Compute capability as numbers, None for non-CUDA devices."""
        m = re.fullmatch(r"(\d+)\.(\d+)", self.compute_capability)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @property
    def supports_bf16(self) -> bool:
        """bf16 needs compute capability 8.0 or newer on NVIDIA; AMD Instinct MI200+ has it."""
        cc = self.cc_major_minor
        return cc is None or cc >= (8, 0)


def custom_gpu(memory_gib: float, *, name: str = "custom") -> Gpu:
    """A card described only by its memory (`--gpu-memory-gib`): CUDA total = that many GiB."""
    if not memory_gib > 0:
        raise InputError(f"--gpu-memory-gib must be positive, got {memory_gib}")
    return Gpu(
        key="custom",
        name=f"{name} ({memory_gib:g} GiB)",
        vendor="unknown",
        total_bytes=int(memory_gib * 1024) * MiB,
        compute_capability="8.0",
        sources={"memory.cuda_total_mib": "given on the command line (--gpu-memory-gib)"},
    )


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def resolve_gpu(query: str, catalog: Sequence[Gpu]) -> Gpu:
    """Find a GPU by key, name, alias or GPU-feature-discovery label, ignoring case, spaces and dashes.

    Raises UnknownGpuError naming the closest matches.
    """
    wanted = _norm(query)
    if not wanted:
        raise UnknownGpuError("empty GPU name; run `vllm-plan gpus` to list the known GPUs")
    for gpu in catalog:
        names = (gpu.key, gpu.name, *gpu.aliases, *((gpu.gfd_product_label,) if gpu.gfd_product_label else ()))
        if wanted in {_norm(n) for n in names}:
            return gpu
    choices = {_norm(a): g.key for g in catalog for a in (g.key, *g.aliases)}
    close = difflib.get_close_matches(wanted, list(choices), n=5, cutoff=0.5)
    hint = ", ".join(dict.fromkeys(choices[c] for c in close))
    suffix = f"; closest: {hint}" if hint else ""
    raise UnknownGpuError(
        f"unknown GPU {query!r}{suffix} (run `vllm-plan gpus` for the list, or give --gpu-memory-gib)"
    )
