"""A GPU named in a deployment file without its memory size (pure): Slurm's `--gres=gpu:a100:4`, SkyPilot's
`A100:8`, Ray's `accelerator_type: A100`. The catalog resolves a bare `a100` to its documented default (the
A100-SXM4-80GB), right for a user who types `--gpu a100`; but a file that writes no size may run on either card,
and a gate that judges it on the larger one passes a deployment the smaller one cannot start. So a name written
without a size that the catalog holds in several sizes is judged on the smallest of them, and the result says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from recommender.gpu_names import GpuName, resolve_gpu
from recommender.hardware import Gpu


def smallest_of_name(written: str, card: Gpu, catalog: Sequence[Gpu]) -> Gpu:
    """The card to judge a file's GPU name on: `card` (what the name resolves to), unless the name writes no memory
    size and the catalog holds the same model name with less memory: then the smallest of those (the same board
    form as `card` first: the A100-SXM4-40GB for a bare `a100`, whose default is the SXM4 80GB)."""
    wanted = GpuName.parse(written)
    if wanted.memory_gb is not None or not wanted.model or card.marketed_gb is None:
        return card
    smaller = [
        g
        for g in catalog
        if g.marketed_gb is not None
        and g.marketed_gb < card.marketed_gb
        and any(GpuName.parse(n).model == wanted.model for n in (g.key, g.name, *g.aliases))
    ]
    if not smaller:
        return card
    least = min(g.marketed_gb or 0.0 for g in smaller)
    sized = [g for g in smaller if g.marketed_gb == least]
    return min(sized, key=lambda g: (_form(g) != _form(card), g.total_bytes, g.key))


def size_note(written: str, catalog: Sequence[Gpu]) -> str | None:
    """What the result says when a file's GPU name is judged on a smaller card than the name's default (None: it
    is not)."""
    card = resolve_gpu(written, catalog)
    chosen = smallest_of_name(written, card, catalog)
    if chosen.key == card.key:
        return None
    return (
        f"GPU {written!r} names no memory size: judged on the smaller {chosen.name} (not the {card.name}); "
        "pass --gpu to judge another card"
    )


def _form(gpu: Gpu) -> str:
    """The board form of a card's name without its size: 'NVIDIA A100-SXM4-80GB' -> 'nvidia a100-sxm4'."""
    words = [w for w in gpu.name.lower().replace("-", " ").split() if not w.rstrip("gb").isdigit()]
    return " ".join(words)
