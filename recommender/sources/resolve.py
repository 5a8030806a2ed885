"""Resolve a model reference to a ModelSpec: local path, then bundled catalog, then the hub."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from recommender.catalog import bare_name_matches, find_model, first_release_for, model_files, spelled_id
from recommender.errors import FetchError, InputError, UnknownModelError
from recommender.model.checkpoint_map import CheckpointInventory, inventory_of
from recommender.model.parse import parse_config
from recommender.model.pooling import as_pooling
from recommender.model.spec import ModelSpec
from recommender.quoting import quoted
from recommender.safe_load import path_kind
from recommender.sources.hub import HubFetcher, ModelFetcher
from recommender.sources.local import read_local
from recommender.sources.not_models import gguf_error, gguf_file, gguf_name
from recommender.sources.safetensors import CheckpointSummary

# A repository page's address pasted from the browser: https://huggingface.co/org/name/tree/REV (or blob/REV/file)
# What git's check-ref-format refuses in a branch or tag name (and so the hub): huggingface_hub joins the revision
# into its cache path (refs/<revision>), so `../../x` would read and write outside the cache.
_BAD_REVISION = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//|^[/-]|/$|\.lock$|\.$|(?:^|/)\.")
_REPO_PAGE = re.compile(r"^https?://[^/\s]+/([^/\s@]+/[^/\s@]+)/(?:tree|blob|resolve)/([^/\s]+)(?:/\S*)?$")


# A file's name, never a hub repository's: `deploy/plan.yaml` that does not exist is a missing file, not a hub id.
_FILE_SUFFIXES = (".json", ".yaml", ".yml", ".sh", ".txt", ".toml", ".service", ".safetensors", ".bin")


def _looks_like_path(ref: str) -> bool:
    return (
        ref.startswith((".", "/", "~"))
        or ref.lower().endswith(_FILE_SUFFIXES)
        or path_kind(Path(ref).expanduser()) != "missing"
    )


def _is_repo_id(ref: str) -> bool:
    parts = ref.split("/")
    return len(parts) == 2 and all(parts) and " " not in ref


def _with_dtype(config: dict[str, Any], checkpoint: CheckpointSummary | None) -> dict[str, Any]:
    """A config without torch_dtype takes the checkpoint's main dtype (as vLLM's `auto` then would)."""
    if checkpoint is None or config.get("torch_dtype") or config.get("dtype"):
        return config
    dtype = {"BF16": "bfloat16", "F16": "float16", "F32": "float32"}.get(checkpoint.main_dtype or "")
    return {**config, "torch_dtype": dtype} if dtype else config


def with_checkpoint(spec: ModelSpec, checkpoint: CheckpointSummary | None, notes: tuple[str, ...] = ()) -> ModelSpec:
    """Attach what the safetensors headers hold (bytes, dtypes, every tensor), say where the weights are counted
    from, and warn (as an approximation of the model) when the architecture formula's parameter count is more than
    1% away from the headers' (packed tensors unpacked: model/checkpoint_map.py)."""
    notes = spec.notes + notes
    if checkpoint is None:
        return replace(spec, notes=notes) if notes != spec.notes else spec
    attached = replace(
        spec,
        checkpoint_bytes=checkpoint.total_bytes,
        checkpoint_dtypes=tuple(checkpoint.bytes_by_dtype.items()),
        checkpoint_tensors=checkpoint.tensors,
    )
    if not checkpoint.tensors:
        return replace(attached, notes=notes)
    inventory = inventory_of(attached)
    formula = spec.params.total if spec.params else 0
    stored = inventory.params
    approximate = spec.approximate
    if formula and stored and abs(stored - formula) > 0.01 * stored:
        approximate += (
            f"the safetensors headers hold {stored:,} parameters, the architecture formula {formula:,} "
            f"({(formula - stored) / stored:+.1%})",
        )
    return replace(attached, notes=notes + weights_notes(inventory, len(checkpoint.tensors)), approximate=approximate)


