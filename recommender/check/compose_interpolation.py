"""Compose's variable interpolation (pure): `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:+alt}`, `$VAR`,
`$$`, and the `.env` file it reads them from (docs.docker.com, Compose's interpolation and env file syntax)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def compose_interpolate(node: Any, env: Mapping[str, str], missing: list[str]) -> Any:
    """Compose's interpolation of every string: `${X}`, `${X:-d}`, `${X-d}`, `${X:+a}`, `${X:?e}` (defaults may
    nest: `${A:-${B:-d}}`), `$X`; `$$` is a `$`."""
    if isinstance(node, dict):
        return {k: compose_interpolate(v, env, missing) for k, v in node.items()}
    if isinstance(node, list):
        return [compose_interpolate(v, env, missing) for v in node]
    if not isinstance(node, str) or "$" not in node:
        return node
    return _compose_text(node, env, missing)


_COMPOSE_NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _compose_text(text: str, env: Mapping[str, str], missing: list[str], depth: int = 0) -> str:
    if depth > 8:  # defaults nested deeper than any compose file writes them: untrusted text, not recursed into
        missing.append(text[:40])
        return text
    out, i = [], 0
    while i < len(text):
        if text.startswith("$$", i):
            out.append("$$")  # kept for the container: `$$` is a literal `$` there
            i += 2
        elif text.startswith("${", i):
            braces, j = 0, i + 1
            while j < len(text) and not (text[j] == "}" and braces == 1):
                braces += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            out.append(_compose_variable(text[i + 2 : j], env, missing, depth) if j < len(text) else text[i:])
            i = j + 1
        elif _COMPOSE_NAME.match(text, i):
            m = _COMPOSE_NAME.match(text, i)
            assert m is not None
            out.append(_compose_variable(m.group(1), env, missing, depth, braced=False))
            i = m.end()
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _compose_variable(body: str, env: Mapping[str, str], missing: list[str], depth: int, *, braced: bool = True) -> str:
    m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-+?])(.*))?", body, re.S)
    if not m:
        return "${" + body + "}"
    name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
    value = env.get(name)
    unset = value is None or (op.startswith(":") and value == "")
    if op in (":-", "-"):
        return _compose_text(arg, env, missing, depth + 1) if unset else str(value)
    if op in (":+", "+"):
        return "" if unset else _compose_text(arg, env, missing, depth + 1)
    if value is None:
        missing.append("${" + name + "}" if braced else "$" + name)
        return "${" + name + "}"
    return value


def dotenv_values(text: str) -> dict[str, str]:
    """A compose `.env` file: KEY=VALUE lines, `#` comments, optional quotes; `${OTHER}` in an unquoted or
    double-quoted value is interpolated from the lines above, as Compose does (single quotes keep it literal).
    An inline comment ends an unquoted value where ` #` starts it, and follows a quoted one (docs.docker.com,
    Compose's env file syntax: `VAR=VAL # comment` is `VAL`, `VAR=VAL# not a comment` keeps the `#`)."""
    env: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$", line)
        if m and not line.lstrip().startswith("#"):
            value = m.group(2)
            quote = value[0] if value[:1] in ("'", '"') and value.find(value[0], 1) > 0 else ""
            value = value[1 : value.find(quote, 1)] if quote else re.split(r"\s#", value, maxsplit=1)[0].rstrip()
            env[m.group(1)] = value if quote == "'" else str(compose_interpolate(value, env, []))
    return env
