"""vllm-plan: plan vLLM launch flags from a GPU-free model of vLLM's startup memory accounting."""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """`__version__`, looked up when first asked for: importing importlib.metadata takes a noticeable part of the
    console script's start, during which Ctrl-C could only end in a traceback (recommender/console.py)."""
    if name != "__version__":
        raise AttributeError(f"module 'recommender' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("vllm-plan")
    except PackageNotFoundError:  # running from a checkout without installing
        found = "0.0.0+checkout"
    globals()["__version__"] = found
    return found
