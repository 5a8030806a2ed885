"""A logged device total names a card only when the cards of that total are alike for the memory model."""

from __future__ import annotations

import pytest

from recommender.catalog import load_gpus
from recommender.errors import UnknownGpuError
from recommender.gpu_names import resolve_gpu
from recommender.gpu_totals import memory_figures, resolve_total

CATALOG = load_gpus()


def test_one_printed_total_two_alike_cards() -> None:
    # field2 G001 prints total_gpu_memory=44.42GiB: the L20 and the L40S (45486 MiB each, AD102, FP8, PCIe) print
    # it; the A40 (44.35 GiB, within 1%) is left out because two cards print the figure exactly.
    match = resolve_total(44.42, CATALOG, vendor="nvidia")
    assert {g.key for g in match.cards} == {"l20", "l40s"}
    assert match.note == f"one of {', '.join(g.key for g in match.cards)} (alike for the memory model; " + (
        f"{match.gpu.key}'s rates are used)"
    )


def test_cards_the_memory_model_tells_apart_are_listed() -> None:
    # field F058 prints 47.38 GiB: within 1% of a Quadro RTX 8000 (Turing, cc 7.5), an RTX A6000 (8.6) and an RTX
    # 6000 Ada (8.9, FP8).
    with pytest.raises(UnknownGpuError, match=r"quadro-rtx8000 .*cc 7.5.*rtx6000-ada .*cc 8.9.*rtx-a6000 .*cc 8.6"):
        resolve_total(47.38, CATALOG, vendor="nvidia")


def test_the_h800_is_not_an_h100_for_vllms_batch_defaults() -> None:
    # 79.19 GiB is both cards' total; vLLM 0.8.0-0.8.4 picks its batch defaults by the name 'H100'.
    h100, h800 = resolve_gpu("h100", CATALOG), resolve_gpu("h800", CATALOG)
    assert memory_figures(h100) != memory_figures(h800)
    with pytest.raises(UnknownGpuError, match=r"h100-sxm \(79.19 GiB, cc 9.0\), h800 \(79.19 GiB, cc 9.0\)"):
        resolve_total(79.19, CATALOG, vendor="nvidia")
    # A caller whose configuration does not read the difference (its prediction is the same) gets the card.
    assert resolve_total(79.19, CATALOG, vendor="nvidia", same=lambda g: g.compute_capability).gpu.key == "h100-sxm"


def test_the_band_and_the_vendor() -> None:
    with pytest.raises(UnknownGpuError, match=r"no catalog card has a device total of 3.5 GiB"):
        resolve_total(3.5, CATALOG)
    # 191.98 GiB (vLLM on an MI300X) is an AMD total only.
    assert resolve_total(191.98, CATALOG, vendor="amd").gpu.key == "mi300x"
    with pytest.raises(UnknownGpuError):
        resolve_total(191.98, CATALOG, vendor="nvidia")
    # An offload architecture narrows the cards: gfx942 at 255.98 GiB is the MI325X.
    assert resolve_total(255.98, CATALOG, vendor="amd", arch="gfx942").gpu.key == "mi325x"
