"""Fetch a model's config from the Hugging Face hub through huggingface_hub (imported lazily).

Honours HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE and HF_HOME as huggingface_hub does; files are cached
in the standard hub cache, so a model fetched once resolves offline afterwards.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from recommender.errors import FetchError, InputError, ModelConfigError, UnknownModelError
from recommender.sources import hub_weights
from recommender.sources.safetensors import CheckpointSummary

_HTTP_CLIENT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "requests", "urllib3")
# Seconds the first request may take before the hub counts as unreachable (HF_HUB_ETAG_TIMEOUT overrides it):
# an unreachable hub is reported in one line at once instead of huggingface_hub's five retries (~25 s).
PROBE_TIMEOUT = 1.5


@dataclass(frozen=True, slots=True)
class RemoteModel:
    """The files the planner reads from a hub repository, and its safetensors headers when they could be read."""

    repo_id: str
    revision: str | None
    config: dict[str, Any]
    hf_quant_config: dict[str, Any] | None
    checkpoint: CheckpointSummary | None = None
    notes: tuple[str, ...] = ()
    # a sentence-transformers modules.json: vLLM's --runner auto resolves to pooling (model/pooling.py)
    sentence_transformers: bool = False


class ModelFetcher(Protocol):
    """Anything that can fetch a repository's config files (the real hub, or a fake in tests)."""

    def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
        """Return the config files of `repo_id` at `revision`."""
        ...


def _load(path: str, what: str) -> Any:
    from recommender.safe_load import UntrustedDocumentError, load_json, read_text
    from recommender.sources.local import MAX_CONFIG_BYTES

    try:
        return load_json(read_text(Path(path), MAX_CONFIG_BYTES))
    except UntrustedDocumentError as exc:
        raise ModelConfigError(f"{what} from the hub: {exc}") from None


# huggingface_hub reads these as whole seconds when it is first imported (`int(...)`, a ValueError out of its
# import otherwise): checked here first, so a typo is one line naming the variable, not an internal error.
_WHOLE_SECONDS = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")


def _check_hub_settings() -> None:
    for name in _WHOLE_SECONDS:
        raw = os.environ.get(name)
        if raw and not re.fullmatch(r"\s*[+-]?\d+\s*", raw):
            raise InputError(f"{name}={raw!r}: huggingface_hub reads it as whole seconds (e.g. {name}=2)")


def _probe_timeout() -> float:
    raw = os.environ.get("HF_HUB_ETAG_TIMEOUT", "")
    try:
        return float(raw) if raw else PROBE_TIMEOUT
    except ValueError:
        return PROBE_TIMEOUT


def _is_transport_error(exc: BaseException) -> bool:
    """A failure to talk to the server at all (refused, timed out, DNS), not an answer from it."""
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(exc, HfHubHTTPError):
        return False
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _HTTP_CLIENT_MODULES


# The HTTP clients' timeout exceptions, by type (huggingface_hub uses httpx2 or httpx from 1.0, requests before).
_TIMEOUT_TYPES = (
    ("httpx2", "TimeoutException"),
    ("httpcore2", "TimeoutException"),
    ("httpx", "TimeoutException"),
    ("httpcore", "TimeoutException"),
    ("requests.exceptions", "Timeout"),
    ("urllib3.exceptions", "TimeoutError"),
)


def _is_timeout(exc: BaseException) -> bool:
    """A timeout of the socket or of an HTTP client already imported (a client's exception means it is imported)."""
    types: list[type] = [TimeoutError]
    for module, name in _TIMEOUT_TYPES:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type):
            types.append(cls)
    return isinstance(exc, tuple(types))


def _unreachable(endpoint: str, timeout: float, exc: BaseException) -> str:
    """Why the hub could not be reached, in a few words."""
    if _is_timeout(exc):
        return f"the hub at {endpoint} did not answer within {timeout:g} s"
    detail = str(exc).splitlines()[0][:80] if str(exc) else ""
    return f"the hub at {endpoint} is unreachable ({exc.__class__.__name__}{': ' + detail if detail else ''})"


@contextmanager
def _quiet_hub() -> Iterator[None]:
    """No retry warnings or progress bars from huggingface_hub while the planner talks to the hub."""
    from huggingface_hub.utils import logging as hf_logging
    from huggingface_hub.utils.tqdm import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    level, bars_were_off = hf_logging.get_verbosity(), are_progress_bars_disabled()
    hf_logging.set_verbosity(logging.ERROR)
    disable_progress_bars()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if not bars_were_off:
            enable_progress_bars()


