"""Write profiles/vllm-flags.yaml's `flags:` block from a dump of vLLM's parser plus the curated history below.

    python tests/data/vllm-args/table_from_dump.py > profiles/vllm-flags.yaml

The dump (vllm-0.33.0-serve.json) says which options vLLM 0.33 accepts, which take a value, and which boolean
spellings switch a setting off. HISTORY adds what a single release's parser cannot say: flags that older releases
accepted and 0.33 no longer does (`removed`), and flags introduced after the oldest modelled release (`since`),
each with its source. tests/test_serve_args.py checks the committed table against the dump.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent

HEADER = """\
# vLLM `serve` command-line flags, per release: which options exist, which take a value, which switch a boolean
# off, and the release that introduced (`since`) or removed (`removed`) them. `check` and `explain` parse a command
# line with this table the way vLLM's argparse-based FlexibleArgumentParser does (dash or underscore spellings,
# `--flag=value`, unique-prefix abbreviations, --no-/--disable- booleans, last one wins).
#
# Sources:
# - every flag vLLM 0.33.0 accepts, with its kind: tests/data/vllm-args/vllm-0.33.0-serve.json, a dump of vLLM
#   0.33.0's own parser (tests/data/vllm-args/dump_vllm_args.py); tests/test_serve_args.py keeps them equal.
# - `removed` / `since`: shared/spec/vllm-memory-model.md sections 6.1-6.3 (vLLM 0.33.0 engine/arg_utils.py and
#   config/*.py): --swap-space gone from EngineArgs since 0.18.0 (unsloth-zoo#1210, vllm#36216);
#   --max-seq-len-to-capture removed by vllm#25543 in 0.11.0 (NeMo-Curator#1200); the V0-engine flags
#   --num-scheduler-steps and --use-v2-block-manager went with the V0 engine (0.11.0); --kv-cache-memory-bytes
#   added in 0.11.0 (the spec marks the exact release UNCONFIRMED).
# - A flag without `since` existed before the oldest release modelled (0.4); its first release is not recorded, so
#   `check` never fails a command for using it early.
#
# takes: value (one argument; nargs '+' or '?' as noted), flag (no argument), bool (no argument; `negated` lists the
# spellings that set it to False). dest: the argparse destination (EngineArgs / FrontendArgs field).
"""

# flag -> extra keys (history not visible in one release's parser), with the kind for flags 0.33 no longer has.
HISTORY: dict[str, dict[str, object]] = {
    "--kv-cache-memory-bytes": {"since": "0.11.0"},
    "--swap-space": {"dest": "swap_space", "takes": "value", "removed": "0.18.0"},
    "--max-seq-len-to-capture": {"dest": "max_seq_len_to_capture", "takes": "value", "removed": "0.11.0"},
    "--num-scheduler-steps": {"dest": "num_scheduler_steps", "takes": "value", "removed": "0.11.0"},
    "--use-v2-block-manager": {"dest": "use_v2_block_manager", "takes": "flag", "removed": "0.11.0"},
}


def _negative(option: str, dest: str) -> bool:
    """vLLM's EnableDisableAction: --no-x, and --disable-x for an enable_ dest (or --enable-x for a disable_ one)."""
    return (
        option.startswith("--no-")
        or (option.startswith("--disable-") and dest.startswith("enable_"))
        or (option.startswith("--enable-") and dest.startswith("disable_"))
    )


def entries(dump: dict[str, object]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for action in dump["actions"]:  # type: ignore[union-attr]
        if action.get("positional") or action["dest"] == "help":
            continue
        options: list[str] = action["options"]
        dest: str = action["dest"]
        kind = {"value": "value", "flag": "flag", "bool-optional": "bool"}[action["kind"]]
        off = sorted(o for o in options if kind == "bool" and _negative(o, dest))
        on = [o for o in options if o not in off]
        longs = [o for o in on if o.startswith("--")]
        # the spelling named after the dest is the key; the rest are aliases
        name = next((o for o in longs if o[2:].replace("-", "_") == dest), (longs or on)[0])
        entry: dict[str, object] = {"dest": dest, "takes": kind}
        if action.get("nargs") in ("+", "?", "*"):
            entry["nargs"] = action["nargs"]
        aliases = sorted(o for o in on if o != name)
        if aliases:
            entry["aliases"] = aliases
        if off:
            entry["negated"] = off
        out[name] = entry
    for name, extra in HISTORY.items():
        out.setdefault(name, {}).update(extra)
    return out


def _flow(entry: dict[str, object]) -> str:
    parts = []
    for key, value in entry.items():
        if isinstance(value, list):
            parts.append(f"{key}: [{', '.join(value)}]")
        elif key in ("since", "removed", "nargs"):
            parts.append(f'{key}: "{value}"')
        else:
            parts.append(f"{key}: {value}")
    return "{" + ", ".join(parts) + "}"


def main() -> None:
    dump = json.loads((HERE / "vllm-0.33.0-serve.json").read_text(encoding="utf-8"))
    print(HEADER + 'versions: {oldest: "0.4.0", newest: "' + dump["vllm_version"] + '"}')
    print("flags:")
    for name, entry in entries(dump).items():  # vLLM's registration order (argparse's order in its messages)
        print(f"  {name}: {_flow(entry)}")


if __name__ == "__main__":
    main()
