"""The `vllm serve` reader against vLLM 0.33's own parser (frozen dumps in tests/data/vllm-args, made with the
oracle venv by the scripts beside them): the flag table has exactly vLLM's options, and every command line in
parse-cases.txt reads as vLLM read it, errors included."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from recommender.catalog import load_flag_table
from recommender.errors import FlagError
from recommender.memory.engine import VllmVersion
from recommender.serve_args import config_args, parse_serve_argv
from recommender.serve_release_errors import choice_errors, not_accepted, strict_errors
from recommender.serve_values import ENGINE_FIELDS

from .conftest import ROOT

ARGS = ROOT / "tests" / "data" / "vllm-args"
DUMP = json.loads((ARGS / "vllm-0.33.0-serve.json").read_text(encoding="utf-8"))
CASES = json.loads((ARGS / "vllm-0.33.0-parse-cases.json").read_text(encoding="utf-8"))["cases"]
V033 = VllmVersion.parse(DUMP["vllm_version"])


def test_flag_table_is_vllm_0_33s_parser() -> None:
    table = load_flag_table()
    assert table.newest == V033
    dumped = {}
    for action in DUMP["actions"]:
        if action.get("positional") or action["dest"] == "help":
            continue
        for option in action["options"]:
            dumped[option] = action
    in_033 = {o: spec for o, (spec, _) in table.options.items() if spec.accepted_in(V033)}
    assert set(in_033) == set(dumped), set(in_033) ^ set(dumped)
    for option, spec in in_033.items():
        action = dumped[option]
        assert spec.dest == action["dest"], option
        assert spec.takes == {"value": "value", "flag": "flag", "bool-optional": "bool"}[action["kind"]], option
        assert spec.nargs == (action.get("nargs") if action.get("nargs") in ("+", "?") else None), option
        rewrites = "<lambda>" in str(action.get("type"))  # a type function that rewrites the word before the check
        dumped_choices = None if rewrites else action.get("choices")
        table_choices = spec.choices_in(V033)
        assert (sorted(map(str, table_choices)) if table_choices else None) == dumped_choices, option
    removed = [s for s in table.specs if s.removed is not None]
    assert removed and all(s.removed is not None and s.removed <= V033 for s in removed)
    assert {"--swap-space", "--max-seq-len-to-capture", "--num-scheduler-steps"} <= {s.name for s in removed}


def _read_config(path: str) -> list[str] | None:
    file = ARGS / path
    return config_args(yaml.safe_load(file.read_text(encoding="utf-8")), path) if file.is_file() else None


def _vllm_message(error: str) -> str:
    for prefix in ("ParseError: vllm serve: error: ", "ParseError: vllm: error: ", "ValueError: "):
        if error.startswith(prefix):
            return error.removeprefix(prefix)
    raise AssertionError(error)


@pytest.mark.parametrize("case", CASES, ids=[c["args"][:60] for c in CASES])
def test_reads_each_command_as_vllm_0_33_does(case: dict[str, Any]) -> None:
    cmd = parse_serve_argv(["vllm", "serve", *_split(case["args"])], read_config=_read_config)
    if "error" in case:
        message = _vllm_message(case["error"])
        if "validation error" in message:  # JSON flag contents are not validated here (documented)
            return
        assert message in strict_errors(cmd), (message, strict_errors(cmd))
        return
    assert strict_errors(cmd) == [], strict_errors(cmd)
    parsed = case["parsed"]
    assert cmd.model == parsed["model_tag"]
    defaults = CASES[0]["parsed"]
    for name in sorted(ENGINE_FIELDS.keys() & parsed.keys()):  # the fields the dump recorded (LoRA's: test_lora.py)
        if name in cmd.values:
            assert cmd.values[name] == parsed[name], name
        else:
            assert parsed[name] == defaults[name], f"{name} was given but not read"


def _split(text: str) -> list[str]:
    import shlex

    return shlex.split(text)


def test_values_of_other_flags_are_never_the_model() -> None:
    for argv in (
        "vllm serve --host 0.0.0.0 --port 8000 --model org/m",
        "vllm serve --port 8000 org/m",
        "vllm serve --uvicorn-log-level warning --model=org/m --host 0.0.0.0",
    ):
        assert parse_serve_argv(argv).model == "org/m", argv
    api = parse_serve_argv(["--port", "8000", "--model", "org/m", "-tp", "2"], serve=False)
    assert api.model == "org/m" and api.values["tensor_parallel_size"] == 2


def test_unknown_options_and_their_values_are_set_aside() -> None:
    cmd = parse_serve_argv("vllm serve org/m --no-such-flag 7 --max-model-len 4096")
    assert cmd.unknown == ("--no-such-flag",) and cmd.extras == ("--no-such-flag", "7")
    assert cmd.model == "org/m" and cmd.values == {"max_model_len": 4096}


def test_config_file_that_cannot_be_read_is_reported() -> None:
    cmd = parse_serve_argv("vllm serve org/m --config /etc/vllm/serve.yaml -tp 2")
    assert cmd.config_file == "/etc/vllm/serve.yaml" and cmd.values == {"tensor_parallel_size": 2}
    bad = parse_serve_argv("vllm serve org/m --config serve.json")
    assert bad.errors == ("Config file must be of a yaml/yml type. json supplied",)
    with pytest.raises(FlagError, match="expected a YAML mapping"):
        config_args(["a"], "x.yaml")


@pytest.mark.parametrize(
    ("release", "expected"),
    [  # StoreBoolean with nargs='?' (0.5.3 to 0.8.4) reads the word; before, store_true; after, BooleanOptionalAction
        ("0.5.2", (True, ("False",))),
        ("0.5.3", (False, ())),
        ("0.8.4", (False, ())),
        ("0.8.5", (True, ("False",))),
        ("0.33.0", (True, ("False",))),
    ],
)
def test_a_word_after_chunked_prefill_is_its_value_only_where_vllm_read_one(
    release: str, expected: tuple[bool, tuple[str, ...]]
) -> None:
    cmd = parse_serve_argv(
        "vllm serve M --enable-chunked-prefill False --max-model-len 4096", version=VllmVersion.parse(release)
    )
    assert (cmd.values["enable_chunked_prefill"], cmd.extras) == expected
    assert cmd.values["max_model_len"] == 4096
    bad = parse_serve_argv("vllm serve M --enable-chunked-prefill yes", version=VllmVersion.parse("0.8.0"))
    assert bad.errors == ("Invalid boolean value: yes. Expected 'true' or 'false'.",)


def test_block_size_choices_follow_each_release() -> None:
    cmd = parse_serve_argv("vllm serve M --block-size 64")
    assert choice_errors(cmd, VllmVersion.parse("0.6.3")) == [
        "argument --block-size: invalid choice: 64 (choose from 8, 16, 32)"
    ]
    assert choice_errors(cmd, VllmVersion.parse("0.7.3")) == []
    assert choice_errors(parse_serve_argv("vllm serve M --block-size 256"), VllmVersion.parse("0.11.0"))
    assert not choice_errors(parse_serve_argv("vllm serve M --block-size 256"), VllmVersion.parse("0.11.1"))
    assert not choice_errors(parse_serve_argv("vllm serve M --block-size 7"), VllmVersion.parse("0.33.0"))


def test_the_flag_table_is_what_its_generator_writes() -> None:
    """profiles/vllm-flags.yaml is table_from_dump.py's output (the dump plus its HISTORY of sources): a flag's
    release history is added there, with its source, not by editing the table."""
    import subprocess
    import sys

    script = ARGS / "table_from_dump.py"
    written = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True).stdout
    assert written == (ROOT / "profiles" / "vllm-flags.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("release", "refused"),
    [  # each option's first tag naming it and the first tag after the last one that does (v0.4.0 ... v0.14.0rc0
        # tags' engine/arg_utils.py: --engine-use-ray last in v0.6.1, --worker-use-ray in v0.6.6, --preemption-mode
        # and --scheduler-delay-factor in v0.10.2, --guided-decoding-backend in v0.11.2)
        ("0.6.1", set()),
        ("0.6.3", {"--engine-use-ray"}),
        ("0.7.0", {"--engine-use-ray", "--worker-use-ray"}),
        ("0.10.2", {"--engine-use-ray", "--worker-use-ray"}),
        ("0.11.0", {"--engine-use-ray", "--worker-use-ray", "--preemption-mode", "--scheduler-delay-factor"}),
        (
            "0.12.0",
            {
                "--engine-use-ray",
                "--worker-use-ray",
                "--preemption-mode",
                "--scheduler-delay-factor",
                "--guided-decoding-backend",
            },
        ),
    ],
)
def test_options_older_releases_had_are_known_for_them(release: str, refused: set[str]) -> None:
    """Options 0.33 no longer has are in the table for the releases that had them (was: unknown to every release,
    'not vLLM 0.33.0 options' even for an image that has them), with the value each takes."""
    cmd = parse_serve_argv(
        "vllm serve M --engine-use-ray --worker-use-ray --preemption-mode swap --scheduler-delay-factor 0.5 "
        "--guided-decoding-backend outlines --max-model-len 4096"
    )
    assert not cmd.unknown and not cmd.extras and cmd.values["max_model_len"] == 4096
    assert {g.written for g in not_accepted(cmd, VllmVersion.parse(release))} == refused
