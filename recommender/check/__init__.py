"""`vllm-plan check`: predict whether existing deployments start and meet their SLO (CI gate)."""
