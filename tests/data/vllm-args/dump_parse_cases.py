"""Run vLLM's own `vllm serve` argument parser on the command lines in parse-cases.txt and record what it parsed.

    cd tests/data/vllm-args && VLLM_TARGET_DEVICE=cpu ~/.cache/vllm-plan/oracle-venv/bin/python dump_parse_cases.py \
        > vllm-0.33.0-parse-cases.json

Each line of parse-cases.txt is one command line after `vllm serve` (shell quoting). The parser is built as
`vllm` builds it (vllm/entrypoints/cli/main.py: a FlexibleArgumentParser whose serve subparser gets
make_arg_parser, as ServeSubcommand.subparser_init does); `parser.error` is intercepted so the message vLLM would print is recorded instead of exiting.
The suite compares recommender.serve_args with this frozen output; it never imports vLLM.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

DESTS = (
    "model_tag model tensor_parallel_size pipeline_parallel_size data_parallel_size enable_expert_parallel "
    "quantization dtype kv_cache_dtype gpu_memory_utilization kv_cache_memory_bytes max_model_len max_num_seqs "
    "max_num_batched_tokens block_size enforce_eager enable_prefix_caching cpu_offload_gb enable_chunked_prefill "
    "host port served_model_name"
).split()


class ParseError(Exception):
    pass


def main() -> None:
    import vllm
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    def error(self: FlexibleArgumentParser, message: str) -> None:
        raise ParseError(f"{self.prog}: error: {message}")

    FlexibleArgumentParser.error = error  # type: ignore[method-assign,assignment]
    parser = FlexibleArgumentParser(prog="vllm")
    subparsers = parser.add_subparsers(required=False, dest="subparser")
    # ServeSubcommand.subparser_init (vllm/entrypoints/cli/serve.py), without importing the server (uvicorn)
    make_arg_parser(subparsers.add_parser("serve", usage="vllm serve [model_tag] [options]"))
    cases = []
    with Path("parse-cases.txt").open(encoding="utf-8") as fh:
        lines = [ln.strip() for ln in fh if ln.strip() and not ln.startswith("#")]
    for line in lines:
        argv = shlex.split(line)
        entry: dict[str, object] = {"args": line}
        try:
            ns = parser.parse_args(["serve", *argv])
            entry["parsed"] = {d: _plain(getattr(ns, d, None)) for d in DESTS}
        except (ParseError, ValueError, AssertionError) as exc:
            entry["error"] = f"{exc.__class__.__name__}: {exc}"
        cases.append(entry)
    head = {"vllm_version": vllm.__version__, "python": sys.version.split()[0]}
    body = ",\n  ".join(json.dumps(c) for c in cases)
    sys.stdout.write(json.dumps(head, indent=1)[:-2] + f',\n "cases": [\n  {body}\n ]\n}}\n')


def _plain(value: object) -> object:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return repr(value)


if __name__ == "__main__":
    main()
