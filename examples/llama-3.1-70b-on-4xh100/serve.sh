#!/bin/sh
# nvidia/Llama-3.1-70B-Instruct-FP8 served by vLLM 0.33.0: planned by vllm-plan 0.1.0.
# Predicted: 1,389,552 KV-cache tokens, room for 42.41 requests of 32,768 tokens; vLLM runs at most 32 at once (--max-num-seqs).
# vllm-plan.io/tool-version: 0.1.0
# vllm-plan.io/vllm-version: 0.33.0
# vllm-plan.io/gpu: h100-sxm
# vllm-plan.io/kv-cache-tokens: 1389552
# vllm-plan.io/max-concurrency: 42.41
# vllm-plan.io/max-model-len: 32768
# vllm-plan.io/target-concurrency: 32
# vllm-plan.io/target-context: 32768
# vllm-plan.io/replicas: 1
exec vllm serve nvidia/Llama-3.1-70B-Instruct-FP8 --tensor-parallel-size 4 --gpu-memory-utilization 0.92 --max-model-len 32768 --max-num-seqs 32 --max-num-batched-tokens 8192 --host 0.0.0.0 --port 8000
