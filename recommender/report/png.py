"""Rasterise a plot SVG to PNG with resvg (the optional `plot` extra: a self-contained wheel, no system libraries).

Text is drawn with the fonts installed on the machine (DejaVu Sans, Helvetica or Arial, else any sans-serif).
"""

from __future__ import annotations

from recommender.errors import InputError

MISSING = "PNG plots need the 'plot' extra: pip install 'vllm-plan[plot]' (or write an .svg file)"


def require_rasteriser() -> None:
    """Fail early, with the install line, when the `plot` extra is missing."""
    try:
        import resvg_py  # noqa: F401
    except ImportError:
        raise InputError(MISSING) from None


def svg_to_png(svg: str, *, zoom: float = 2.0) -> bytes:
    """PNG bytes at `zoom` x the SVG's pixel size (2 = sharp on high-density screens)."""
    require_rasteriser()
    import resvg_py

    try:
        return bytes(resvg_py.svg_to_bytes(svg_string=svg, zoom=zoom, background="#ffffff"))
    except ValueError as exc:  # resvg rejected the SVG: our bug, not the user's input
        raise RuntimeError(f"resvg could not rasterise the plot: {exc}") from exc