def weights_notes(inventory: CheckpointInventory, listed: int) -> tuple[str, ...]:
    """Where the weights are counted from, and the tensors that were dropped or not understood."""
    if not inventory.usable:
        return (f"weights from the architecture formula: {inventory.fallback}",)
    said = f"weights counted from the checkpoint's {listed:,} tensors (safetensors headers)"
    if inventory.dropped:
        said += f"; vLLM does not load {len(inventory.dropped):,} of them ({_names(inventory.dropped)})"
    if inventory.unknown:
        said += f"; {len(inventory.unknown):,} of unknown role counted whole on every GPU ({_names(inventory.unknown)})"
    return (said,)


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")


def _parsed(config: dict[str, Any], **kwargs: Any) -> ModelSpec:
    """parse_config, with the first vLLM release that can load this config's architecture
    (profiles/architectures.yaml)."""
    spec = parse_config(config, **kwargs)
    return replace(spec, first_release=first_release_for(spec.architecture, config))


def resolve_model(ref: str, *, revision: str | None = None, fetcher: ModelFetcher | None = None) -> ModelSpec:
    """A ModelSpec for `ref`: a local directory or config.json, a catalog id, or (last) a hub repository."""
    ref = ref.strip()
    if not ref:
        raise UnknownModelError("no model given")
    page = _REPO_PAGE.match(ref)
    if page:  # that revision of that repository, as `org/name@REV` says it
        ref = f"{page.group(1)}@{page.group(2)}"
    _refuse_non_model(ref)
    if "@" in ref and not _looks_like_path(ref):
        ref, revision = _split_revision(ref, revision)
    _check_revision(revision)
    if _looks_like_path(ref) and (path_kind(Path(ref).expanduser()) != "missing" or find_model(ref) is None):
        path = Path(ref).expanduser()
        config, hf_quant, checkpoint = read_local(path)
        spec = _parsed(
            _with_dtype(config, checkpoint), name=str(path), source=f"local: {path}", hf_quant_config=hf_quant
        )
        spec = with_checkpoint(spec, checkpoint)
        folder = path if path_kind(path) == "dir" else path.parent
        return as_pooling(spec, f"{folder / 'modules.json'}") if path_kind(folder / "modules.json") == "file" else spec
    match = find_model(ref) if revision is None else None
    if match is None and _is_repo_id(ref):
        try:
            remote = (fetcher or HubFetcher()).fetch(ref, revision)
        except (FetchError, UnknownModelError) as exc:
            if not (hint := _catalog_without_revision(ref, revision) or _close_hint(ref)):
                raise
            raise type(exc)(f"{exc}{hint}") from exc
        at = f"@{revision}" if revision else ""
        spec = _parsed(
            _with_dtype(remote.config, remote.checkpoint),
            name=ref,
            source=f"hub: {ref}{at}",
            hf_quant_config=remote.hf_quant_config,
        )
        spec = with_checkpoint(spec, remote.checkpoint, remote.notes)
        return (
            as_pooling(spec, "the repository's sentence-transformers modules.json")
            if remote.sentence_transformers
            else spec
        )
    if match is None:
        raise UnknownModelError(_not_found(ref))
    entry = match.entry
    spec = _parsed(
        entry.config,
        name=entry.id if match.via is None else ref,
        source=entry.source if match.via is None else f"catalog entry {entry.id}: {entry.source}",
        hf_quant_config=entry.hf_quant_config,
        published_params=entry.published_params,
    )
    if entry.reconstructed:
        spec = replace(spec, approximate=(*spec.approximate, f"config.json reconstructed: {entry.reconstructed}"))
    if entry.pooling:
        spec = as_pooling(spec, entry.pooling)
    if match.via is None:
        return spec
    return replace(spec, notes=(*spec.notes, f"{quoted(ref)} resolved through the catalog: {match.via}"))


_TAGGED = re.compile(r"^[^/:\s]+/[^/:\s]+:[^/\s]*$")  # `org/name:tag`, as Docker and Ollama tag an image


