"""The fraction of its datasheet tensor-core peak a card sustains in a dense GEMM (pure).

Datasheet peaks are taken at the rated boost clock. Under a long GEMM a power-capped data-center card runs below it
(torch.matmul reaches ~0.66 of the H100 PCIe's 756 TFLOPS and ~0.59 of the L4's 121, against ~0.85 on an A100 SXM),
while GeForce boards boost above their rated clock and exceed it (RTX 3090 and 4090: 1.05-1.08). The performance
model multiplies every tensor-core peak (linear layers, experts, attention) by this fraction, so its fitted compute
efficiency means "of what the card sustains" and carries from the fitted cards to the others. Measured figures come
from profiles/gemm_measured.yaml (one public source for every card); a card without one takes the median of the
measured cards of its family and class (GeForce or not), else of every measured non-GeForce card.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from recommender.hardware import Gpu
from recommender.perf.params import SustainedGemm, gpu_class


def datasheet_16bit(gpu: Gpu, dtype: str) -> float | None:
    """The datasheet dense TFLOPS a 16-bit measurement compares with."""
    return gpu.bf16_tflops if dtype == "bf16" else gpu.fp16_tflops


def sustained_table(measured: Iterable[tuple[str, str, float]], gpus: Iterable[Gpu]) -> SustainedGemm:
    """From (gpu key, dtype, measured TFLOPS) rows and the catalog: the fractions and the class medians."""
    catalog = {g.key: g for g in gpus}
    by_gpu: dict[str, float] = {}
    for key, dtype, tflops in measured:
        gpu = catalog.get(key)
        peak = datasheet_16bit(gpu, dtype) if gpu is not None else None
        if gpu is None or not peak:
            raise ValueError(f"gemm_measured: {key} has no catalogued {dtype} peak to compare with")
        by_gpu[key] = round(tflops / peak, 4)
    classes: dict[str, list[float]] = {}
    for key, frac in by_gpu.items():
        classes.setdefault(gpu_class(catalog[key]), []).append(frac)
    by_class = {name: round(statistics.median(v), 4) for name, v in sorted(classes.items())}
    plain = [f for k, f in by_gpu.items() if not gpu_class(catalog[k]).endswith("-geforce")]
    default = round(statistics.median(plain), 4) if plain else 1.0
    return SustainedGemm(by_gpu, by_class, default)


def read_ceiling_table(measured: Iterable[tuple[str, float]], gpus: Iterable[Gpu]) -> SustainedGemm:
    """From (gpu key, measured GB/s) rows of a streaming kernel and the catalog: measured / datasheet bandwidth per
    card, the median per family and class that has rows, and no cap (1.0) for the classes that have none."""
    catalog = {g.key: g for g in gpus}
    by_gpu: dict[str, float] = {}
    for key, gbps in measured:
        gpu = catalog.get(key)
        if gpu is None or not gpu.bandwidth_gbps:
            raise ValueError(f"bandwidth_measured: {key} has no catalogued bandwidth to compare with")
        frac = round(gbps / gpu.bandwidth_gbps, 4)
        if not 0.3 <= frac <= 1.0:
            raise ValueError(f"bandwidth_measured: {key} measures {frac:.0%} of its datasheet bandwidth")
        by_gpu[key] = frac
    classes: dict[str, list[float]] = {}
    for key, frac in by_gpu.items():
        classes.setdefault(gpu_class(catalog[key]), []).append(frac)
    by_class = {name: round(statistics.median(v), 4) for name, v in sorted(classes.items())}
    return SustainedGemm(by_gpu, by_class, 1.0)
