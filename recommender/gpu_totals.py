"""Which catalog card a logged device total belongs to (pure: no file access).

A startup log that does not name its GPU often prints the device total vLLM sizes everything from
(`total_gpu_memory=`, "Free memory on device (free/total GiB)", the OOM message's "total capacity"). Cards whose
catalogued total prints the same are the candidates, else cards within 1% (one card's total moves by driver, ECC
and WSL: an A100 80GB prints 79.25 or 79.26 GiB, an RTX 3090 23.54 to 23.69). The total alone identifies the card
for the memory model only when every candidate agrees on the other figures the model reads; otherwise the
candidates are listed, never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from recommender.errors import UnknownGpuError
from recommender.gpu_clues import GpuClue, narrow
from recommender.hardware import Gpu
from recommender.units import GiB

NEAR = 0.01  # relative band when no card prints the same total
SAME_PRINT = 0.005  # GiB: vLLM prints totals to 0.01 GiB


@dataclass(frozen=True, slots=True)
class TotalMatch:
    """The card a total resolves to, the cards it stands for, and a note naming them when there are several."""

    gpu: Gpu
    cards: tuple[Gpu, ...]
    clues: tuple[GpuClue, ...] = ()  # the log lines that took cards of this total out

    @property
    def note(self) -> str:
        narrowed = f" once the log's {'; '.join(repr(c.line) for c in self.clues)} narrowed them" if self.clues else ""
        if len(self.cards) == 1:
            return f"the only catalog card with this total is {self.gpu.key}{narrowed}"
        keys = ", ".join(g.key for g in self.cards)
        return f"one of {keys} (alike for the memory model; {self.gpu.key}'s rates are used){narrowed}"


def memory_figures(gpu: Gpu) -> tuple[object, ...]:
    """What the memory model reads from a card besides its total: vendor, compute capability (backends, FP8,
    bf16, the compute-capability floor), FP8/FP4, NVLink (custom all-reduce buffers), unified memory, and the
    device-name tests of vLLM's batch defaults (H100/H200 before 0.8.5, A100 from 0.9)."""
    upper = gpu.name.upper()
    names = tuple(n for n in ("A100", "H100", "H200") if n in upper)
    return (gpu.vendor, gpu.compute_capability, gpu.fp8, gpu.fp4, gpu.nvlink, gpu.unified_memory, names)


def resolve_total(
    total_gib: float,
    catalog: Sequence[Gpu],
    *,
    vendor: str | None = None,
    arch: str | None = None,
    same: Callable[[Gpu], Hashable] = memory_figures,
    clues: Sequence[GpuClue] = (),
) -> TotalMatch:
    """The catalog card(s) of a logged device total (GiB), optionally of one vendor or offload architecture.

    Raises UnknownGpuError when no card has that total, or when the cards that do differ by `same` (by default
    the figures the memory model reads; a caller that knows the model and flags may pass the prediction itself,
    so that cards telling apart only what this configuration does not use still resolve). `clues` (what else the
    log says: recommender.gpu_clues) take out the cards of that total they rule out before the cards are compared."""
    pool = [g for g in catalog if (vendor is None or g.vendor == vendor)]
    if arch is not None:
        pool = [g for g in pool if g.compute_capability.lower() == arch.lower()]
    near = [g for g in pool if abs(g.total_bytes / GiB / total_gib - 1) <= NEAR]
    near, used = narrow(near, clues)
    cards = [g for g in near if abs(g.total_bytes / GiB - total_gib) <= SAME_PRINT] or near
    if not cards:
        why = f" the log's {'; '.join(repr(c.line) for c in used)} allows" if used else ""
        raise UnknownGpuError(f"no catalog card{why} has a device total of {total_gib:g} GiB")
    cards.sort(key=lambda g: (abs(g.total_bytes / GiB - total_gib), g.key))
    if len({same(g) for g in cards}) > 1:
        listed = ", ".join(f"{g.key} ({g.total_bytes / GiB:.2f} GiB, cc {g.compute_capability})" for g in cards)
        raise UnknownGpuError(
            f"a device total of {total_gib:g} GiB fits cards the memory model tells apart: {listed}; name the GPU"
        )
    return TotalMatch(cards[0], tuple(cards), used)
