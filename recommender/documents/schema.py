"""Typed documents: frozen dataclasses whose fields carry their bounds, one reader and one writer for all (pure).

A document class declares each field once, with `count`, `real`, `text`, `flag` or `items`; `dump` writes it as
JSON-compatible data and `load` reads untrusted data (parsed YAML or JSON) back into it, checking every value:
types (a bool is not a number, a number is not a string), ranges, finite floats, enums, patterns, lengths,
printable text, and no key the class does not declare. Errors name the field's path (`prediction.max_model_len`,
`alternatives[1].command[3]`), so one line says what is wrong and where.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any, TypeVar, Union

T = TypeVar("T")

MAX_TEXT = 4096  # characters in one string unless a field says otherwise


class SchemaError(ValueError):
    """A value that does not fit its field; `path` names the field."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path or 'document'}: {problem}")
        self.path = path
        self.problem = problem


def count(lo: int, hi: int, **kw: Any) -> Any:
    """An integer field in [lo, hi]."""
    return dataclasses.field(metadata={"range": (lo, hi), **_meta(kw)}, **_default(kw))


def real(lo: float, hi: float, *, above: bool = False, **kw: Any) -> Any:
    """A finite float in [lo, hi] (or (lo, hi] with above=True); integers are accepted."""
    return dataclasses.field(metadata={"range": (lo, hi), "above": above, **_meta(kw)}, **_default(kw))


def text(max_len: int = MAX_TEXT, *, pattern: str | None = None, choices: tuple[str, ...] = (), **kw: Any) -> Any:
    """A printable string (no control characters, no line or paragraph separators), bounded, optionally
    matching a pattern or one of `choices`."""
    meta = {"max_len": max_len, "pattern": re.compile(pattern) if pattern else None, "choices": choices}
    return dataclasses.field(metadata={**meta, **_meta(kw)}, **_default(kw))


def flag(**kw: Any) -> Any:
    """A boolean field (true or false, not 0/1 or "yes")."""
    return dataclasses.field(metadata=_meta(kw), **_default(kw))


def items(max_items: int, *, max_len: int = MAX_TEXT, pattern: str | None = None, **kw: Any) -> Any:
    """A list (tuple) of at most `max_items`; string items are bounded by `max_len` / `pattern`."""
    meta = {"max_items": max_items, "max_len": max_len, "pattern": re.compile(pattern) if pattern else None}
    return dataclasses.field(metadata={**meta, **_meta(kw)}, **_default(kw))


def nested(**kw: Any) -> Any:
    """A nested document; `flatten=True` writes its keys into the parent mapping."""
    return dataclasses.field(metadata=_meta(kw), **_default(kw))


def _meta(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: kw[k] for k in ("key", "flatten", "omit_none") if k in kw}


def _default(kw: dict[str, Any]) -> dict[str, Any]:
    return {"default": kw["default"]} if "default" in kw else {}


def _key(f: dataclasses.Field[Any]) -> str:
    return str(f.metadata.get("key", f.name))


