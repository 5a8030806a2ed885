"""Fetch a model's config from the Hugging Face hub through huggingface_hub (imported lazily).

Honours HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE and HF_HOME as huggingface_hub does; files are cached
in the standard hub cache, so a model fetched once resolves offline afterwards.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from recommender.errors import FetchError, InputError, ModelConfigError, UnknownModelError

_HTTP_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "requests", "urllib3")
OPTIONAL_FILES = ("hf_quant_config.json", "model.safetensors.index.json")


@dataclass(frozen=True, slots=True)
class RemoteModel:
    """The files the planner reads from a hub repository."""

    repo_id: str
    revision: str | None
    config: dict[str, Any]
    hf_quant_config: dict[str, Any] | None
    checkpoint_bytes: int | None


class ModelFetcher(Protocol):
    """Anything that can fetch a repository's config files (the real hub, or a fake in tests)."""

    def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
        """Return the config files of `repo_id` at `revision`."""
        ...


def _load(path: str, what: str) -> Any:
    try:
        with Path(path).open(encoding="utf-8") as fh:
            return json.load(fh)
    except json.JSONDecodeError as exc:
        raise ModelConfigError(f"{what} from the hub is not valid JSON (line {exc.lineno})") from exc


class HubFetcher:
    """huggingface_hub-backed fetcher."""

    def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
        """Download config.json (required) and the optional quantization / index files."""
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import (
            EntryNotFoundError,
            GatedRepoError,
            HFValidationError,
            LocalEntryNotFoundError,
            OfflineModeIsEnabled,
            RepositoryNotFoundError,
            RevisionNotFoundError,
        )

        def get(filename: str) -> str:
            return str(hf_hub_download(repo_id, filename, revision=revision))

        try:
            config = _load(get("config.json"), "config.json")
            extra: dict[str, Any] = {}
            for name in OPTIONAL_FILES:
                try:
                    extra[name] = _load(get(name), name)
                except EntryNotFoundError:
                    continue
        except GatedRepoError as exc:
            raise FetchError(
                f"{repo_id} is gated: accept its license on the hub, then set HF_TOKEN to a token with access"
            ) from exc
        except RevisionNotFoundError as exc:
            raise InputError(f"{repo_id} has no revision {revision!r}") from exc
        except RepositoryNotFoundError as exc:
            raise UnknownModelError(
                f"{repo_id} was not found on the hub (if it is private, set HF_TOKEN); "
                "run `vllm-plan models` for the bundled catalog"
            ) from exc
        except (LocalEntryNotFoundError, OfflineModeIsEnabled) as exc:
            raise FetchError(
                f"cannot fetch {repo_id}: the hub is unreachable or HF_HUB_OFFLINE is set, and it is not in the local "
                "cache; give a local directory with its config.json, or a model from `vllm-plan models`"
            ) from exc
        except EntryNotFoundError as exc:
            raise UnknownModelError(f"{repo_id} has no config.json on the hub") from exc
        except HFValidationError as exc:
            raise UnknownModelError(f"{repo_id!r} is not a valid hub repository id") from exc
        except Exception as exc:
            # Transport failures (timeouts, refused connections) come from the HTTP client under huggingface_hub.
            if isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _HTTP_CLIENT_MODULES:
                raise FetchError(
                    f"cannot fetch {repo_id} from the hub ({exc.__class__.__name__}); check the network or HF_ENDPOINT, "
                    "or set HF_HUB_OFFLINE=1 to use only the local cache"
                ) from exc
            raise
        if not isinstance(config, dict):
            raise ModelConfigError(f"config.json of {repo_id} must hold a JSON object")
        hf_quant = extra.get("hf_quant_config.json")
        index = extra.get("model.safetensors.index.json")
        total = None
        if isinstance(index, dict) and isinstance(index.get("metadata"), dict):
            raw = index["metadata"].get("total_size")
            total = int(raw) if isinstance(raw, (int, float)) else None
        return RemoteModel(repo_id, revision, config, hf_quant if isinstance(hf_quant, dict) else None, total)
