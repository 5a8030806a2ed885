"""YAML and JSON from untrusted files, with bounded work: size, nesting and aliases limited before the parser
walks them, safe types only, every failure one `UntrustedDocumentError` with the line (I/O only in `read_text`).

PyYAML's safe loader and the json module recurse once per nesting level (a document 3,000 levels deep raises
RecursionError), PyYAML's scanner is quadratic in flow nesting (`[` x 100,000 takes seconds), and an alias bomb
is small text that expands to billions of values for whoever walks the result. Each is refused here, in
milliseconds, as are files that are not UTF-8 text or larger than their kind ever is.
"""

from __future__ import annotations

import itertools
import json
import re
import stat
from pathlib import Path
from typing import Any

import yaml


class UntrustedDocumentError(ValueError):
    """Not a document this tool reads: unreadable, not UTF-8, too large, malformed, too deep, an alias bomb."""

    def __init__(self, message: str, *, line: int | None = None, syntax: bool = False) -> None:
        super().__init__(message)
        self.line = line  # 0-based line of a syntax error, when known
        self.syntax = syntax  # not valid YAML / JSON (else: unreadable, or valid but refused by a bound)


class _Refused(Exception):
    pass


def path_kind(path: Path) -> str:
    """'file', 'dir', 'other' (a device, FIFO or socket) or 'missing': also 'missing' for a name the system cannot
    look up at all (longer than NAME_MAX, a NUL byte, a component that is a file, no permission to search)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return "missing"
    return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"


def read_text(path: Path, max_bytes: int) -> str:
    """A file's UTF-8 text, at most `max_bytes` of it (a larger file, /dev/zero or a FIFO is refused, not read)."""
    if path_kind(path) in ("dir", "other"):
        raise UntrustedDocumentError("cannot read it: not a regular file")
    try:
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except ValueError:  # a NUL byte in the name
        raise UntrustedDocumentError("cannot read it: not a file name") from None
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
        raise UntrustedDocumentError(f"not valid JSON (line {exc.lineno}: {exc.msg})", syntax=True) from None
    except RecursionError:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep") from None


MAX_NODES = 1_000_000  # nodes of a document with every alias expanded (a real manifest has a few thousand)


def _loader(text: str, max_depth: int) -> yaml.SafeLoader:
    class BoundedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            if self.depth > max_depth:
                raise _Refused(f"nested more than {max_depth} levels deep")
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader(text)


def _expanded_size(node: yaml.Node, memo: dict[int, int], limit: int) -> int:
    """Nodes of `node` with every alias expanded (what walking the loaded data visits); a recursive alias counts
    as too many. Memoised per node, so the work is the size of the text, not of the expansion."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = limit + 1  # while it is being counted: an alias back to it is a cycle
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded_size(child, memo, limit) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded_size(k, memo, limit) + _expanded_size(v, memo, limit) for k, v in node.value)
    else:
        size = 1
    memo[key] = min(size, limit + 1)
    return memo[key]


def _documents(text: str, max_depth: int, max_nodes: int, single: bool) -> list[Any]:
    if flow_depth(text) > max_depth:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep")
    loader = None
    try:
        loader = _loader(text, max_depth)  # the reader refuses control characters already here
        nodes = [loader.get_single_node()] if single else []
        while not single and loader.check_node():
            nodes.append(loader.get_node())
        docs = []
        for node in nodes:
            if node is not None and _expanded_size(node, {}, max_nodes) > max_nodes:
                raise _Refused(f"more than {max_nodes:,} values once its aliases are expanded")
            docs.append(None if node is None else loader.construct_document(node))
        return docs
    except _Refused as exc:
        raise UntrustedDocumentError(str(exc)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UntrustedDocumentError(
            f"not valid YAML{where}: {exc.problem or exc.context}",
            line=mark.line if mark is not None else None,
            syntax=True,
        ) from None
    except yaml.YAMLError as exc:  # the reader's: a control character, an undecodable byte
        raise UntrustedDocumentError(f"not valid YAML: {str(exc).splitlines()[0]}", syntax=True) from None
    except RecursionError:
        raise UntrustedDocumentError(f"nested more than {max_depth} levels deep") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(text: str, *, max_depth: int = 32, max_nodes: int = MAX_NODES) -> object:
    """One YAML (or JSON) document as plain data."""
    return _documents(text, max_depth, max_nodes, single=True)[0]


def load_yaml_all(text: str, *, max_depth: int = 64, max_nodes: int = MAX_NODES) -> list[Any]:
    """Every document of a multi-document YAML text (an empty document is None)."""
    return _documents(text, max_depth, max_nodes, single=False)
