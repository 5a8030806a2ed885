"""One parameter tensor vLLM allocates, with its group and how it is sharded across tensor-parallel ranks (the
record `recommender.model.tensors` and `recommender.model.encoder_tensors` list for a model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Shard = Literal["column", "row", "kv", "vocab", "replicated", "expert_w13", "expert_w2", "expert_vec", "head"]
Group = Literal[
    "embedding", "attention", "mlp", "experts", "shared_experts", "router", "mixer", "norms", "lm_head", "vision"
]


@dataclass(frozen=True, slots=True)
class Tensor:
    """One parameter tensor (or `count` stacked experts) of shape [rows, cols]."""

    module: str  # HF-style module path, matched against modules_to_not_convert
    group: Group
    rows: int
    cols: int
    shard: Shard
    layer: int | None  # decoder layer index; None for embedding / final norm / lm_head
    linear: bool = True  # a quantizable Linear weight (biases and norms are not)
    count: int = 1  # stacked experts
    heads: int = 0  # for shard="kv"/"head": number of heads in `rows`
    loaded: bool = True  # False: in the checkpoint but dropped by vLLM's loader (KV-shared layers' K/V)
    in_checkpoint: bool = True  # False: allocated by vLLM but not shipped (Gemma-4 k_eq_v: V filled from K)

    @property
    def numel(self) -> int:
        """Logical element count."""
        return self.rows * self.cols * self.count
