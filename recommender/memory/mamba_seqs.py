"""One Mamba cache block per decode sequence: vLLM's check that max_num_seqs fits the hybrid KV pool (pure).

A model with Mamba-style state (Mamba / Mamba2 layers, Gated DeltaNet and other linear attention: vLLM's MambaSpec)
keeps one state block per running request in the same pool of pages as the attention layers. vLLM 0.33 runs its
FULL decode CUDA graphs over up to max_num_seqs requests, each reading its own state block, so once the KV cache is
sized it refuses to start when the pool holds fewer blocks than max_num_seqs (config/compilation.py:1509-1533,
`resolve_cudagraph_mode_and_sizes`, called from initialize_kv_cache with the real KV-cache config):

    if kv_cache_config.has_mamba_layers and cudagraph_mode.has_full_cudagraphs()
            and max_num_reqs > kv_cache_config.num_blocks:
        raise ValueError("max_num_seqs (N) exceeds available Mamba cache blocks (M). ...")

`num_blocks` is the pool's page count (the KV memory over one page per layer slot of a group), the figure the
planner already computes (StageBudget.num_blocks); hybrid models default to FULL_AND_PIECEWISE graphs
(model_executor/models/config.py MambaModelConfig), --enforce-eager captures none and skips the check.

Releases: #38270 (opened 2026-03-26, in main by 2026-03-31, vllm#38632) added this error. vLLM 0.19.0 does not have
it (vllm-project/recipes#551: Qwen3.6-27B-FP8 at 0.95 with 1,024 sequences reaches PIECEWISE graph capture on v0.19.0
and fails there, on another error), and it is reported on 0.23.1, 0.25.1 and 0.28.0 (vllm#49064,
kaito-project/kaito#2319), so it is taken from 0.20.0. Before it the same shortage crashed later, capturing the
FULL decode graphs: the decode batch is padded to the largest capture size, min(max_num_seqs, 512) (the default
max_cudagraph_capture_size is min(2 x max_num_seqs, 512)), and causal_conv1d_update asserts `num_cache_lines >=
batch` over a conv-state pool of num_blocks lines (vllm#34094; vllm#34881 and #36639 describe the pool). Reported on
0.15.0 (QwenLM/Qwen3-Coder#559, Qwen3-Coder-Next on 2 x H100 NVL), 0.16.1rc1 (vllm#35945) and 0.17.0 (vllm#36324,
Qwen3.5 AWQ on an RTX 5090, after #34571 had capped the sizes on the Mamba path only), so from 0.15 to 0.19 a
pool smaller than that batch is the assertion. Earlier releases are not modelled.

The block count is a prediction. On the records that print it the pool is predicted within 1.5 % on an H100
(recipes#551: 856 logged for Qwen3.6-27B-FP8 at 0.95, 869 predicted; calibration C001, Qwen3-Next on an H200: 7,162
logged, 7,188 predicted) but 17 % and 23 % high on an RTX PRO 6000 Max-Q (field4 J050 and J051, the recipe run of
vllm-project/recipes#831: 939 and 556 logged, 1,134 and 721 predicted; about 8-9 GiB of that card's startup is not
explained, see FIELD4-FINDINGS.md). So a pool predicted less than `BLOCKS_UNCERTAINTY` above max_num_seqs is "at
risk" (a warning that says by how much, not a start), and the planner keeps max_num_seqs within
(1 - BLOCKS_UNCERTAINTY) of the predicted blocks, which both Max-Q runs would have passed (850 <= 939, 540 <= 556).
"""

from __future__ import annotations

import math

from recommender.memory.capture_config import effective_mode
from recommender.memory.engine import EngineFlags, VllmVersion
from recommender.memory.explanation import StageBudget
from recommender.memory.startup_issues import IssueKind, StartupIssue

CHECK_FROM = VllmVersion(0, 20)
ASSERT_FROM = VllmVersion(0, 15)
MAX_CAPTURE_SIZE = 512  # the default max_cudagraph_capture_size caps the padded decode batch
BLOCKS_UNCERTAINTY = 0.25  # the largest overestimate logged: J051, 1 - 556 / 721 = 22.9 %


def has_mamba_state(stage: StageBudget) -> bool:
    """KVCacheConfig.has_mamba_layers: a group of Mamba-style state (linear attention included) in the pool."""
    return any(g.kind == "mamba" for g in stage.layout.groups)


