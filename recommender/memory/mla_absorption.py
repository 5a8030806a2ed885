"""The absorbed MLA decode matrices vLLM 0.7.1-0.7.3 kept beside the loaded weights (pure).

The first MLA backend (vllm/attention/backends/mla/utils.py, MLACommonImpl.process_weights_after_loading, identical
in v0.7.1 and v0.7.2, reworked dequantization in v0.7.3; replaced in 0.8.0 by mla/common.py, which keeps only views
W_UV / W_UK_T of kv_b_proj and has no VLLM_MLA_PERFORM_MATRIX_ABSORPTION) runs with matrix absorption on by default
(envs.py VLLM_MLA_PERFORM_MATRIX_ABSORPTION "1") and keeps, per MLA layer and TP rank, beside q_proj (q_b_proj when
q_lora_rank is set), kv_b_proj and o_proj, which stay for prefill ("we end up with absorbed weights for decode and
another copy of raw weights for prefill"):

- W_QR = q_proj[..., nope:].flatten(1).contiguous().to(act_dtype): [Lq, N*R] in the model dtype (a copy);
- W_Q_UK = einsum(W_Q, W_UK): [Lq, N*L]; with FP8 weights re-quantized with the checkpoint's group shape
  (scaled_quantize: fp8 and float32 scales, stored transposed), else .to(act_dtype);
- W_UV_O = einsum(W_UV, W_O): [N*L, H], the same dtypes as W_Q_UK;
- self.W_UK / self.W_UV: views of kv_b_proj's weight as (maybe) dequantized: free for 16-bit weights; for FP8 a
  dequantized copy [L, N*(P+V)] that the views keep alive, float32 in 0.7.1-0.7.2 (scaled_dequantize's out_dtype
  default) and in the model dtype from 0.7.3 (quant_method.apply(layer, eye(act_dtype))).

Lq is q_lora_rank, or the hidden size when the model has none (DeepSeek-V2-Lite: W_Q is q_proj itself); N the heads
per rank, L kv_lora_rank, P/R/V the nope, rope and value head dims, H the hidden size. The tensors are built inside
load_model (model_loader/loader.py calls process_weights_after_loading), so "Loading model weights took" and the
profiler's "model weights take" include them; temporaries (the dequantized q_proj and o_proj) are freed. A layer whose
weights --cpu-offload-gb moved to the CPU builds them there (vLLM issue #15196's DeepSeek-Coder-V2-Lite at 0.7.2 logs
the offloaded model's 0.80 GiB exactly).

Only DeepSeek-V2/V3 (ModelConfig.is_deepseek_mla: model_type deepseek_v2/deepseek_v3 with kv_lora_rank) take the
backend, on the V0 engine (0.7.x's V1 had no MLA backend). 0.7.1-0.7.2's use_mla turns MLA off for a checkpoint
quantized other than fp8 / compressed-tensors (no absorbed copies; the per-head cache of stage_budgets.
pre_mla_head_size); 0.7.3 keeps MLA for any method and dequantizes the others through quant_method.apply(eye), so
their absorbed matrices and the kv_b_proj copy are in the model dtype (is_fp8 is false for packed integer weights).
"""

from __future__ import annotations

from recommender.memory.engine import VllmVersion
from recommender.model.spec import ModelSpec, QuantSpec
from recommender.units import cdiv

ABSORPTION_FROM = VllmVersion(0, 7, 1)  # MLA backend with VLLM_MLA_PERFORM_MATRIX_ABSORPTION (vllm#12601)
ABSORPTION_UNTIL = VllmVersion(0, 8, 0)  # mla/common.py: no absorbed copies
DEQUANT_IN_MODEL_DTYPE_FROM = VllmVersion(0, 7, 3)  # get_and_maybe_dequant_weights via quant_method.apply(eye)
FP32_BYTES = 4
MLA_MODEL_TYPES = ("deepseek_v2", "deepseek_v3")


def _fp8_bytes(quant: QuantSpec, out_rows: int, in_cols: int) -> int:
    """A re-quantized FP8 [out, in] matrix with its float32 scales (the checkpoint's group shape)."""
    if quant.block:
        return out_rows * in_cols + cdiv(out_rows, quant.block[0]) * cdiv(in_cols, quant.block[1]) * FP32_BYTES
    return out_rows * in_cols + FP32_BYTES  # per-tensor (per-channel scales would add a row of floats: noise)


def absorbed_layer_bytes(
    model: ModelSpec, quant: QuantSpec | None, *, tp: int, version: VllmVersion, dtype_bytes: int, v0: bool
) -> int:
    """Bytes one TP rank holds per MLA layer beyond the loaded weights (0 outside 0.7.1-0.7.3's V0 MLA backend);
    `quant`: the weights' quantization as vLLM resolved it (the checkpoint's, or --quantization fp8 online)."""
    m = model.mla
    if m is None or m.per_head_cache or model.model_type not in MLA_MODEL_TYPES or not v0:
        return 0
    if not ABSORPTION_FROM <= version < ABSORPTION_UNTIL:
        return 0
    fp8 = quant is not None and quant.method == "fp8"
    if quant is not None and not fp8 and version < DEQUANT_IN_MODEL_DTYPE_FROM:
        return 0  # use_mla off for this quantization (0.7.1-0.7.2)
    heads = max(1, model.num_heads // tp)
    lq = m.q_lora_rank or model.hidden_size
    lat = m.kv_lora_rank
    w_qr = lq * heads * m.qk_rope_head_dim * dtype_bytes
    if quant is not None and fp8:
        q_uk = _fp8_bytes(quant, heads * lat, lq)  # W_Q_UK.T: [N*L, Lq]
        uv_o = _fp8_bytes(quant, model.hidden_size, heads * lat)  # W_UV_O.T: [H, N*L]
        deq = FP32_BYTES if version < DEQUANT_IN_MODEL_DTYPE_FROM else dtype_bytes
        kv_b = lat * heads * (m.qk_nope_head_dim + m.v_head_dim) * deq
    else:
        q_uk = lq * heads * lat * dtype_bytes
        uv_o = heads * lat * model.hidden_size * dtype_bytes
        # W_UK / W_UV: views of kv_b_proj.weight for 16-bit weights, of its dequantized copy otherwise (0.7.3)
        kv_b = 0 if quant is None else lat * heads * (m.qk_nope_head_dim + m.v_head_dim) * dtype_bytes
    return w_qr + q_uk + uv_o + kv_b


def absorbed_bytes_per_layer(
    model: ModelSpec, quant: QuantSpec | None, *, tp: int, version: VllmVersion, dtype_bytes: int, v0: bool
) -> tuple[int, ...]:
    """absorbed_layer_bytes for every MLA layer of the model, 0 for the others (indexed by layer)."""
    per = absorbed_layer_bytes(model, quant, tp=tp, version=version, dtype_bytes=dtype_bytes, v0=v0)
    if not per:
        return ()
    return tuple(per if kind == "mla" else 0 for kind in model.layer_kinds)
