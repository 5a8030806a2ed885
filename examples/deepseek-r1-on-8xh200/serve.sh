#!/bin/sh
# deepseek-ai/DeepSeek-R1 served by vLLM 0.33.0: planned by vllm-plan 0.1.0.
# Predicted: 686,272 KV-cache tokens, room for 20.94 requests of 32,768 tokens; vLLM runs at most 16 at once (--max-num-seqs).
# vllm-plan.io/tool-version: 0.1.0
# vllm-plan.io/vllm-version: 0.33.0
# vllm-plan.io/gpu: h200
# vllm-plan.io/kv-cache-tokens: 686272
# vllm-plan.io/max-concurrency: 20.94
# vllm-plan.io/max-model-len: 32768
# vllm-plan.io/target-concurrency: 16
# vllm-plan.io/target-context: 32768
# vllm-plan.io/replicas: 1
exec vllm serve deepseek-ai/DeepSeek-R1 --tensor-parallel-size 8 --enable-expert-parallel --gpu-memory-utilization 0.92 --max-model-len 32768 --max-num-seqs 16 --max-num-batched-tokens 8192 --host 0.0.0.0 --port 8000
