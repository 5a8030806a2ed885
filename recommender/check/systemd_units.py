"""Find vLLM servers in systemd units: ExecStart with Environment= and `$X`/`${X}` expansion as
systemd.service(5) does them, a `docker run` there read as a script's is (pure: text in, Found out)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace

from recommender.check import shell
from recommender.check.commands import command_hits, comment_annotations, found_of, numbered, read_command
from recommender.check.found import Found
from recommender.check.manifest_values import split_words
from recommender.check.shell_exec import runs_in_a_shell

_SHELLS = ("sh", "bash", "dash", "ash", "zsh")


def read_written_unit(text: str, source: str, unit: str, files: Mapping[str, str]) -> list[Found]:
    """A unit file a script writes (a here-document to `unit`) and starts with systemctl: its ExecStart=, with an
    EnvironmentFile= the script wrote too read from that text; resource `ExecStart (NAME)`."""
    name = unit.rsplit("/", 1)[-1]
    return [replace(f, resource=f"ExecStart ({name})") for f in read_systemd(text, source, files)]


def read_systemd(
    text: str, source: str, env_files: Mapping[str, str] | None = None, origin: shell.Origin | None = None
) -> list[Found]:
    """ExecStart= of a systemd unit, with Environment= substituted as systemd does (`${X}`, `$X`, `$$`, `%%`), and
    EnvironmentFile= when `env_files` (path -> text) holds it, its values overriding Environment='s
    (systemd.exec(5)); an EnvironmentFile= not readable here leaves what it may set unknown. `origin`: the unit
    file, whose repository's shell script an ExecStart= may run (_repository_script)."""
    joined = re.sub(r"\\\r?\n", " ", text)
    env: dict[str, str] = {}
    unresolved: list[str] = []
    for m in re.finditer(r"^Environment=(.*)$", joined, re.M):
        for item in split_words(m.group(1)):
            k, eq, v = item.partition("=")
            if eq:
                env[k] = v
    for m in re.finditer(r"^EnvironmentFile=(.*)$", joined, re.M):
        path = m.group(1).strip().removeprefix("-")  # `-`: a missing file is not an error
        if env_files is not None and path in env_files:
            env |= _environment_file(env_files[path])
        else:
            unresolved.append("EnvironmentFile")
    problems = tuple(_systemd_device_problems(joined))
    out = []
    for m in re.finditer(r"^ExecStart=(.*)$", joined, re.M):
        value = m.group(1).lstrip("-@:+!").replace("%%", "%")
        words: list[str] = []
        missing: list[str] = []
        for word in split_words(value.replace("$$", "\x00")):
            words += _systemd_expand(word, env, missing)
        words = [w.replace("\x00", "$") for w in words]
        hits = command_hits(words, env, tuple(missing))
        # the script is the program, or a shell's first operand (`/bin/bash %h/app/start.sh`, as sh(1) reads it)
        at = 1 if len(words) > 1 and words[0].rsplit("/", 1)[-1] in _SHELLS and not words[1].startswith("-") else 0
        script = _repository_script(words[at], origin) if words and not hits else None
        if script is not None:  # its commands, with the unit's environment and the words after it as $1...
            path, body = script
            inner = replace(origin, path=path) if origin else None
            found = read_command(body, source, env, origin=inner, args=[path, *words[at + 1 :]])
            out += [replace(f, resource="ExecStart", through=(path, *f.through), problems=problems) for f in found]
            continue
        annotations = comment_annotations(text)
        out += [replace(found_of(source, "ExecStart", hit, annotations), problems=problems) for hit in hits]
    return numbered(out)


def _repository_script(program: str, origin: shell.Origin | None) -> tuple[str, str] | None:
    """(path, text) of the shell script of the unit's repository an ExecStart= program is: the longest tail of its
    path that names a file of the repository (`%h/<checkout>/scripts/start.sh` -> scripts/start.sh; the checkout
    and the install paths are the deployment host's); None for a program not so found (/usr/bin/docker)."""
    parts = program.split("/")
    if origin is None or len(parts) < 2:
        return None
    for k in range(1, len(parts)):
        tail = "/".join(p for p in parts[k:] if p not in ("", "."))
        if not tail or ".." in parts[k:]:
            continue
        path = posixpath.join(origin.root, tail)
        body = origin.read(path)
        if body is not None and path != origin.path:
            return (path, body) if runs_in_a_shell(body) else None
    return None


def _environment_file(text: str) -> dict[str, str]:
    """An EnvironmentFile's assignments (systemd.exec(5)): `KEY=VALUE` lines, `#` and `;` comment lines and blank
    lines skipped, a value's enclosing quotes removed, a trailing backslash joining the next line."""
    out: dict[str, str] = {}
    for line in re.sub(r"\\\r?\n", "", text).splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        key, eq, value = line.partition("=")
        value = value.strip()
        if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if eq and key.strip():
            out[key.strip().removeprefix("export ").strip()] = value
    return out


def _systemd_device_problems(unit: str) -> list[str]:
    """Sandboxing that hides the GPUs from the service (systemd.exec(5)): vLLM then finds no CUDA device."""
    out = []
    if re.search(r"^PrivateDevices=(yes|true|on|1)\s*$", unit, re.M | re.I):
        out.append("PrivateDevices=yes hides /dev/nvidia* from the service: CUDA finds no GPU and vLLM will not start")
    policy = re.search(r"^DevicePolicy=(closed|strict)\s*$", unit, re.M)
    if policy and not re.search(r"^DeviceAllow=.*nvidia", unit, re.M):
        out.append(
            f"DevicePolicy={policy.group(1)} without DeviceAllow=/dev/nvidia*: CUDA finds no GPU and vLLM will not start"
        )
    return out


def _systemd_expand(word: str, env: Mapping[str, str], missing: list[str]) -> list[str]:
    """`${X}` keeps one word; a word that is exactly `$X` splits on whitespace (systemd.service(5))."""
    m = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
    if m:
        if m.group(1) not in env:
            missing.append(word)
            return [word]
        return env[m.group(1)].split()

    def sub(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in env:
            missing.append(match.group(0))
            return match.group(0)
        return env[name]

    return [re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", sub, word)]