@contextmanager
def _hub_errors(repo_id: str, revision: str | None) -> Iterator[None]:
    """huggingface_hub's exceptions as the planner's one-line errors."""
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        HFValidationError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    try:
        yield
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
    except HfHubHTTPError as exc:  # any other answer: 5xx, 429 rate limit, a proxy's error page
        status = exc.response.status_code if exc.response is not None else "an error"
        raise FetchError(
            f"cannot fetch {repo_id}: the hub answered HTTP {status}; try again later, or set HF_HUB_OFFLINE=1 to "
            "use only the local cache"
        ) from exc


class HubFetcher:
    """huggingface_hub-backed fetcher that fails fast and quietly when the hub cannot be reached."""

    def __init__(self, timeout: float | None = None) -> None:
        _check_hub_settings()
        self.timeout = timeout if timeout is not None else _probe_timeout()

    def fetch(self, repo_id: str, revision: str | None) -> RemoteModel:
        """config.json (required), hf_quant_config.json and modules.json (optional) and the safetensors headers (best
        effort)."""
        with _quiet_hub(), _hub_errors(repo_id, revision):
            online = self._reachable(repo_id, revision)
            config_path = self._download(repo_id, "config.json", revision, online)
            config = _load(config_path, "config.json")
            hf_quant = self._optional(repo_id, "hf_quant_config.json", revision, online)
            modules = self._optional(repo_id, "modules.json", revision, online)
            checkpoint, notes = self._checkpoint(repo_id, revision, hub_weights.commit_of(config_path), online)
        if not isinstance(config, dict):
            raise ModelConfigError(f"config.json of {repo_id} must hold a JSON object")
        quant = hf_quant if isinstance(hf_quant, dict) else None
        return RemoteModel(repo_id, revision, config, quant, checkpoint, notes, modules is not None)

    def _reachable(self, repo_id: str, revision: str | None) -> bool:
        """One request with a short timeout and no retry: True when the hub answers; False when it does not but
        the local cache holds the model; a FetchError at once otherwise. Offline mode makes no request."""
        from huggingface_hub import constants, get_hf_file_metadata, hf_hub_download, hf_hub_url

        if constants.HF_HUB_OFFLINE:
            return False
        try:
            get_hf_file_metadata(hf_hub_url(repo_id, "config.json", revision=revision), timeout=self.timeout)
            return True
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            try:
                hf_hub_download(repo_id, "config.json", revision=revision, local_files_only=True)
                return False
            except Exception:
                raise FetchError(
                    f"cannot fetch {repo_id}: {_unreachable(constants.ENDPOINT, self.timeout, exc)}, and the model "
                    "is not in the local cache; check the network, HF_ENDPOINT or a proxy, or set HF_HUB_OFFLINE=1 "
                    "to use only the cache"
                ) from exc

    @staticmethod
    def _download(repo_id: str, filename: str, revision: str | None, online: bool) -> str:
        from huggingface_hub import hf_hub_download

        return str(hf_hub_download(repo_id, filename, revision=revision, local_files_only=not online))

    def _optional(self, repo_id: str, filename: str, revision: str | None, online: bool) -> Any:
        from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

        try:
            return _load(self._download(repo_id, filename, revision, online), filename)
        except (EntryNotFoundError, LocalEntryNotFoundError):
            return None

    def _checkpoint(
        self, repo_id: str, revision: str | None, commit: str | None, online: bool
    ) -> tuple[CheckpointSummary | None, tuple[str, ...]]:
        """The safetensors headers (cached per commit), or None with the reason; never fails the fetch."""
        from huggingface_hub import constants
        from huggingface_hub.errors import HfHubHTTPError, NotASafetensorsRepoError, SafetensorsParsingError

        tables = hub_weights.cached_tables(repo_id, commit)
        if tables is None and online:
            try:
                tables = hub_weights.fetch_tables(repo_id, revision, commit, constants.HF_HUB_DOWNLOAD_TIMEOUT)
            except NotASafetensorsRepoError:
                return None, ("no safetensors files on the hub: weights come from the architecture formula",)
            except (SafetensorsParsingError, HfHubHTTPError, OSError) as exc:
                why = f"could not be read ({exc.__class__.__name__})"
                return None, (f"the hub's safetensors headers {why}: weights come from the architecture formula",)
            except Exception as exc:
                if not _is_transport_error(exc):
                    raise
                return None, (
                    "the hub's safetensors headers did not arrive: weights come from the architecture formula",
                )
        return (hub_weights.summary(tables), ()) if tables is not None else (None, ())
