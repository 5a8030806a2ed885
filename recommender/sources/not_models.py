"""References that name something other than a model's config.json, refused in one line that says what they are
and what to give instead (rather than as a JSON error, a missing config.json or a hub miss):

- a GGUF checkpoint: a `.gguf` file (by name or by its `GGUF` magic bytes, as vLLM's check_gguf_file tells), vLLM's
  `repo_id:quant_type` form (is_remote_gguf in vllm/transformers_utils/gguf_utils.py: `unsloth/Qwen3-8B-GGUF:Q4_K_M`)
  or a `*-GGUF` repository (every GGUF publisher's naming). vllm-plan reads safetensors checkpoints; GGUF weights
  stay in llama.cpp's block formats, which the memory model does not size;
- a LoRA adapter folder (PEFT's adapter_config.json and no config.json): vLLM serves it on its base model;
- a deployment file or script given where a model goes: `check` judges those.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from recommender.errors import ModelConfigError, UnknownModelError
from recommender.quoting import quoted
from recommender.safe_load import UntrustedDocumentError, load_json, path_kind, read_text

_GGUF_MAGIC = b"GGUF"
_PLAIN = re.compile(r"[\w./~@:+-]{1,200}")  # a model reference that can be shown in a command as it is
_ADAPTER_CONFIG_BYTES = 1 << 20
# A GGML quantization type as GGUF names write it: Q4_K_M, Q8_0, Q2_K, IQ2_XXS, IQ4_NL, TQ1_0, F16, BF16 (vLLM's
# is_valid_gguf_quant_type: GGMLQuantizationType's names, with the _S/_M/_L/_XL/_XS/_XXS size suffixes).
_GGML = r"(?:I?Q\d(?:_[0-9K])?(?:_(?:XXS|XS|S|M|L|XL|NL))*|TQ\d_0|BF16|F16|F32|F64|MXFP4)"
# vLLM's `repo_id:quant_type`, the type a GGML one, or a dash-prefixed custom one (`UD-Q4_K_XL`).
_REMOTE_GGUF = re.compile(rf"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*:(?:[A-Za-z0-9_+]+-)*{_GGML}$", re.I)
_GGUF_REPO = re.compile(r"^[^/\s]+/[^/\s]+[-_]gguf$", re.I)
# What a GGUF name adds to the model's: the shard (`-00001-of-00003`), the quantization (`-Q4_K_M`, `.Q8_0`,
# `-UD-Q4_K_XL`), the repository's `-GGUF`; dropped to name the model it was converted from.
_GGUF_ADDITIONS = re.compile(
    rf"(?:[-_.](?:\d{{5}}-of-\d{{5}}|(?:UD-)?{_GGML}|gguf))+$|:[^/]*$",
    re.I,
)


def gguf_name(ref: str) -> bool:
    """A reference that names a GGUF checkpoint by its form alone (no file access)."""
    return ref.lower().endswith(".gguf") or bool(_REMOTE_GGUF.match(ref) or _GGUF_REPO.match(ref))


def gguf_file(path: Path) -> bool:
    """A local file that is GGUF: its name, else its first four bytes (vLLM's check_gguf_file)."""
    if path_kind(path) != "file":
        return False
    if path.suffix.lower() == ".gguf":
        return True
    try:
        with path.open("rb") as fh:
            return fh.read(4) == _GGUF_MAGIC
    except OSError:
        return False


def gguf_error(ref: str, close_hint: Callable[[str], str]) -> UnknownModelError:
    """The one line for a GGUF checkpoint, naming the catalog models close to the one it was converted from."""
    base = _GGUF_ADDITIONS.sub("", ref) or ref
    return UnknownModelError(
        f"model {quoted(ref)} is a GGUF checkpoint: vllm-plan sizes safetensors checkpoints from their config.json, "
        f"and GGUF's llama.cpp block formats are not modelled; plan the model it was converted from{close_hint(base)}"
    )


def gguf_folder_error(folder: Path) -> UnknownModelError | None:
    """A folder of GGUF files and no config.json (a llama.cpp download): the GGUF line, else None."""
    files = sorted(p.name for p in folder.glob("*.gguf"))[:1] if path_kind(folder) == "dir" else []
    if not files:
        return None
    return UnknownModelError(
        f"{quoted(str(folder))} holds GGUF files ({quoted(files[0])}, ...) and no config.json: vllm-plan sizes "
        "safetensors checkpoints from their config.json, and GGUF's llama.cpp block formats are not modelled; plan "
        "the model it was converted from"
    )


def adapter_error(folder: Path) -> UnknownModelError | None:
    """A PEFT LoRA adapter folder (adapter_config.json, no config.json): the base model and the flags that serve it."""
    path = folder / "adapter_config.json"
    if path_kind(path) != "file":
        return None
    try:
        adapter = load_json(read_text(path, _ADAPTER_CONFIG_BYTES))
    except UntrustedDocumentError as exc:
        raise ModelConfigError(f"{path}: {exc}") from None
    adapter = adapter if isinstance(adapter, dict) else {}
    base = adapter.get("base_model_name_or_path")
    rank = adapter.get("r")
    ranked = isinstance(rank, int) and not isinstance(rank, bool) and rank > 0
    flags = f"--enable-lora --max-lora-rank {rank}" if ranked else "--enable-lora --max-lora-rank RANK"
    of_base = f" of {quoted(base)}" if isinstance(base, str) and base else ""
    model = base if isinstance(base, str) and _PLAIN.fullmatch(base) else "BASE_MODEL"
    return UnknownModelError(
        f"{quoted(str(folder))} is a LoRA adapter (adapter_config.json){of_base}, not a model: vLLM serves it on its "
        f"base model with --enable-lora and --lora-modules NAME=PATH; plan that (`vllm-plan explain {model} {flags}`; "
        "--max-lora-rank at least the adapter's r)"
    )


def deployment_file_error(path: Path, exc: ModelConfigError) -> ModelConfigError:
    """A file that is no config.json, given where a model goes (a manifest, a script, a plan): say `check` reads it."""
    return ModelConfigError(
        f"{exc}; it is not a model's config.json: to judge a deployment file or launch script, run "
        f"`vllm-plan check {quoted(str(path))}`"
    )
