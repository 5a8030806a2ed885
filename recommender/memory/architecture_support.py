"""Can the target vLLM release load the model's architecture at all? (pure)

vLLM resolves `config.json`'s `architectures` against its model registry
(vllm/model_executor/models/registry.py, `ModelRegistry.resolve_model_cls`; `__init__.py`'s `_MODELS` before 0.6.6)
and, when no name is registered, refuses to start with `_raise_for_unsupported`'s "Model architectures [...] are
not supported for now. Supported architectures: [...]" (the same words from 0.4 to 0.33). The first release whose
registry names each architecture is `ModelSpec.first_release` (profiles/architectures.yaml, with sources): a release
before it cannot load the model; a release inside an unpinned bracket (after the newest release known to lack it,
by the first known to have it) may not. A development build (0.16.1rc1.dev123) reads as its release number: it can
hold what only the next release ships, which is why a row is pinned to `first` only where no such build is known
to have it earlier.

The Transformers-backend fallback (`--model-impl auto`, in the registry from v0.7.2) cannot rescue such a release: it needs the
image's own `transformers` to know the architecture, and a model published after the release is newer than both.
"""

from __future__ import annotations

from recommender.memory.engine import VllmVersion
from recommender.memory.startup_issues import IssueKind, StartupIssue
from recommender.model.spec import FirstRelease


def architecture_issues(known: FirstRelease | None, version: VllmVersion) -> list[StartupIssue]:
    """The refusal (a release before the first one) or the uncertainty (inside the bracket); none otherwise."""
    if known is None:
        return []
    if known.base is not None and (before := architecture_issues(known.base, version)):
        return before  # the registry does not name the architecture yet: vLLM's own refusal
    if known.first is not None:
        if version < VllmVersion.parse(known.first):
            return [not_in_release(known, version)]
        return []
    assert known.after is not None and known.by is not None  # the loader admits `first`, or `after` with `by`
    if version <= VllmVersion.parse(known.after):
        return [not_in_release(known, version)]
    if version < VllmVersion.parse(known.by):
        return [release_uncertain(known, version)]
    return []


def not_in_release(known: FirstRelease, version: VllmVersion) -> StartupIssue:
    """registry.py _raise_for_unsupported (vLLM's own text, the supported list elided)."""
    first = f"first in vLLM {known.first}" if known.first else f"absent from vLLM {known.after}, present by {known.by}"
    if known.config_key:  # the registry has the name; its model code lacks the layers, so the weights do not load
        what = f"{known.architecture} with `{known.config_key}` in config.json"
        said = "that release's model code does not build those layers, so loading the checkpoint's weights fails"
    else:
        what = known.architecture
        said = (
            f"vLLM: Model architectures ['{known.architecture}'] are not supported for now. Supported "
            "architectures: [...]"
        )
    return StartupIssue(
        IssueKind.ARCHITECTURE_NOT_IN_RELEASE,
        f"vLLM {version} cannot load {what}: {first} ({known.source}). {said}",
        version=known.first or known.by,
    )


def release_uncertain(known: FirstRelease, version: VllmVersion) -> StartupIssue:
    """A release between the newest known without the architecture and the first known with it."""
    return StartupIssue(
        IssueKind.ARCHITECTURE_RELEASE_UNCERTAIN,
        f"vLLM {version} may not load {_named(known)}: the release that added it is not pinned (after "
        f"{known.after}, by {known.by}: {known.source}); if vLLM refuses to start with 'Model architectures [...] are "
        f"not supported for now', use vLLM {known.by} or newer",
        version=known.by,
    )


def _named(known: FirstRelease) -> str:
    return f"{known.architecture} with `{known.config_key}`" if known.config_key else known.architecture
