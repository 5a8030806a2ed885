"""The CUDA-graph capture settings a launch passes (pure): --compilation-config / -O JSON, --cudagraph-capture-sizes,
--max-cudagraph-capture-size and the older --cuda-graph-sizes, read the way vLLM reads them.

vLLM's rules, by release (vllm/config/vllm.py _set_cudagraph_sizes, vllm/config/compilation.py, engine/arg_utils.py):
- 0.11.1 on (max_cudagraph_capture_size, vllm/config/vllm.py): an explicit `cudagraph_capture_sizes` list is
  de-duplicated, filtered to sizes <= max_num_batched_tokens and sorted ascending; without it the default list
  ([1, 2, 4] + range(8, 256, 8) + range(256, max + 1, 16)) runs up to min(max_cudagraph_capture_size,
  max_num_batched_tokens), the max defaulting to min(2 x max_num_seqs, 512) (memory/overheads.py).
- before 0.11.1: CompilationConfig.init_with_cudagraph_sizes keeps the config's own list as given (de-duplicated,
  sorted; not filtered by max_num_batched_tokens); --cuda-graph-sizes (SchedulerConfig.cuda_graph_sizes, 0.9.0 to
  0.12) with one value N is the default list up to N ([1, 2, 4] + range(8, N + 1, 8)), with several the list itself.
- cudagraph_mode (from 0.10.2, CUDAGraphMode): NONE captures nothing; PIECEWISE and FULL one list of every size;
  FULL_DECODE_ONLY the uniform-decode sizes only (<= max_num_seqs); FULL_AND_PIECEWISE (the default from 0.11.0) both.
  Not given, a compilation level / mode of 0 (-O0, {"level": 0}) leaves the V1 engine without graphs
  (VllmConfig: cudagraph_mode NONE unless the compilation mode is VLLM_COMPILE).
- The V0 engine (worker/model_runner.py capture_model) captures compilation_config.cudagraph_capture_sizes when given
  (init_with_cudagraph_sizes, from 0.7), else its decode list up to max_num_seqs; no modes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from recommender.errors import FlagError

MODES = ("NONE", "PIECEWISE", "FULL", "FULL_DECODE_ONLY", "FULL_AND_PIECEWISE")
MODE_FROM = (0, 10, 2)  # CUDAGraphMode in CompilationConfig (vLLM pull request 20059)
EXPLICIT_FILTERED_FROM = (0, 11, 1)  # explicit lists filtered by max_num_batched_tokens; max_cudagraph_capture_size


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """What the launch asks for (None: vLLM's default). `level0`: compilation level / mode 0 asked for."""

    sizes: tuple[int, ...] | None = None
    max_size: int | None = None
    mode: str | None = None
    level0: bool = False

    @property
    def given(self) -> bool:
        return self.sizes is not None or self.max_size is not None or self.mode is not None or self.level0


def _sizes(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list) or not value or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise FlagError(f"{where}: cudagraph_capture_sizes must be a non-empty list of integers, got {value!r}")
    if any(v < 1 for v in value):
        raise FlagError(f"{where}: cudagraph capture sizes must be positive, got {value!r}")
    return tuple(value)


def _compilation(text: str, where: str) -> CaptureRequest:
    """A --compilation-config value: a JSON object, or (older releases) a bare level number."""
    stripped = text.strip()
    if stripped.isdigit():
        return CaptureRequest(level0=int(stripped) == 0)
    try:
        data = json.loads(stripped)
    except ValueError:
        raise FlagError(f"{where} {text!r}: expected a JSON object or a level number") from None
    if not isinstance(data, dict):
        raise FlagError(f"{where} {text!r}: expected a JSON object or a level number")
    sizes = _sizes(data["cudagraph_capture_sizes"], where) if data.get("cudagraph_capture_sizes") is not None else None
    top = data.get("max_cudagraph_capture_size")
    if top is not None and (isinstance(top, bool) or not isinstance(top, int) or top < 1):
        raise FlagError(f"{where}: max_cudagraph_capture_size must be a positive integer, got {top!r}")
    mode = data.get("cudagraph_mode")
    if mode is not None:
        mode = str(mode).upper()
        if mode not in MODES:
            raise FlagError(f"{where}: cudagraph_mode {data['cudagraph_mode']!r}: choose from {', '.join(MODES)}")
    level = data.get("mode", data.get("level"))
    return CaptureRequest(sizes, top, mode, level0=level == 0 or level == "0" or level == "NONE")


def capture_request(
    compilation_config: str | None,
    optimization_level: str | None,
    cudagraph_capture_sizes: tuple[int, ...] | None,
    max_cudagraph_capture_size: int | None,
) -> CaptureRequest:
    """The capture settings of a launch: the compilation config (-O JSON or --compilation-config; a `-O` JSON is the
    older alias of --compilation-config), overridden key by key by the dedicated flags (arg_utils.py copies
    --cudagraph-capture-sizes / --max-cudagraph-capture-size into the compilation config)."""
    req = CaptureRequest()
    level = (optimization_level or "").strip()
    if level.startswith("{"):
        req = _compilation(level, "-O")
    elif level == "0":
        req = CaptureRequest(level0=True)
    if compilation_config is not None and compilation_config.strip() not in ("", "null", "None"):
        given = _compilation(compilation_config, "--compilation-config")
        req = CaptureRequest(
            given.sizes or req.sizes,
            given.max_size or req.max_size,
            given.mode or req.mode,
            given.level0 or req.level0,
        )
    if cudagraph_capture_sizes is not None:
        _sizes(list(cudagraph_capture_sizes), "--cudagraph-capture-sizes")
        req = CaptureRequest(cudagraph_capture_sizes, req.max_size, req.mode, req.level0)
    if max_cudagraph_capture_size is not None:
        if max_cudagraph_capture_size < 1:
            raise FlagError(f"--max-cudagraph-capture-size must be positive, got {max_cudagraph_capture_size}")
        req = CaptureRequest(req.sizes, max_cudagraph_capture_size, req.mode, req.level0)
    return req


def explicit_sizes(sizes: tuple[int, ...], *, max_num_batched_tokens: int, release: tuple[int, ...]) -> tuple[int, ...]:
    """An explicit capture list as the release keeps it: de-duplicated, ascending, and from 0.11.1 only the sizes
    <= max_num_batched_tokens."""
    kept = set(sizes)
    if release >= EXPLICIT_FILTERED_FROM:
        kept = {n for n in kept if n <= max_num_batched_tokens}
    return tuple(sorted(kept))


def effective_mode(req: CaptureRequest, *, default: str, release: tuple[int, ...]) -> str:
    """The V1 engine's cudagraph_mode: the one given (from 0.10.2), else NONE after a compilation level of 0, else
    the release's default."""
    if req.mode is not None and release >= MODE_FROM:
        return req.mode
    return "NONE" if req.level0 else default
