"""vllm-plan: plan vLLM launch flags from a GPU-free model of vLLM's startup memory accounting."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("vllm-plan")
except PackageNotFoundError:  # running from a checkout without installing
    __version__ = "0.0.0+checkout"

__all__ = ["__version__"]
