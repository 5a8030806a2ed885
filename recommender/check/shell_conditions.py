"""The shell's `test` / `[ ]` / `[[ ]]` conditions and `$(( ))` arithmetic, decided only from what a script itself
sets (pure). Anything else - a file test, a command's exit status, a value from a variable the script does not
set - is undecidable (None), and the caller then reads every branch.
"""

from __future__ import annotations

import ast
import fnmatch
import operator
import posixpath
import re
import warnings
from collections.abc import Callable, Mapping

_INT = re.compile(r"^-?\d+$")
_NUMERIC: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq,
    "-ne": operator.ne,
    "-gt": operator.gt,
    "-ge": operator.ge,
    "-lt": operator.lt,
    "-le": operator.le,
}


def evaluate_test(words: list[tuple[str, bool]]) -> bool | None:
    """A condition command's result: words are (text, known); None when it cannot be decided here."""
    if not words:
        return None
    if words[0][0] == "!":
        inner = evaluate_test(words[1:])
        return None if inner is None else not inner
    head = words[0][0]
    if head in ("true", ":"):
        return True
    if head == "false":
        return False
    if head == "[" and words[-1][0] == "]":
        return _expression(words[1:-1], extended=False)
    if head == "[[" and words[-1][0] == "]]":
        return _expression(words[1:-1], extended=True)
    if head == "test":
        return _expression(words[1:], extended=False)
    return None  # another command's exit status


def _expression(words: list[tuple[str, bool]], *, extended: bool) -> bool | None:
    if any(not known for _, known in words):
        return None
    texts = [t for t, _ in words]
    if texts[:1] == ["!"]:
        inner = _expression(words[1:], extended=extended)
        return None if inner is None else not inner
    if len(texts) == 1:
        return texts[0] != ""
    if len(texts) == 2:
        op, value = texts
        return {"-n": value != "", "-z": value == ""}.get(op)  # file tests (-f, -d, ...) are undecidable
    if len(texts) == 3:
        return _binary(*texts, extended=extended)
    return None


def _binary(left: str, op: str, right: str, *, extended: bool) -> bool | None:
    if op in ("=", "=="):
        return fnmatch.fnmatchcase(left, right) if extended else left == right
    if op == "!=":
        return not fnmatch.fnmatchcase(left, right) if extended else left != right
    if op == "=~" and extended:
        try:
            with warnings.catch_warnings():  # a script's own pattern: Python's FutureWarnings are not the user's
                warnings.simplefilter("ignore")
                return re.search(right, left) is not None
        except re.error:
            return None
    if op in _NUMERIC and _INT.match(left) and _INT.match(right):
        return _NUMERIC[op](int(left), int(right))
    return None


_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
# `(( N > 0 ))` and `$(( A == B ))`: a comparison is 1 or 0, as in the shell
_COMPARISONS: dict[type, Callable[[int, int], bool]] = {
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def arithmetic(expr: str, scope: Mapping[str, str], unknown: set[str]) -> int | None:
    """`$(( expr ))` over integers and the script's own variables (`$N`, `${N}` or bare `N`); None if unknown."""
    if "$(" in expr or "`" in expr or len(expr) > 200:
        return None

    def value(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or m.group(3)
        text = scope.get(name)
        if text is None or name in unknown or not _INT.match(text.strip()):
            raise LookupError(name)
        return f"({text.strip()})"

    try:
        python = re.sub(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)|\b([A-Za-z_]\w*)\b", value, expr).replace("/", "//")
        tree = ast.parse(python.strip(), mode="eval")
        return _eval(tree.body)
    except (LookupError, SyntaxError, ValueError, ZeroDivisionError, RecursionError):
        return None


def _eval(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _eval(node.operand)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
        return int(_COMPARISONS[type(node.ops[0])](_eval(node.left), _eval(node.comparators[0])))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left), _eval(node.right)
        if abs(left) > 1 << 62 or abs(right) > 1 << 62:
            raise ValueError("too large")
        return _BINOPS[type(node.op)](left, right)
    raise ValueError("not plain integer arithmetic")


# --- three-valued logic (None: cannot be known here), as the shell combines exit statuses ---------------------


def combine(parts: list[tuple[str, bool | None]]) -> bool | None:
    """`a && b || c` over three-valued results (None: cannot be known here)."""
    value: bool | None = True
    for op, part in parts:
        if op == "&&":
            value = False if value is False or part is False else (None if None in (value, part) else True)
        elif op == "||":
            value = True if value is True or part is True else (None if None in (value, part) else False)
        else:
            value = part
    return value


def combine_or(parts: list[bool | None]) -> bool | None:
    """Any of three-valued results."""
    value: bool | None = False
    for part in parts:
        value = either(value, part)
    return value


def either(a: bool | None, b: bool | None) -> bool | None:
    """`a || b` over three-valued results."""
    return True if a is True or b is True else (None if None in (a, b) else False)


def negated(a: bool | None) -> bool | None:
    """`! a` over a three-valued result."""
    return None if a is None else not a


def files_present(
    words: list[tuple[str, bool]], script: str, root: str, read: Callable[[str], str | None]
) -> list[tuple[str, bool]]:
    """`-f FILE` / `-e` / `-r` / `-s` decided from the script's repository, a relative FILE from the script's folder
    (`script`): a file of the repository that `source` would read is there (`[[ -f "$COMMON_SETUP" ]] && source
    "$COMMON_SETUP"`, the test written `-n 1`); an env file under the repository's folder (`root`) that it does not
    hold (`.env`, `.env.local`, `vllm.env`: kept out of commits) is not, as `source .env` of it sets nothing here
    (`[ -f "$ROOT/.env" ] && X=$(grep ^X= "$ROOT/.env" ...)`: the script's `${X:-default}` then holds). Other files
    (a venv, a downloaded model) stay undecided."""
    out = list(words)
    for k in range(len(out) - 1):
        (op, _), (path, known) = out[k], out[k + 1]
        if op in ("-f", "-e", "-r", "-s") and known and path:
            target = posixpath.normpath(posixpath.join(posixpath.dirname(script), path))
            name = posixpath.basename(target)
            env_file = name == ".env" or name.startswith(".env.") or name.endswith(".env")
            if read(target) is not None:
                out[k], out[k + 1] = ("-n", True), ("1", True)
            elif env_file and root and target.startswith(root.rstrip("/") + "/"):
                out[k], out[k + 1] = ("-n", True), ("", True)
    return out
