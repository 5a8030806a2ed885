"""The only module that knows where `profiles/` and `templates/` live.

In a wheel they are packaged as `recommender/_data/{profiles,templates}` (see pyproject's
force-include); in a checkout or an editable install they are the top-level folders next to the package.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _locate(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} is missing from this installation of vllm-plan")


def profiles_dir() -> Path:
    """Folder holding `gpus/`, `models/` and the vLLM flag tables."""
    return _locate("profiles")


def templates_dir() -> Path:
    """Folder holding the Jinja templates of the renderers."""
    return _locate("templates")