@cache
def _hints(cls: Any) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def dump(doc: Any) -> Any:
    """A document as JSON-compatible data (dicts in field order, lists for tuples)."""
    if dataclasses.is_dataclass(doc) and not isinstance(doc, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(doc):
            value = getattr(doc, f.name)
            if value is None and f.metadata.get("omit_none"):
                continue
            if f.metadata.get("flatten"):
                out.update(dump(value))
            else:
                out[_key(f)] = dump(value)
        return out
    if isinstance(doc, tuple | list):
        return [dump(v) for v in doc]
    if isinstance(doc, Mapping):
        return {str(k): dump(v) for k, v in doc.items()}
    return doc


@cache
def keys_of(cls: Any) -> frozenset[str]:
    """Every key a mapping of `cls` may hold (flattened children included)."""
    out: set[str] = set()
    for f in dataclasses.fields(cls):
        if f.metadata.get("flatten"):
            out |= keys_of(_hints(cls)[f.name])
        else:
            out.add(_key(f))
    return frozenset(out)


def load(cls: type[T], data: object, path: str = "") -> T:
    """Read untrusted data into `cls`, checking every field (raises SchemaError)."""
    if not isinstance(data, Mapping):
        raise SchemaError(path, f"expected a mapping, got {show(data)}")
    doc: Any = cls
    known = keys_of(doc)
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise SchemaError(_join(path, unknown[0][:60]), "unknown field (not part of this document version)")
    values: dict[str, Any] = {}
    for f in dataclasses.fields(doc):
        hint = _hints(doc)[f.name]
        if f.metadata.get("flatten"):
            values[f.name] = load(hint, {k: v for k, v in data.items() if k in keys_of(hint)}, path)
            continue
        key = _key(f)
        if key not in data:
            if f.default is dataclasses.MISSING:
                raise SchemaError(_join(path, key), "missing")
            values[f.name] = f.default
            continue
        values[f.name] = _value(hint, f.metadata, data[key], _join(path, key))
    return cls(**values)


def _value(hint: Any, meta: Mapping[str, Any], raw: object, path: str) -> Any:
    args = typing.get_args(hint)
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        if raw is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _value(inner, meta, raw, path)
    if origin is tuple:
        if not isinstance(raw, list):
            raise SchemaError(path, f"expected a list, got {show(raw)}")
        if len(raw) > meta["max_items"]:
            raise SchemaError(path, f"more than {meta['max_items']:,} items")
        return tuple(_value(args[0], meta, v, f"{path}[{i}]") for i, v in enumerate(raw))
    if origin is dict:
        return _mapping(args[1], raw, path)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return load(hint, raw, path)
    return _scalar(hint, meta, raw, path)


def _mapping(value_type: Any, raw: object, path: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or len(raw) > 256:
        raise SchemaError(path, f"expected a mapping of at most 256 entries, got {show(raw)}")
    limits = {"range": (-math.inf, math.inf), "max_len": 64, "pattern": re.compile(r"[a-z0-9_]+"), "choices": ()}
    return {_scalar(str, limits, k, path): _scalar(value_type, limits, v, _join(path, str(k))) for k, v in raw.items()}


def _scalar(hint: Any, meta: Mapping[str, Any], raw: object, path: str) -> Any:
    if hint is bool:
        if not isinstance(raw, bool):
            raise SchemaError(path, f"expected true or false, got {show(raw)}")
        return raw
    if hint is int:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise SchemaError(path, f"expected an integer, got {show(raw)}")
        return _in_range(raw, meta, path)
    if hint is float:
        if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
            raise SchemaError(path, f"expected a finite number, got {show(raw)}")
        return float(_in_range(raw, meta, path))
    if hint is str:
        return _text(raw, meta, path)
    raise TypeError(f"{path}: no reader for {hint!r}")  # pragma: no cover - a schema declaration bug


def _in_range(value: float, meta: Mapping[str, Any], path: str) -> float:
    lo, hi = meta.get("range", (-math.inf, math.inf))
    if meta.get("above"):
        if not lo < value <= hi:
            raise SchemaError(path, f"must be above {lo:,} and at most {hi:,}, got {value!r}")
    elif not lo <= value <= hi:
        raise SchemaError(path, f"must be between {lo:,} and {hi:,}, got {value!r}")
    return value


def _text(raw: object, meta: Mapping[str, Any], path: str) -> str:
    if not isinstance(raw, str):
        hint = " (quote it)" if isinstance(raw, int | float) and not isinstance(raw, bool) else ""
        raise SchemaError(path, f"expected a string{hint}, got {show(raw)}")
    if not raw.isprintable():
        raise SchemaError(path, f"control characters or line separators are not allowed: {show(raw)}")
    if len(raw) > meta.get("max_len", MAX_TEXT):
        raise SchemaError(path, f"longer than {meta.get('max_len', MAX_TEXT):,} characters")
    choices = meta.get("choices") or ()
    if choices and raw not in choices:
        raise SchemaError(path, f"{show(raw)} is not one of {', '.join(choices)}")
    pattern = meta.get("pattern")
    if pattern is not None and not pattern.fullmatch(raw):
        raise SchemaError(path, f"{show(raw)} is not a valid value here")
    return raw


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def show(value: object) -> str:
    """A value shown on one line, shortened."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