def full_graphs(flags: EngineFlags, version: VllmVersion) -> bool:
    """`cudagraph_mode.has_full_cudagraphs()`: hybrid models default to FULL_AND_PIECEWISE; a cudagraph_mode of NONE
    or PIECEWISE, or -O0 without a mode, captures no FULL graph (memory/capture_config.py)."""
    release = (version.major, version.minor, version.patch)
    mode = effective_mode(flags.capture_request(), default="FULL_AND_PIECEWISE", release=release)
    return not flags.enforce_eager and mode not in ("NONE", "PIECEWISE")


def checked(stage: StageBudget, flags: EngineFlags, version: VllmVersion, *, v0: bool) -> bool:
    """Whether the pool must hold the decode batch: a hybrid model captured with FULL decode graphs on the V1 engine
    (V0 had a per-request Mamba cache of its own), from 0.15."""
    return not v0 and version >= ASSERT_FROM and full_graphs(flags, version) and has_mamba_state(stage)


def decode_batch(max_num_seqs: int, version: VllmVersion) -> int:
    """The sequences the pool must hold: max_num_seqs from 0.20 (the check), the padded capture batch before."""
    return max_num_seqs if version >= CHECK_FROM else min(max_num_seqs, MAX_CAPTURE_SIZE)


def safe_max_num_seqs(num_blocks: int) -> int:
    """The largest max_num_seqs the predicted pool holds with BLOCKS_UNCERTAINTY to spare (at least 1)."""
    return max(1, math.floor(num_blocks * (1 - BLOCKS_UNCERTAINTY)))


def mamba_blocks_check(
    stage: StageBudget, max_num_seqs: int, flags: EngineFlags, version: VllmVersion, *, v0: bool
) -> StartupIssue | None:
    """vLLM's error when max_num_seqs exceeds the pool's blocks; our warning when it is within the uncertainty."""
    if not checked(stage, flags, version, v0=v0) or stage.num_blocks <= 0:
        return None
    blocks, batch = stage.num_blocks, decode_batch(max_num_seqs, version)
    if batch > blocks:
        return exceeds_mamba_blocks(max_num_seqs, blocks) if version >= CHECK_FROM else capture_assertion(batch, blocks)
    if batch > safe_max_num_seqs(blocks):
        return mamba_blocks_margin(batch, blocks)
    return None


def capture_assertion(batch: int, blocks: int) -> StartupIssue:
    """0.15-0.19: the FULL decode graph of `batch` sequences over a conv-state pool of `blocks` lines
    (model_executor/layers/mamba/ops/causal_conv1d.py causal_conv1d_update); the assertion, then our numbers."""
    return StartupIssue(
        IssueKind.MAMBA_BLOCKS,
        "AssertionError: assert num_cache_lines >= batch (causal_conv1d_update, capturing the FULL decode CUDA "
        f"graph of {batch} sequences over {blocks} Mamba cache blocks: lower --max-num-seqs to at most {blocks}, or "
        "--enforce-eager)",
        count=batch,
        requested=blocks,
    )


def exceeds_mamba_blocks(max_num_seqs: int, blocks: int) -> StartupIssue:
    """config/compilation.py:1526, vLLM 0.33's text."""
    return StartupIssue(
        IssueKind.MAMBA_BLOCKS,
        f"max_num_seqs ({max_num_seqs}) exceeds available Mamba cache blocks ({blocks}). Each decode sequence "
        "requires one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at "
        f"most {blocks} or increase gpu_memory_utilization.",
        count=max_num_seqs,
        requested=blocks,
    )


def mamba_blocks_margin(max_num_seqs: int, blocks: int) -> StartupIssue:
    """This tool's warning: the predicted pool is above the decode batch by less than the block count's
    uncertainty."""
    spare = blocks - max_num_seqs
    return StartupIssue(
        IssueKind.MAMBA_BLOCKS_MARGIN,
        f"at risk: the KV pool is predicted to hold {blocks:,} Mamba cache blocks for {max_num_seqs:,} decode "
        "sequences, "
        f"{spare:,} ({spare / blocks:.1%}) to spare, within the prediction's ~{BLOCKS_UNCERTAINTY:.0%} uncertainty (an RTX PRO 6000 logged 23% fewer than "
        "predicted): "
        "vLLM refuses to start when max_num_seqs exceeds the blocks (one per decode sequence); "
        f"--max-num-seqs {safe_max_num_seqs(blocks):,} or lower keeps the margin",
        count=max_num_seqs,
        requested=blocks,
    )
