"""Hostile values through every plan field and every render option: rejected at validation, or (names, model
ids, extra arguments, program paths) rendered inert. Inert is checked the way each target reads its file:
serve.sh run by sh with a fake `vllm` that records its argv; the unit parsed by systemd's quoting rules
(systemd.syntax(7), systemd.service(5) "Command lines") and `systemd-analyze verify`; manifests, values and
compose files parsed as YAML and their container words expanded as Kubernetes ($(VAR)) and compose (${VAR}) do.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from recommender.documents import plan_from_data
from recommender.errors import InputError
from recommender.render.engine import expand, render
from recommender.render.options import RenderOptions

from .conftest import ROOT

PLAN = ROOT / "examples" / "qwen2.5-7b-on-rtx4090" / "plan.yaml"

# Printable text that a shell, systemd, YAML, Kubernetes or compose would otherwise act on ({m}: a marker path).
PRINTABLE = [
    "$(touch {m})",
    "`touch {m}`",
    "x; touch {m} && y || z | w & v",
    "'single' \"double\" \\ trailing\\",
    "50% %n %% %i $HOME ${HOME} $$ $(HF_TOKEN)",
    "key: value # not a comment",
    "- item",
    "{a: b} [c, d] *alias &anchor !tag",
]
LINE_BREAKING = [
    "line\nExecStartPre=/bin/sh -c 'touch {m}'",
    "a\\\nb",
    "a\u2028b: c",
    "a\x85- d",
    "tab\there",
    "nul\x00",
]
C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "s": " "}


# ----- how each target reads its file ------------------------------------------------------------------------


def _unescape(text: str, i: int) -> tuple[int, str]:
    """One C escape of systemd.syntax(7) starting after the backslash at text[i - 1]."""
    c = text[i]
    if c in C_ESCAPES:
        return i + 1, C_ESCAPES[c]
    if c in "\\\"'":
        return i + 1, c
    width = {"x": 2, "u": 4, "U": 8}.get(c)
    if width:
        return i + 1 + width, chr(int(text[i + 1 : i + 1 + width], 16))
    assert c in "01234567", f"unknown escape \\{c}"
    return i + 3, chr(int(text[i : i + 3], 8))


def systemd_words(value: str) -> list[str]:
    """Split and unquote a command line as systemd does (quotes wrap whole items; C escapes)."""
    words: list[str] = []
    i = 0
    while True:
        while i < len(value) and value[i] in " \t":
            i += 1
        if i == len(value):
            return words
        quote = value[i] if value[i] in "\"'" else None
        i += 1 if quote else 0
        word: list[str] = []
        while i < len(value) and (quote or value[i] not in " \t"):
            if value[i] == quote:
                i += 1
                assert i == len(value) or value[i] in " \t", "a closing quote must end the item"
                quote = None
                break
            if value[i] == "\\":
                i, ch = _unescape(value, i + 1)
                word.append(ch)
                continue
            word.append(value[i])
            i += 1
        assert quote is None, "unterminated quote"
        words.append("".join(word))


def systemd_expand(word: str, *, env: bool) -> str:
    """Specifiers (only %% may appear) and, for arguments, environment variables (only $$ may appear)."""
    out: list[str] = []
    i = 0
    while i < len(word):
        ch = word[i]
        if ch == "%" or (env and ch == "$"):
            assert word[i + 1 : i + 2] == ch, f"{ch}{word[i + 1 : i + 2]} would be expanded by systemd"
            i += 1
        out.append(ch)
        i += 1
    return "".join(out)


def exec_start_argv(unit: str) -> list[str]:
    (line,) = [x for x in unit.split("\n") if x.startswith("ExecStart=")]
    words = systemd_words(line.removeprefix("ExecStart="))
    return [systemd_expand(words[0], env=False), *(systemd_expand(w, env=True) for w in words[1:])]


def directives(unit: str) -> list[tuple[str, str]]:
    """(section, key) of every setting, reading lines as systemd does (split on \\n only)."""
    section = ""
    out = []
    for line in unit.split("\n"):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        assert not stripped.endswith("\\"), f"a line continuation: {line!r}"
        if stripped.startswith("["):
            section = stripped
        else:
            out.append((section, stripped.split("=", 1)[0]))
    return out


def k8s_expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' $(VAR) expansion of container command, args and env values (third_party/forked/golang/expansion)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "$" and i + 1 < len(text):
            nxt = text[i + 1]
            end = text.find(")", i + 2) if nxt == "(" else -1
            if nxt == "$":
                out.append("$")
            elif end != -1:
                name = text[i + 2 : end]
                out.append(env.get(name, f"$({name})"))
                i = end + 1
                continue
            else:
                out.append("$" + nxt)
            i += 2
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def compose_interpolate(text: str) -> str:
    """docker compose interpolation: $$ is a literal $, any other $ would substitute a variable."""
    return systemd_expand(text.replace("%", "%%"), env=True)


def shape(node: Any) -> Any:
    """The keys of a YAML document, values replaced by their types (a list by the shapes of its items)."""
    if isinstance(node, dict):
        return {k: shape(v) for k, v in node.items()}
    if isinstance(node, list):
        return sorted({repr(shape(v)) for v in node})
    return type(node).__name__


# ----- fixtures ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plan_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(PLAN.read_text())
    return data


@pytest.fixture
def fake_vllm(tmp_path: Path) -> Path:
    """A `vllm` that records its argv (NUL-separated) and does nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "vllm"
    fake.write_text('#!/bin/sh\nprintf \'%s\\0\' "$@" > "$ARGV_FILE"\n')
    fake.chmod(0o755)
    return fake


