"""A Python program that starts vLLM's server (a Modal app, a launcher script): the command it runs and the GPUs its
Modal decorator asks for (pure).

The file is read with Python's own parser and never run. Assignments of literals are followed in the order they are
written, at module level and inside functions and classes: strings, numbers, lists, f-strings, `str()`, `int()`,
`" ".join(...)`, `+`, `+=`, `.append` / `.extend`, conditional expressions and `if` statements whose test is known,
and `os.environ.get("NAME", "default")` / `os.getenv` (the default, as a shell reads `${NAME:-default}`). A value that
cannot be known that way stays a `$NAME` the command line reports as unresolved.

A server is a `subprocess.Popen / run / call / check_call / check_output` or `os.system` whose command runs vLLM
(`vllm serve ...`, `python -m vllm.entrypoints.openai.api_server ...`); the shell line is then read by the same
reader as any script. Its GPUs are the `gpu=` of the Modal `@app.function` / `@app.cls` around it (Modal's guide,
https://modal.com/docs/guide/gpu: "GPU_TYPE" or "GPU_TYPE:COUNT", case-insensitive, `H100!` / `B200+` pin or widen
the type, a list is a fallback chain whose first entry is preferred; the deprecated `modal.gpu.A100(count=2,
size="80GB")` form, where A100 without a size is the 40GB card, https://modal.com/docs/reference/modal.gpu). The vLLM
release is the one the image installs (`.pip_install("vllm==X")` / `.uv_pip_install(...)`) or the tag of a
`vllm/vllm-openai` image it starts from.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from recommender.check.found import Found

_MAX_ITEMS = 10_000  # a list or string past this is not a command line: left unknown
_MAX_DEPTH = 60
_RUNNERS = {"Popen", "run", "call", "check_call", "check_output", "system"}
_PIN = re.compile(r"^vllm(?:\[[^\]]*\])?==\s*([0-9][0-9A-Za-z.+-]*)$")
_VLLM_IMAGE_TAG = re.compile(r"\bvllm/vllm-openai(?:-rocm)?:(v?[0-9][\w.+-]*)")


@dataclass(frozen=True, slots=True)
class Unknown:
    """A value the file does not fix (a parameter, a call result): it reads as `$name` in a command line."""

    name: str


Value = str | int | float | bool | None | list["Value"] | Unknown


@dataclass(frozen=True, slots=True)
class _Scope:
    """The Modal GPU request around the code being read ('H100:2', or None outside any decorated function)."""

    gpu: Value = None
    name: str = ""


def read_python_app(text: str, source: str, read_command: Callable[[str, str], list[Found]]) -> list[Found] | None:
    """The vLLM servers a Python program starts (None: it is not valid Python or starts none).
    `read_command(shell_line, source)` reads one command line as a script's would be."""
    try:
        tree = ast.parse(text, filename=source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reader = _Reader()
    try:
        reader.block(tree.body, _Scope())
    except RecursionError:
        return None
    release = _release(reader.pins, reader.image_tags)
    out: list[Found] = []
    for line, scope in reader.commands:
        for found in read_command(line, source):
            gpu, count = modal_gpu(scope.gpu)
            out.append(
                replace(
                    found,
                    resource=f"modal/{scope.name}" if scope.gpu is not None else found.resource,
                    gpu_product=gpu or found.gpu_product,
                    gpus_per_pod=count if count is not None else found.gpus_per_pod,
                    image_tag=release or found.image_tag,
                )
            )
    return out or None


def modal_gpu(spec: Value) -> tuple[str | None, int | None]:
    """(GPU name for the catalog, count) of a Modal `gpu=` value."""
    if isinstance(spec, list):
        spec = next((s for s in spec if isinstance(s, str)), None)  # a fallback chain: the first is preferred
    if not isinstance(spec, str) or not spec.strip():
        return None, None
    name, _, count = spec.strip().partition(":")
    name = name.strip().rstrip("!+").upper()
    if name == "A100":
        name = "A100-40GB"  # modal.gpu.A100: size "Defaults to 40GB"
    n = int(count) if re.fullmatch(r"[0-9]{1,3}", count.strip()) else 1  # ASCII digits: str.isdigit takes "²"
    return (name or None), n


def _release(pins: Sequence[str], tags: Sequence[str]) -> str | None:
    found = set(pins) or set(tags)
    return found.pop() if len(found) == 1 else None


class _Reader:
    def __init__(self) -> None:
        self.env: dict[str, Value] = {}
        self.commands: list[tuple[str, _Scope]] = []
        self.pins: list[str] = []
        self.image_tags: list[str] = []

    # statements -------------------------------------------------------------------------------------------------
    def block(self, body: Sequence[ast.stmt], scope: _Scope) -> None:
        for stmt in body:
            self.statement(stmt, scope)

    def statement(self, stmt: ast.stmt, scope: _Scope) -> None:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.block(stmt.body, self._decorated(stmt, scope))
        elif isinstance(stmt, ast.Assign):
            value = self.value(stmt.value, scope)
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    self.env[target.id] = value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            self.env[stmt.target.id] = self.value(stmt.value, scope)
        elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and isinstance(stmt.op, ast.Add):
            before = self.env.get(stmt.target.id, Unknown(stmt.target.id))
            self.env[stmt.target.id] = _add(before, self.value(stmt.value, scope))
        elif isinstance(stmt, ast.If):
            test = self.value(stmt.test, scope)
            if isinstance(test, Unknown):
                self.block(stmt.body, scope)  # not known: the first branch, as written
            else:
                self.block(stmt.body if test else stmt.orelse, scope)
        elif isinstance(stmt, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            self.block(stmt.body, scope)
        elif isinstance(stmt, ast.Try):
            self.block(stmt.body, scope)
        elif isinstance(stmt, (ast.Expr, ast.Return)) and stmt.value is not None:
            self.value(stmt.value, scope)

    def _decorated(self, stmt: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, scope: _Scope) -> _Scope:
        for deco in stmt.decorator_list:
            if (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, ast.Attribute)
                and deco.func.attr in ("function", "cls")
            ):
                for kw in deco.keywords:
                    if kw.arg == "gpu":
                        return _Scope(self.value(kw.value, scope), stmt.name)
        return replace(scope, name=scope.name or stmt.name) if scope.gpu is not None else _Scope(None, stmt.name)

    # expressions ------------------------------------------------------------------------------------------------
    def value(self, node: ast.expr, scope: _Scope, depth: int = 0) -> Value:
        if depth > _MAX_DEPTH:
            return Unknown("expression")
        d = depth + 1
        if isinstance(node, ast.Constant):
            v = node.value
            return v if isinstance(v, (str, int, float, bool)) or v is None else Unknown("constant")
        if isinstance(node, ast.Name):
            return self.env.get(node.id, Unknown(node.id))
        if isinstance(node, (ast.JoinedStr, ast.FormattedValue)):
            return self._fstring(node, scope, d)
        if isinstance(node, (ast.List, ast.Tuple)):
            return self._sequence(node.elts, scope, d)
        if isinstance(node, ast.BinOp):
            return _binary(node.op, self.value(node.left, scope, d), self.value(node.right, scope, d))
        if isinstance(node, (ast.UnaryOp, ast.IfExp)):
            return self._choice(node, scope, d)
        if isinstance(node, ast.Call):
            return self.call(node, scope, d)
        if isinstance(node, ast.Await):
            return self.value(node.value, scope, d)
        for child in ast.iter_child_nodes(node):  # `subprocess.run(cmd).returncode`: the call inside still runs
            if isinstance(child, ast.expr):
                self.value(child, scope, d)
        return Unknown(_name_of(node) or "expression")

    def _fstring(self, node: ast.JoinedStr | ast.FormattedValue, scope: _Scope, depth: int) -> Value:
        """An f-string: a part not known reads as ${NAME}, unresolved in a command line."""
        if isinstance(node, ast.FormattedValue):
            inner = self.value(node.value, scope, depth)
            return inner if isinstance(inner, Unknown) else _text(inner)
        return _bounded("".join(_placeholder(self.value(p, scope, depth)) for p in node.values))

    def _choice(self, node: ast.UnaryOp | ast.IfExp, scope: _Scope, depth: int) -> Value:
        """`not X` and `A if X else B`, when X is known."""
        test = self.value(node.operand if isinstance(node, ast.UnaryOp) else node.test, scope, depth)
        if isinstance(test, Unknown):
            return Unknown(test.name)
        if isinstance(node, ast.UnaryOp):
            return not test if isinstance(node.op, ast.Not) else Unknown("expression")
        return self.value(node.body if test else node.orelse, scope, depth)

    def _sequence(self, elts: list[ast.expr], scope: _Scope, depth: int) -> Value:
        items: list[Value] = []
        for elt in elts:
            if isinstance(elt, ast.Starred):
                star = self.value(elt.value, scope, depth)
                items += star if isinstance(star, list) else [star]
            else:
                items.append(self.value(elt, scope, depth))
        return items if len(items) <= _MAX_ITEMS else Unknown("list")

    def call(self, node: ast.Call, scope: _Scope, depth: int) -> Value:
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
            self.value(func.value, scope, depth)  # a chain: modal.Image.from_registry(...).pip_install(...)
        args = [self.value(a, scope, depth) for a in node.args if not isinstance(a, ast.Starred)]
        kwargs = {kw.arg: self.value(kw.value, scope, depth) for kw in node.keywords if kw.arg}
        attr = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        owner = _name_of(func.value) if isinstance(func, ast.Attribute) else ""
        self._image_facts(attr, args)
        if attr == "dumps" and owner == "json":
            return _json_text(node)
        if attr in _RUNNERS and owner in ("subprocess", "os", "sp", "") and args:
            line = _shell_line(args[0])
            if line is not None and "vllm" in line:
                self.commands.append((line, scope))
            return Unknown("process")
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and attr in ("append", "extend"):
            self._grow(func.value.id, attr, args)
            return None
        if attr == "join" and isinstance(func, ast.Attribute) and len(args) == 1:
            sep = self.value(func.value, scope, depth)
            if isinstance(sep, str) and isinstance(args[0], list):
                return _bounded(sep.join(_placeholder(a) for a in args[0]))
            return Unknown("joined")
        return _builtin(attr, owner, args, kwargs)

    def _grow(self, name: str, method: str, args: list[Value]) -> None:
        """`cmd.append(x)` / `cmd.extend([...])` on a list the file built."""
        current = self.env.get(name)
        if isinstance(current, list) and args:
            added = args[0] if method == "extend" else [args[0]]
            self.env[name] = _add(current, added if isinstance(added, list) else Unknown("items"))

    def _image_facts(self, attr: str, args: list[Value]) -> None:
        if attr in ("pip_install", "uv_pip_install"):
            for a in args:
                for item in a if isinstance(a, list) else [a]:
                    m = _PIN.match(item.strip()) if isinstance(item, str) else None
                    if m:
                        self.pins.append(m.group(1))
        elif attr == "from_registry" and args and isinstance(args[0], str):
            m = _VLLM_IMAGE_TAG.search(args[0])
            if m:
                self.image_tags.append(m.group(1))


def _builtin(attr: str, owner: str, args: list[Value], kwargs: dict[str, Value]) -> Value:
    """str(), int(), os.environ.get / os.getenv (the default) and the deprecated modal.gpu.X(count=, size=)."""
    if attr == "str" and len(args) == 1:
        return args[0] if isinstance(args[0], Unknown) else _text(args[0])
    if attr == "int" and len(args) == 1 and isinstance(args[0], (str, int, float)) and not isinstance(args[0], bool):
        try:
            return int(args[0])
        except ValueError:
            return Unknown("int")
    if (attr == "get" and owner.endswith("environ")) or (attr == "getenv" and owner == "os"):
        name = args[0] if args and isinstance(args[0], str) else "env"
        return args[1] if len(args) > 1 else kwargs.get("default", Unknown(name))
    if owner.endswith("gpu") and attr[:1].isupper():  # modal.gpu.H100(count=2) / modal.gpu.A100(size="80GB")
        size, count = kwargs.get("size"), kwargs.get("count", 1)
        name = f"{attr}-{size}" if isinstance(size, str) else attr
        return f"{name}:{count}" if isinstance(count, int) else name
    return Unknown(attr or "call")


def _binary(op: ast.operator, left: Value, right: Value) -> Value:
    if isinstance(op, ast.Add):
        return _add(left, right)
    if isinstance(op, ast.Mult) and isinstance(left, (int, float)) and isinstance(right, (int, float)):
        product = left * right
        return product if not isinstance(product, bool) and abs(product) < 1e18 else Unknown("number")
    return Unknown("expression")


def _shell_line(command: Value) -> str | None:
    """The command as a shell line: a string as written, a list quoted word by word (unknown words as $NAME)."""
    if isinstance(command, str):
        return command
    if isinstance(command, list):
        return " ".join(f"${_var(w.name)}" if isinstance(w, Unknown) else shlex.quote(_text(w)) for w in command)
    return None


def _placeholder(v: Value) -> str:
    """A value as text, one not known as ${NAME} (unresolved when the text is a command line)."""
    return "${" + _var(v.name) + "}" if isinstance(v, Unknown) else _text(v)


def _var(name: str) -> str:
    return re.sub(r"\W", "_", name) or "VALUE"


def _add(left: Value, right: Value) -> Value:
    if isinstance(left, list) and isinstance(right, list):
        return left + right if len(left) + len(right) <= _MAX_ITEMS else Unknown("list")
    if isinstance(left, str) and isinstance(right, str):
        return _bounded(left + right)
    if _number(left) and _number(right):
        return left + right  # type: ignore[operator]
    if isinstance(left, list):
        return [*left, right] if isinstance(right, Unknown) else Unknown("list")
    return left if isinstance(left, Unknown) else right if isinstance(right, Unknown) else Unknown("expression")


def _number(v: Value) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bounded(s: str) -> Value:
    return s if len(s) <= 100 * _MAX_ITEMS else Unknown("text")


def _text(v: Value) -> str:
    """A value as Python's str() writes it (the text a command line built from it holds)."""
    return str(v)


def _json_text(node: ast.Call) -> Value:
    """`json.dumps({"image": 0})` of a literal (and literal keywords: indent=, separators=, sort_keys=): the text
    Python's json.dumps gives it (`{"image": 0}`), as the argv the program builds holds it; else unknown."""
    if len(node.args) != 1 or any(kw.arg is None for kw in node.keywords):
        return Unknown("dumps")
    try:
        data = ast.literal_eval(node.args[0])
        options = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
        if not all(_json_option_ok(k, v) for k, v in options.items()):
            return Unknown("dumps")  # an option that is not json.dumps' own, or one that would blow the text up
        return _bounded(json.dumps(data, **options))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        return Unknown("dumps")


def _json_option_ok(key: str, value: object) -> bool:
    """json.dumps' formatting options, within bounds a command line can hold (an untrusted file could ask for
    `indent=10**9`)."""
    if key in ("sort_keys", "ensure_ascii"):
        return isinstance(value, bool)
    if key == "indent":
        return (
            value is None
            or (isinstance(value, int) and 0 <= value <= 16)
            or (isinstance(value, str) and len(value) <= 16)
        )
    if key == "separators":
        return isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, str) and len(v) <= 8 for v in value)
    return False


def _name_of(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
