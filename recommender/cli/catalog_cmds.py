"""`vllm-plan gpus`, `vllm-plan models`, `vllm-plan show MODEL`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import click

from recommender.catalog import load_aliases, load_gpus, load_models
from recommender.cli.output import emit, format_option, table
from recommender.errors import InputError
from recommender.model.spec import ModelSpec
from recommender.sources.resolve import resolve_model
from recommender.units import GiB

T = TypeVar("T")


def _squeezed(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _holds(name: str, wanted: str) -> bool:
    """Whether `name` holds the squeezed `wanted` (case, spaces, dashes, dots and underscores ignored) without
    cutting a number: `qwen3` is in Qwen3-8B, not in Qwen-32B (3 of 32); `a100` is not in RTX A1000."""
    low = name.lower()
    at = [i for i, ch in enumerate(low) if ch.isalnum()]
    squeezed = "".join(low[i] for i in at)
    start = squeezed.find(wanted)
    while wanted and start != -1:
        after, before = at[start + len(wanted) - 1] + 1, at[start] - 1
        cut_after = wanted[-1].isdigit() and after < len(low) and low[after].isdigit()
        cut_before = wanted[0].isdigit() and before >= 0 and low[before].isdigit()
        if not (cut_after or cut_before):
            return True
        start = squeezed.find(wanted, start + 1)
    return not wanted


def matching(pattern: str | None, what: str, items: list[T], names: Callable[[T], Iterable[str]]) -> list[T]:
    """The items one of whose names holds `pattern` (case, spaces, dashes and underscores ignored; a number is
    not cut: `qwen3` does not match Qwen-32B)."""
    if pattern is None:
        return items
    wanted = _squeezed(pattern)
    found = [i for i in items if any(_holds(n, wanted) for n in names(i))]
    if not found:
        raise InputError(f"no catalog {what} matches {pattern!r} (run `vllm-plan {what}s` for them all)")
    return found


@click.command()
@click.argument("pattern", required=False)
@format_option
def gpus(pattern: str | None, fmt: str) -> None:
    """List the GPUs the planner knows, with memory as CUDA reports it; PATTERN keeps those whose key, name or
    alias holds it (`vllm-plan gpus h100`).

    Example: vllm-plan gpus --format json
    """
    items = matching(pattern, "gpu", list(load_gpus()), lambda g: (g.key, g.name, *g.aliases))
    if fmt != "table":
        emit(
            [
                {
                    "key": g.key,
                    "name": g.name,
                    "vendor": g.vendor,
                    "cuda_total_gib": round(g.total_bytes / GiB, 2),
                    "marketed_gb": g.marketed_gb,
                    "bandwidth_gbps": g.bandwidth_gbps,
                    "bf16_tflops": g.bf16_tflops,
                    "fp8_tflops": g.fp8_tflops,
                    "dense_tflops": {
                        "bf16": g.bf16_tflops,
                        "fp16": g.fp16_tflops,
                        "fp8": g.fp8_tflops,
                        "int8": g.int8_tflops,
                        "fp4": g.fp4_tflops,
                    },
                    "compute_capability": g.compute_capability,
                    "fp8": g.fp8,
                    "fp4": g.fp4,
                    "interconnect": g.interconnect,
                    "gfd_product_label": g.gfd_product_label,
                    "aliases": list(g.aliases),
                    "estimated": list(g.estimated),
                    "sources": dict(g.sources),
                }
                for g in items
            ],
            fmt,
        )
        return
    rows = [
        (
            g.key,
            g.name,
            f"{g.total_bytes / GiB:.2f}" + ("*" if "memory.cuda_total_mib" in g.estimated else ""),
            g.bandwidth_gbps or "",
            _rate(g.bf16_tflops or g.fp16_tflops, "dense_tflops.bf16" in g.estimated),
            g.compute_capability,
            "yes" if g.fp8 else "no",
            g.gfd_product_label or "",
        )
        for g in items
    ]
    click.echo(table(["key", "name", "CUDA GiB", "GB/s", "16-bit TF", "CC", "FP8", "GFD label"], rows))
    click.echo(
        f"\n{len(items)} GPU{'s' if len(items) != 1 else ''}; 16-bit TF = dense BF16 (FP16 on T4/V100) tensor TFLOPS with FP32 accumulate; "
        "* = estimated (see `--format yaml` for every figure's source or method)."
    )


def _rate(tflops: float | None, estimated: bool) -> str:
    return f"{tflops:g}" + ("*" if estimated else "") if tflops else ""


@click.command()
@click.argument("pattern", required=False)
@format_option
def models(pattern: str | None, fmt: str) -> None:
    """List the bundled models (usable offline), with parameter counts and context limits; PATTERN keeps those
    whose id or alias holds it (`vllm-plan models qwen3`).

    Example: vllm-plan models --format yaml
    """
    table_aliases, renames = load_aliases()
    every_alias = sorted(table_aliases.values(), key=lambda a: a.alias.lower())
    entries = sorted(load_models().values(), key=lambda m: m.id.lower())
    entries = matching(
        pattern, "model", entries, lambda m: (m.id, *(a.alias for a in every_alias if a.target.lower() == m.id.lower()))
    )
    specs = [(m, resolve_model(m.id)) for m in entries]
    ids = {m.id.lower() for m in entries}
    aliases = [a for a in every_alias if a.target.lower() in ids]
    if fmt != "table":
        emit(
            [
                {
                    "id": m.id,
                    "architecture": s.architecture,
                    "params": s.params.total if s.params else None,
                    **({"approximate": list(s.approximate)} if s.approximate else {}),
                    "max_model_len": s.max_model_len,
                    "attention": list(s.attention_kinds),
                    "quantization": s.quant.label if s.quant else None,
                    "variants": list(m.variants),
                    "base_model": m.base_model,
                    "aliases": [a.alias for a in aliases if a.target.lower() == m.id.lower()],
                    "source": m.source,
                }
                for m, s in specs
            ],
            fmt,
        )
        return
    rows = [
        (
            m.id,
            s.architecture,
            f"{(s.params.total if s.params else 0) / 1e9:.2f}B" + ("~" if s.approximate else ""),
            f"{s.max_model_len:,}",  # as every other command prints token counts
            "encoder-only" if s.encoder_only else "+".join(s.attention_kinds),  # no KV cache (memory/no_kv.py)
            s.quant.label if s.quant else "",
        )
        for m, s in specs
    ]
    click.echo(table(["model", "architecture", "params", "max len", "attention", "quantization"], rows))
    click.echo(
        f"\n{len(rows)} model{'s' if len(rows) != 1 else ''}; ~ = estimated architecture; `vllm-plan show MODEL` for one, `--format yaml` for sources."
    )
    if aliases:
        click.echo("\nAliases (profiles/aliases.yaml; `vllm-plan show ALIAS` says why each is safe):")
        click.echo(table(["alias", "resolves to", "kind"], [(a.alias, a.target, a.kind) for a in aliases]))
    click.echo("Renamed repositories (either spelling resolves): " + ", ".join(f"{r.old}* = {r.new}*" for r in renames))
    click.echo("An id without organisation resolves when exactly one entry has that name (e.g. Qwen3-8B).")


def describe(s: ModelSpec) -> dict[str, Any]:
    """The architecture facts as the tool understood them."""
    return _architecture(s) | _feature_blocks(s) | {"quantization": s.quant.label if s.quant else None} | _provenance(s)


def _architecture(s: ModelSpec) -> dict[str, Any]:
    """The shape every decoder has: layers, heads, widths, lengths."""
    kinds = {k: s.layer_kinds.count(k) for k in s.attention_kinds}
    return {
        "model": s.name,
        "architecture": s.architecture,
        "model_type": s.model_type,
        "read_as": read_as(s),
        "dtype": s.dtype,
        "layers": s.num_layers,
        "hidden_size": s.hidden_size,
        "attention_heads": s.num_heads,
        # MLA caches one latent a token, not K/V heads: its dimensions are in the `mla` block
        "kv_heads": None if s.mla else s.num_kv_heads,
        "head_dim": None if s.mla else s.head_dim,
        "layer_kinds": kinds,
        "sliding_window": s.sliding_window,
        "attention_chunk_size": s.attention_chunk_size,
        "intermediate_size": s.intermediate_size,
        "vocab_size": s.vocab_size,
        "max_model_len": s.max_model_len,
        "max_model_len_from": s.max_len_key,
        "tie_word_embeddings": s.tie_word_embeddings,
        "multimodal": s.multimodal,
    }


def read_as(s: ModelSpec) -> str:
    """The family the layers are counted as, with the features read beyond it (`+ MLA + MoE`) that its name does
    not already say."""
    features = (
        ("MLA", s.mla is not None),
        ("sparse-attention indexer", s.mla is not None and s.mla.indexer is not None),
        ("MoE", s.moe is not None),
        ("linear attention", s.linear_attention is not None),
        ("Mamba", s.mamba is not None and s.mamba.version != 0),
        ("short conv", s.mamba is not None and s.mamba.version == 0),  # LFM2's ShortConv state (MambaSpec version 0)
        ("encoder-only attention (no KV cache)", s.encoder_only),
    )
    extra = [name for name, present in features if present and name.lower() not in s.family.lower()]
    return " + ".join([s.family, *extra])


def _feature_blocks(s: ModelSpec) -> dict[str, Any]:
    """One block for each feature the model has: MoE, MLA, linear attention, Mamba."""
    d: dict[str, Any] = {}
    if s.moe:
        d["moe"] = {
            "experts": s.moe.num_experts,
            "top_k": s.moe.top_k,
            "expert_intermediate": s.moe.expert_intermediate,
            "shared_intermediate": s.moe.shared_intermediate,
            "moe_layers": s.mlp_kinds.count("moe"),
        }
    if s.mla:
        d["mla"] = {
            "kv_lora_rank": s.mla.kv_lora_rank,
            "q_lora_rank": s.mla.q_lora_rank,
            "qk_nope_head_dim": s.mla.qk_nope_head_dim,
            "qk_rope_head_dim": s.mla.qk_rope_head_dim,
            "v_head_dim": s.mla.v_head_dim,
            "qk_head_dim": s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim,
            "kv_cache_dim": s.mla.kv_lora_rank + s.mla.qk_rope_head_dim,  # the latent each layer caches a token
        }
        if s.mla.per_head_cache:  # MiniCPM3: K and V per head instead of the latent
            d["mla"]["kv_cache_dim"] = 2 * s.num_heads * s.mla.per_head_cache
    if s.linear_attention:
        la = s.linear_attention
        d["linear_attention"] = {
            "k_heads": la.num_k_heads,
            "v_heads": la.num_v_heads,
            "head_k_dim": la.head_k_dim,
            "head_v_dim": la.head_v_dim,
            "conv_kernel": la.conv_kernel,
        }
    if s.mamba:
        m = s.mamba
        d["mamba"] = (
            {"version": 2, "heads": m.num_heads, "head_dim": m.head_dim, "n_groups": m.n_groups}
            if m.version == 2
            else {"version": m.version, "intermediate": m.intermediate}
            | ({"dt_rank": m.dt_rank} if m.version == 1 else {})
        ) | {"state_size": m.state_size, "conv_kernel": m.conv_kernel}
    return d


def _provenance(s: ModelSpec) -> dict[str, Any]:
    """The parameter counts (with the published figure), what is estimated, the checkpoint and the source."""
    p = s.params
    d: dict[str, Any] = {}
    if p:
        d["parameters"] = {
            "total": p.total,
            "embedding": p.embedding,
            "attention": p.attention,
            "mlp": p.mlp,
            "experts": p.experts,
            "shared_experts": p.shared_experts,
            "router": p.router,
            "mixer": p.mixer,
            "norms": p.norms,
            "lm_head": p.lm_head,
        }
    if s.published_params:
        d["published_params"] = s.published_params
    if s.approximate:
        d["approximate"] = True
        d["approximate_because"] = list(s.approximate)
    if s.served_until:
        d["vllm_served_until"] = s.served_until
    if (r := s.first_release) is not None:  # profiles/architectures.yaml
        d["vllm_first_release"] = r.first or f"after {r.after}, by {r.by}"
    if s.checkpoint_bytes is not None:
        d["checkpoint"] = {
            "bytes": s.checkpoint_bytes,
            **{f"{k}_bytes": v for k, v in s.checkpoint_dtypes},
            **({"tensors": len(s.checkpoint_tensors)} if s.checkpoint_tensors else {}),
        }
    d["source"] = s.source
    if s.notes:
        d["notes"] = " | ".join(s.notes)
    return d


@click.command()
@click.argument("model")
@click.option("--revision", help="Hub revision (branch, tag or commit) when MODEL is fetched from the hub.")
@format_option
def show(model: str, revision: str | None, fmt: str) -> None:
    """Show a model's architecture as the planner understands it.

    MODEL is a local directory (or config.json), a Hugging Face id from the catalog, or any hub id
    (fetched with huggingface_hub: HF_TOKEN, HF_ENDPOINT and HF_HUB_OFFLINE apply).

    Example: vllm-plan show Qwen/Qwen2.5-7B-Instruct
    """
    d = describe(resolve_model(model, revision=revision))
    if fmt != "table":
        emit(d, fmt)
        return
    for key, value in d.items():
        if isinstance(value, dict):
            inner = ", ".join(
                f"{k}={v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k}={v}" for k, v in value.items()
            )
            click.echo(f"{key:>20}: {inner}")
        elif isinstance(value, list):
            click.echo(f"{key:>20}: {'; '.join(str(v) for v in value)}")
        elif value is not None:
            click.echo(
                f"{key:>20}: {value:,}"
                if isinstance(value, int) and not isinstance(value, bool)
                else f"{key:>20}: {value}"
            )
