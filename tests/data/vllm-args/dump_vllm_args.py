"""Dump vLLM's own `vllm serve` argparse actions to JSON (run with a venv that has vLLM installed).

    VLLM_TARGET_DEVICE=cpu ~/.cache/vllm-plan/oracle-venv/bin/python tests/data/vllm-args/dump_vllm_args.py \
        > tests/data/vllm-args/vllm-0.33.0-serve.json

The suite compares profiles/vllm-flags.yaml with the frozen output; it never imports vLLM itself.
"""

from __future__ import annotations

import argparse
import json
import sys


def _kind(action: argparse.Action) -> str:
    if isinstance(action, argparse.BooleanOptionalAction):
        return "bool-optional"  # --x / --no-x (vLLM's EnableDisableAction adds --enable-x / --disable-x)
    if action.nargs == 0:
        return "flag"  # store_true / store_false / store_const / count / help
    return "value"


def main() -> None:
    import vllm
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    registered: dict[int, list[str]] = {}
    for option, owner in parser._option_string_actions.items():  # includes hidden --no-enable-x spellings
        registered.setdefault(id(owner), []).append(option)
    actions = []
    for action in parser._actions:
        if not action.option_strings:
            actions.append({"dest": action.dest, "positional": True, "nargs": action.nargs})
            continue
        entry: dict[str, object] = {
            "options": sorted(registered.get(id(action), action.option_strings)),
            "dest": action.dest,
            "kind": _kind(action),
        }
        if action.nargs not in (None, 0):
            entry["nargs"] = action.nargs
        if action.type is not None:
            entry["type"] = getattr(action.type, "__qualname__", None) or type(action.type).__name__
        if action.choices is not None:
            entry["choices"] = sorted(str(c) for c in action.choices)
        if isinstance(action, argparse._StoreConstAction) and not isinstance(action, argparse._StoreTrueAction):
            entry["const"] = repr(action.const)
        if type(action).__name__ not in ("_StoreAction",):
            entry["action"] = type(action).__name__
        actions.append(entry)
    out = {
        "vllm_version": vllm.__version__,
        "python": sys.version.split()[0],
        "produced_by": "tests/data/vllm-args/dump_vllm_args.py",
        "parser": "vllm.entrypoints.common.cli_args.make_arg_parser(FlexibleArgumentParser(prog='vllm serve'))",
        "actions": actions,
    }
    head = json.dumps({k: v for k, v in out.items() if k != "actions"}, indent=1)[:-2]
    lines = ",\n  ".join(json.dumps(a) for a in actions)  # one action per line: reviewable diffs
    sys.stdout.write(f'{head},\n "actions": [\n  {lines}\n ]\n}}\n')


if __name__ == "__main__":
    main()
