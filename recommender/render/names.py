"""Kubernetes-safe names (pure)."""

from __future__ import annotations

import re

from recommender.errors import InputError

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def k8s_name(raw: str, *, what: str = "name", max_len: int = 63) -> tuple[str, str | None]:
    """A DNS-1123 label from `raw`, and a message when it had to be normalised."""
    name = re.sub(r"[^a-z0-9-]+", "-", raw.lower()).strip("-")
    name = re.sub(r"-{2,}", "-", name)[:max_len].rstrip("-")
    if not name:
        raise InputError(f"{what} {raw!r} has no characters usable in a Kubernetes name")
    if not _DNS1123.fullmatch(name):  # pragma: no cover - the substitutions above guarantee the form
        raise InputError(f"{what} {raw!r} cannot be turned into a Kubernetes name")
    note = None if name == raw else f"{what} {raw!r} normalised to {name!r} (Kubernetes DNS-1123 label)"
    return name, note


def validate_k8s_name(raw: str, *, what: str) -> str:
    """Reject (rather than rewrite) a name the user chose for a namespace or secret."""
    if len(raw) > 63 or not _DNS1123.fullmatch(raw):
        raise InputError(f"{what} {raw!r} is not a valid Kubernetes name (lowercase letters, digits, '-', max 63)")
    return raw
