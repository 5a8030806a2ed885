"""YAML and JSON from untrusted files, with bounded work: size, nesting and aliases limited before the parser
walks them, safe types only, every failure one `UntrustedDocumentError` with the line (I/O only in `read_text`).

PyYAML's safe loader and the json module recurse once per nesting level (a document 3,000 levels deep raises
RecursionError), PyYAML's scanner is quadratic in flow nesting (`[` x 100,000 takes seconds), and an alias bomb
is small text that expands to billions of nodes for whoever walks the result. Each is refused here, in
milliseconds, as are files that are not UTF-8 text or larger than their kind ever is.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import yaml

MAX_ALIASES = 64


class UntrustedDocumentError(ValueError):
    """Not a document this tool reads: unreadable, not UTF-8, too large, malformed, too deep, too many aliases."""


class _Refused(Exception):
    pass


def read_text(path: Path, max_bytes: int) -> str:
    """A file's UTF-8 text, at most `max_bytes` of it (a larger file, /dev/zero or a FIFO is refused, not read)."""
    if path.exists() and not path.is_file():
        raise UntrustedDocumentError("cannot read it: not a regular file")
    try:
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise UntrustedDocumentError(f"cannot read it: {exc.strerror or exc.__class__.__name__}") from None
    if len(raw) > max_bytes:
        size = f"{max_bytes >> 20} MiB" if max_bytes >= 1 << 20 else f"{max_bytes >> 10} KiB"
        raise UntrustedDocumentError(f"larger than {size}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UntrustedDocumentError(f"not UTF-8 text (byte {exc.start})") from None


_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def flow_depth(text: str) -> int:
    """An upper bound of the nesting of [ and { (quotes ignored); past 100,000 brackets, their count."""
    brackets = re.sub(r"[^\[\]{}]+", "", text)
    if len(brackets) > 100_000:
        return len(brackets)
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def load_json(text: str, *, max_depth: int = 64) -> Any:
    """A JSON document (NaN and Infinity allowed, as Python's and transformers' readers allow them)."""
    if flow_depth(text) > max_depth:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UntrustedDocumentError(f"not valid JSON (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep") from None


def _loader(text: str, max_depth: int, max_aliases: int) -> yaml.SafeLoader:
    class BoundedLoader(yaml.SafeLoader):
        depth = 0
        aliases = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self.aliases += 1
                if self.aliases > max_aliases:
                    raise _Refused(f"more than {max_aliases} YAML aliases")
            self.depth += 1
            if self.depth > max_depth:
                raise _Refused(f"nested more than {max_depth} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader(text)


def load_yaml(text: str, *, max_depth: int = 32, max_aliases: int = MAX_ALIASES) -> object:
    """One YAML (or JSON) document as plain data."""
    if flow_depth(text) > max_depth:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep")
    loader = None
    try:
        loader = _loader(text, max_depth, max_aliases)  # the reader refuses control characters already here
        return loader.get_single_data()
    except _Refused as exc:
        raise UntrustedDocumentError(str(exc)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UntrustedDocumentError(f"not valid YAML{where}: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:  # the reader's: a control character, an undecodable byte
        raise UntrustedDocumentError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep") from None
    finally:
        if loader is not None:
            loader.dispose()
