"""Code-health limits of issue #9, enforced over the package's source (recommender/).

- No function is longer than MAX_LINES (its `def` line to its last line, decorators aside) unless it says why:
  a `# long: <reason>` comment in the comment block right above it (above its decorators) or on the lines from its
  `def` to its first statement. The reason must say something (a few words), not just mark the function.
- ruff's mccabe complexity check (C901) stays selected with a limit (pyproject.toml says why that limit).
- No decision is taken on the text of an exception: inside `except ... as exc:`, `str(exc)` or `exc.args` are not
  compared, searched or split (key decisions on the exception's type or a field it carries instead).
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "recommender"
MAX_LINES = 60
_LONG = re.compile(r"#\s*long:\s*(?P<reason>.*)")
MIN_REASON_WORDS = 4
# What may be done to a message without deciding on it (formatting it for output).
_TEXT_TESTS = {"startswith", "endswith", "split", "rsplit", "partition", "rpartition", "find", "index", "count"}


def _sources() -> Iterator[tuple[Path, str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        yield path, text, ast.parse(text, str(path))


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _reason(lines: list[str], fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The `# long:` reason given for `fn`, if any (lines are 0-based, linenos 1-based)."""
    top = min([fn.lineno, *(d.lineno for d in fn.decorator_list)]) - 1
    above = []
    i = top - 1
    while i >= 0 and lines[i].lstrip().startswith("#"):
        above.append(lines[i])
        i -= 1
    first_statement = fn.body[0].lineno - 1
    head = lines[fn.lineno - 1 : first_statement + 1]
    for line in [*reversed(above), *head]:
        m = _LONG.search(line)
        if m:
            # a reason continued on the following comment lines counts in full
            rest = [ln.lstrip()[1:] for ln in above[: above.index(line)]] if line in above else []
            return " ".join([m.group("reason"), *reversed(rest)]).strip()
    return None


def long_functions() -> list[str]:
    """Every function over MAX_LINES lines without a reason, as 'path:line name (N lines)'."""
    offenders = []
    for path, text, tree in _sources():
        lines = text.splitlines()
        for fn in _functions(tree):
            length = (fn.end_lineno or fn.lineno) - fn.lineno + 1
            if length <= MAX_LINES:
                continue
            reason = _reason(lines, fn)
            if reason is None or len(reason.split()) < MIN_REASON_WORDS:
                where = path.relative_to(ROOT)
                offenders.append(f"{where}:{fn.lineno} {fn.name} ({length} lines)")
    return offenders


def test_no_function_longer_than_60_lines_without_a_reason() -> None:
    offenders = long_functions()
    print("\n".join(offenders))
    assert not offenders, (
        f"functions over {MAX_LINES} lines: split them into named steps, or say why above the def with "
        f"'# long: <reason>':\n" + "\n".join(offenders)
    )


def test_the_length_check_finds_a_long_function_and_reads_reasons() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES))
    plain = f"def f() -> None:\n{body}"
    tree = ast.parse(plain)
    (fn,) = _functions(tree)
    assert _reason(plain.splitlines(), fn) is None and (fn.end_lineno or 0) - fn.lineno + 1 > MAX_LINES
    marked = f"# long: one flat table of sixty values, read best in one place\n@decorator\n{plain}"
    (fn,) = _functions(ast.parse(marked))
    assert _reason(marked.splitlines(), fn) == "one flat table of sixty values, read best in one place"
    inside = f"def f() -> None:  # long: a reason given on the def line itself\n{body}"
    (fn,) = _functions(ast.parse(inside))
    assert _reason(inside.splitlines(), fn) == "a reason given on the def line itself"


def test_complexity_limit_is_enforced_by_ruff() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "C901" in config["select"]
    assert 0 < config["mccabe"]["max-complexity"] <= 15


def _is_text_of(node: ast.AST, name: str) -> bool:
    """`str(name)`, or `name.args` / `name.message` / `name.msg`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
        arg = node.args[0]
        return isinstance(arg, ast.Name) and arg.id == name
    return (
        isinstance(node, ast.Attribute)
        and node.attr in ("args", "message", "msg")
        and isinstance(node.value, ast.Name)
        and node.value.id == name
    )


def _message_tests(tree: ast.Module) -> Iterator[int]:
    """Lines where an exception caught `as NAME` has its text compared, searched or split."""
    for handler in ast.walk(tree):
        if not isinstance(handler, ast.ExceptHandler) or not handler.name:
            continue
        name = handler.name
        for node in (n for stmt in handler.body for n in ast.walk(stmt)):
            if isinstance(node, ast.Compare) and any(_is_text_of(x, name) for x in (node.left, *node.comparators)):
                yield node.lineno
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _TEXT_TESTS
                and _is_text_of(node.func.value, name)
                and not _only_formats(handler, node)
            ):
                yield node.lineno


def _only_formats(handler: ast.ExceptHandler, call: ast.Call) -> bool:
    """`str(exc).splitlines()[0]` and the like inside the message raised or returned: formatting, not deciding."""
    for stmt in handler.body:
        if isinstance(stmt, ast.Raise | ast.Return | ast.Expr | ast.Assign) and any(n is call for n in ast.walk(stmt)):
            return not any(
                isinstance(n, ast.If | ast.IfExp | ast.Compare | ast.BoolOp) and any(m is call for m in ast.walk(n))
                for n in ast.walk(stmt)
            )
    return False


def test_no_decision_on_an_exception_message() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}" for path, _, tree in _sources() for line in _message_tests(tree)]
    assert not offenders, "decisions on an exception's text (key them on its type or a field):\n" + "\n".join(offenders)


def test_the_message_check_finds_a_decision_on_text() -> None:
    code = (
        "try:\n    f()\nexcept ValueError as exc:\n"
        "    if str(exc).startswith('not valid'):\n        g()\n"
        "    if 'malformed' in str(exc):\n        g()\n"
        "    raise OtherError(str(exc).splitlines()[0]) from None\n"
    )
    assert list(_message_tests(ast.parse(code))) == [4, 6]