def _with_model(data: dict[str, Any], model: str, extra: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out["model"] = out["prediction"]["model"] = model
    out["command"] = ["vllm", "serve", model, *out["command"][3:], "--served-model-name", extra]
    return out


def _render(data: dict[str, Any], **opts: Any) -> dict[str, str]:
    files, _ = render(plan_from_data(data, "plan.yaml"), expand("all"), RenderOptions(**opts), tool_version="t")
    return files


def _run_script(script: str, fake: Path, tmp_path: Path) -> list[str]:
    path = tmp_path / "serve.sh"
    path.write_text(script)
    argv_file = tmp_path / "argv"
    env = {"PATH": f"{fake.parent}:/usr/bin:/bin", "ARGV_FILE": str(argv_file), "HF_TOKEN": "secret"}
    subprocess.run(["sh", str(path)], env=env, cwd=tmp_path, check=True, timeout=20)
    return argv_file.read_bytes().decode().split("\0")[:-1]


def _assert_inert(files: dict[str, str], baseline: dict[str, str], data: dict[str, Any], marker: Path) -> None:
    """Same files, same keys and directives as the benign rendering; every word arrives exactly."""
    assert sorted(files) == sorted(baseline)
    words = [*data["command"][2:], "--host", "0.0.0.0"]
    for name, text in files.items():
        if name.endswith(".service"):
            assert directives(text) == directives(baseline[name])
            assert exec_start_argv(text)[1:] == ["serve", *words, "--port", "8000"]
        elif name.endswith(".yaml"):
            docs = list(yaml.safe_load_all(text))
            assert [shape(d) for d in docs] == [shape(d) for d in yaml.safe_load_all(baseline[name])], name
    deployment = next(d for d in yaml.safe_load_all(files["kubernetes.yaml"]) if d["kind"] == "Deployment")
    args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert [k8s_expand(a, {"HF_TOKEN": "secret", "HOME": "/root"}) for a in args] == [*words, "--port", "8000"]
    spec = yaml.safe_load(files["values.yaml"])["servingEngineSpec"]["modelSpec"][0]
    assert k8s_expand(spec["modelURL"], {"HF_TOKEN": "secret"}) == data["model"]
    assert [k8s_expand(a, {}) for a in spec["vllmConfig"]["extraArgs"]][-2:] == data["command"][-2:]
    service = next(iter(yaml.safe_load(files["compose.yaml"])["services"].values()))
    assert [compose_interpolate(a) for a in service["command"]] == [*words, "--port", "8000"]
    assert not marker.exists()


# ----- plan fields -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("evil", PRINTABLE)
def test_free_text_in_the_plan_stays_inert(
    plan_data: dict[str, Any], evil: str, fake_vllm: Path, tmp_path: Path
) -> None:
    """A model id and an extra argument (the plan's free-text words) holding shell, systemd and YAML syntax."""
    marker = tmp_path / "pwned"
    evil = evil.replace("{m}", str(marker))
    baseline = _render(_with_model(plan_data, "org/model", "name"), name="vllm-x")
    data = _with_model(plan_data, f"org/{evil}", evil)
    files = _render(data, name="vllm-x")
    _assert_inert(files, baseline, data, marker)
    argv = _run_script(files["serve.sh"], fake_vllm, tmp_path)
    assert argv == ["serve", *data["command"][2:], "--host", "0.0.0.0", "--port", "8000"]
    assert not marker.exists()


def _string_leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _string_leaves(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _string_leaves(v, (*path, i))]
    return [path] if isinstance(node, str) else []


def _yaml_shapes(text: str) -> list[Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when built with it: 10x faster
    return [shape(d) for d in yaml.load_all(text, Loader=loader)]


def test_every_plan_string_field(plan_data: dict[str, Any], tmp_path: Path) -> None:
    """Each string field set to hostile text: refused (with that field named), or accepted and inert."""
    marker = tmp_path / "pwned"
    baseline = _render(plan_data)
    expected = {name: _yaml_shapes(text) for name, text in baseline.items() if name.endswith(".yaml")}
    unit = next(name for name in baseline if name.endswith(".service"))
    accepted = 0
    for path in _string_leaves(plan_data):
        for evil in [*PRINTABLE[:5], *LINE_BREAKING[:3]]:
            data = copy.deepcopy(plan_data)
            node = data
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = evil.replace("{m}", str(marker))
            try:
                files = _render(data)
            except InputError as exc:
                assert "\n" not in str(exc)
                continue
            assert evil in PRINTABLE, f"{path} accepted a line break"
            accepted += 1
            assert directives(files[unit]) == directives(baseline[unit]), path
            for name, shapes in expected.items():
                assert _yaml_shapes(files[name]) == shapes, (path, name)
    assert accepted > 50  # the free-text fields (reasons, labels, names) take printable text
    assert not marker.exists()


# ----- render options ----------------------------------------------------------------------------------------


REJECTED_OPTIONS: dict[str, list[Any]] = {
    "namespace": [*PRINTABLE, *LINE_BREAKING, "default\n"],
    "hf_token_secret": [*PRINTABLE, *LINE_BREAKING],
    "image": [*PRINTABLE, *LINE_BREAKING, "vllm/vllm-openai:v0.9.0", "Upper/case"],
    "image_tag": [*PRINTABLE, *LINE_BREAKING, "-dash"],
    "storage_class": [*PRINTABLE, *LINE_BREAKING],
    "runtime_class": [*PRINTABLE, *LINE_BREAKING],
    "vllm_bin": ["relative/vllm", *(f"/opt/{e}" for e in LINE_BREAKING), '/opt/"q"/vllm', "/opt/a\\b/vllm"],
    "port": [0, -1, 65536, 10**9],
    "replicas": [0, -3, 10_001, 10**7],
    "storage_gib": [0, -1, 10**9],
}


@pytest.mark.parametrize("option", sorted(REJECTED_OPTIONS))
def test_hostile_options_are_rejected(plan_data: dict[str, Any], option: str) -> None:
    for bad in REJECTED_OPTIONS[option]:
        value = bad.replace("{m}", "/tmp/x") if isinstance(bad, str) else bad
        with pytest.raises(InputError) as info:
            _render(plan_data, **{option: value})
        assert "\n" not in str(info.value), (option, value)


def test_port_range_covers_every_replica(plan_data: dict[str, Any]) -> None:
    with pytest.raises(InputError, match="needs ports up to 65537"):
        _render(plan_data, port=65535, replicas=3)
    files, _ = render(plan_from_data(plan_data, "p"), ("k8s",), RenderOptions(port=65535, replicas=3), tool_version="t")
    assert "containerPort: 65535" in files["kubernetes.yaml"]


@pytest.mark.parametrize("evil", [*PRINTABLE, *LINE_BREAKING])
def test_hostile_names_are_normalised(plan_data: dict[str, Any], evil: str) -> None:
    files = _render(plan_data, name="v " + evil.replace("{m}", "/tmp/x"))
    deployment = next(d for d in yaml.safe_load_all(files["kubernetes.yaml"]) if d["kind"] == "Deployment")
    name = deployment["metadata"]["name"]
    assert (name.replace("-", "").isalnum() and name.islower()) or name.replace("-", "").isdigit()
    assert f"{name}.service" in files


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_program_path_with_shell_and_systemd_syntax(plan_data: dict[str, Any], tmp_path: Path) -> None:
    """--vllm-bin is free text (an absolute path): systemd finds exactly that file, and nothing is added."""
    units = []
    for i, text in enumerate(["dollar $HOME $(x)", "percent %n %%", "semi; colon: {a: b} #c", "space  two"]):
        program = tmp_path / f"d{i} {text}" / "vllm"
        program.parent.mkdir()
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
        files = _render(plan_data, vllm_bin=str(program), name="v")
        unit = files["v.service"]
        assert exec_start_argv(unit)[0] == str(program)
        assert directives(unit) == directives(_render(plan_data, name="v")["v.service"])
        units.append(tmp_path / f"u{i}.service")
        units[-1].write_text(unit)
    out = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_hostile_units_verify(plan_data: dict[str, Any], tmp_path: Path) -> None:
    """Every hostile model id and argument above yields a unit systemd accepts, with nothing added."""
    fake = tmp_path / "vllm"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    paths = []
    for i, evil in enumerate(PRINTABLE):
        data = _with_model(plan_data, f"org/{evil}", evil)
        paths.append(tmp_path / f"u{i}.service")
        paths[-1].write_text(_render(data, vllm_bin=str(fake), name="v")["v.service"])
    out = subprocess.run(["systemd-analyze", "verify", *map(str, paths)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_reference_readers_catch_unescaped_text() -> None:
    """The readers above fail on exactly the mistakes escaping prevents (so the tests can fail)."""
    assert systemd_words('"a b" c "d\\"e" "\\x41\\u00e9"') == ["a b", "c", 'd"e', "Aé"]
    with pytest.raises(AssertionError):
        systemd_expand("50%n", env=True)
    with pytest.raises(AssertionError):
        systemd_expand("$HOME", env=True)
    assert (
        k8s_expand("--name $(HF_TOKEN) $$(HF_TOKEN) $x $", {"HF_TOKEN": "secret"}) == "--name secret $(HF_TOKEN) $x $"
    )
    with pytest.raises(AssertionError):
        directives("[Service]\nDescription=a \\\nExecStartPre=/bin/evil")
    assert shape({"a": [1, "x"]}) != shape({"a": [1, "x"], "b": 2})


@pytest.mark.parametrize("evil", LINE_BREAKING[:5])
def test_escaping_holds_without_validation(
    plan_data: dict[str, Any], evil: str, fake_vllm: Path, tmp_path: Path
) -> None:
    """Escaping does not rely on validation: line breaks forced into a validated plan (model, arguments, the
    vLLM version that reaches comments, labels, annotations and the image tag) still add nothing."""
    marker = tmp_path / "pwned"
    evil = evil.replace("{m}", str(marker))
    plan = plan_from_data(_with_model(plan_data, "org/model", "name"), "plan.yaml")
    baseline, _ = render(plan, expand("all"), RenderOptions(name="v"), tool_version="t")
    forced = dataclasses.replace(
        plan,
        best=dataclasses.replace(
            plan.best, model=evil, command=(*plan.best.command[:2], evil, *plan.best.command[3:-1], evil)
        ),
        prediction=dataclasses.replace(plan.prediction, model=evil),
        inputs=dataclasses.replace(plan.inputs, vllm_version=f"0.33.0{evil}"),
    )
    files, _ = render(forced, expand("all"), RenderOptions(name="v"), tool_version=f"t{evil}")
    words = list(forced.best.command[2:])
    head, _ = files["serve.sh"].split("\nexec ", 1)
    assert all(line.startswith("#") for line in head.split("\n")[1:])
    assert _run_script(files["serve.sh"], fake_vllm, tmp_path) == [
        "serve",
        *words,
        "--host",
        "0.0.0.0",
        "--port",
        "8000",
    ]
    assert directives(files["v.service"]) == directives(baseline["v.service"])
    assert exec_start_argv(files["v.service"])[2:] == [*words, "--host", "0.0.0.0", "--port", "8000"]
    for name in ("kubernetes.yaml", "values.yaml", "compose.yaml"):
        assert _yaml_shapes(files[name]) == _yaml_shapes(baseline[name]), name
    deployment = next(d for d in yaml.safe_load_all(files["kubernetes.yaml"]) if d["kind"] == "Deployment")
    assert deployment["metadata"]["annotations"]["vllm-plan.io/vllm-version"] == f"0.33.0{evil}"
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"][0] == evil.replace("$", "$$")
    assert not marker.exists()


def test_escapers_round_trip() -> None:
    """Each escaper read back by its target's rules gives exactly the input, for every kind of character."""
    from recommender.render import escape

    samples = [*PRINTABLE, *LINE_BREAKING, "\x7f\x9f\ufeff\U000e0001", "emoji 🙂 é", "", " lead", "\\"]
    for text in samples:
        assert yaml.safe_load(escape.yaml_str(text)) == text
        # YAML 1.1 parsers (go-yaml v2 in kubectl) fold U+0085/U+2028/U+2029 inside quotes; PyYAML keeps some
        assert not re.search("[\x85\u2028\u2029\ufeff\x7f]", escape.yaml_str(text))
        assert compose_interpolate(yaml.safe_load(escape.yaml_arg(text))) == text
        assert [systemd_expand(w, env=True) for w in systemd_words(escape.systemd_word(text))] == [text]
        for line in (escape.comment(text), escape.systemd_text(text)):
            assert (len(f"# {line}".splitlines()) == 1 and not line.endswith("\\")) or line.endswith("\\\\")
            assert yaml.safe_load(f"# {line}\nk: v") == {"k": "v"}
