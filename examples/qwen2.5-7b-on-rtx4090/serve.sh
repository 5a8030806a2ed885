#!/bin/sh
# RedHatAI/Qwen2.5-7B-Instruct-FP8-dynamic served by vLLM 0.33.0: planned by vllm-plan 0.1.0.
# Predicted: 495,360 KV-cache tokens, room for 60.47 requests of 8,192 tokens; vLLM runs at most 60 at once (--max-num-seqs).
# vllm-plan.io/tool-version: 0.1.0
# vllm-plan.io/vllm-version: 0.33.0
# vllm-plan.io/gpu: rtx4090
# vllm-plan.io/kv-cache-tokens: 495360
# vllm-plan.io/max-concurrency: 60.47
# vllm-plan.io/max-model-len: 8192
# vllm-plan.io/target-concurrency: 60
# vllm-plan.io/target-context: 8192
# vllm-plan.io/replicas: 1
exec vllm serve RedHatAI/Qwen2.5-7B-Instruct-FP8-dynamic --kv-cache-dtype fp8 --gpu-memory-utilization 0.92 --max-model-len 8192 --max-num-seqs 60 --max-num-batched-tokens 2048 --host 0.0.0.0 --port 8000