def _refuse_non_model(ref: str) -> None:
    """A GGUF checkpoint, or `org/name:tag`, refused in one line that says what to give instead."""
    path = Path(ref).expanduser()
    if gguf_file(path) or (gguf_name(ref) and find_model(ref) is None and path_kind(path) == "missing"):
        raise gguf_error(ref, _converted_from)
    if _TAGGED.match(ref) and path_kind(Path(ref)) == "missing":
        name, _, tag = ref.partition(":")
        raise UnknownModelError(
            f"model {quoted(ref)}: a hub id has no ':{tag}'; a revision is written {name}@REV (or --revision REV)"
        )


def _converted_from(base: str) -> str:
    """`; the catalog has X` when the name a GGUF conversion was made from is a catalog entry, else the closest."""
    match = find_model(base)
    return f"; the catalog has it: {match.entry.id}" if match is not None else _close_hint(base)


def _check_revision(revision: str | None) -> None:
    """A revision the hub could hold, or one line naming the rule it breaks (before it reaches a cache path)."""
    if revision is not None and (not revision or len(revision) > 255 or _BAD_REVISION.search(revision)):
        raise InputError(
            f"revision {quoted(revision)} is not a branch, tag or commit name (git's rules: no '..', '@{{', '//', spaces, "
            "control characters or any of ~^:?*[\\, no leading '/', '-' or '.', no trailing '/', '.' or '.lock')"
        )


def _split_revision(ref: str, revision: str | None) -> tuple[str, str | None]:
    """`org/name@rev` as `org/name` with `--revision rev` (the form pip, lm-eval and others write)."""
    name, _, rev = ref.rpartition("@")
    if not name or not rev or (revision is not None and revision != rev):
        said = f" and --revision {revision}" if revision is not None and rev else ""
        raise UnknownModelError(f"model {quoted(ref)}{said}: give one revision, as org/name@REV or --revision REV")
    return name, rev


def _catalog_without_revision(ref: str, revision: str | None) -> str:
    """When a revision sent a catalog model to the hub and the hub failed: say the catalog has it."""
    match = find_model(ref) if revision is not None else None
    if match is None:
        return ""
    return f"; the bundled catalog has {match.entry.id} (no revision): drop the revision ({revision}) to plan with it offline"


def _not_found(ref: str) -> str:
    """The one-line error for a reference that is no path, catalog entry, alias or hub id."""
    several = bare_name_matches(ref) if "/" not in ref else []
    if len(several) > 1:
        return f"model {quoted(ref)} names several catalog entries ({', '.join(several)}); give the organisation too"
    return (
        f"model {quoted(ref)} is not a local directory, a catalog entry or a hub id (org/name){_close_hint(ref)} "
        "(run `vllm-plan models`, or give a directory holding its config.json)"
    )


_HUB_NAME_MAX = 96  # huggingface_hub's validate_repo_id: a repository name is 1 to 96 characters


def _close_hint(ref: str) -> str:
    """`; closest in the catalog: ...` naming up to three bundled ids close to `ref` as the catalog spells them
    (difflib's ratio of at least 0.6, case-insensitive), or nothing. Only a hint: nothing is resolved by it."""
    low = ref.lower()
    name = low.rsplit("/", 1)[-1]
    if len(name) > _HUB_NAME_MAX:  # no hub id (nor catalog id) is that long: nothing is close (difflib is quadratic)
        return ""
    files = model_files()
    scored = sorted(((_similarity(low, name, key), key) for key in files), key=lambda pair: (-pair[0], pair[1]))
    close = [key for score, key in scored[:3] if score >= 0.6]
    return f"; closest in the catalog: {', '.join(spelled_id(files[key]) for key in close)}" if close else ""


def _similarity(ref: str, name: str, key: str) -> float:
    """difflib's ratio of the ids or of the repository names, whichever is higher (the organisation often differs),
    plus one when the name written is part of the entry's name: meta-llama/Llama-3-8B ranks
    meta-llama/Meta-Llama-3-8B(-Instruct) before Llama-3.2-1B."""
    entry_name = key.split("/", 1)[-1]
    ratio = max(
        difflib.SequenceMatcher(None, ref, key).ratio(), difflib.SequenceMatcher(None, name, entry_name).ratio()
    )
    return ratio + (1.0 if len(name) >= 4 and name in entry_name else 0.0)
