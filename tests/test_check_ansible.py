"""Ansible playbooks: the shell / command tasks of their plays, `{{ var }}` rendered from the play's literal vars, read
as a script's command lines (check/ansible_playbooks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recommender.check.ansible_playbooks import render
from recommender.check.load import NotADeployment, read_text
from recommender.serve_args import parse_serve_argv

from .conftest import invoke

# Ladam2003/vllm-ray-cluster ansible/playbooks/4_run_model.yml (2026), shortened
PLAYBOOK = """---
- name: Start vLLM Model Server on BASTION (ray-head)
  hosts: bastion
  become: yes
  vars_files:
    - all.yml
  vars:
    model_name: "{{ model_id | regex_replace('.*/', '') }}"
    model_dir: "{{ model_dir_base }}/{{ model_name }}"
    api_port: 8000
    ray_head_container: "ray-head"
    tensor_parallel: "{{ groups['workers'] | length + 1 }}"
  tasks:
    - name: Stop any old running model server
      shell: docker exec {{ ray_head_container }} pkill -f vllm.entrypoints.openai.api_server || true
    - name: Start vLLM server with logging
      shell: |
        docker exec {{ ray_head_container }} bash -lc " nohup python3 -m vllm.entrypoints.openai.api_server \\
        --model {{ model_dir }} \\
        --tensor-parallel-size {{ tensor_parallel }} \\
        --port {{ api_port }} \\
        --gpu-memory-utilization 0.82 \\
        --max-model-len 2048 \\
        > /var/log/vllm.log 2>&1 & "
      args:
        executable: /bin/bash
"""


def test_a_playbooks_shell_task_is_read_as_a_command_line() -> None:
    """The task's `docker exec ... bash -lc "python3 -m vllm..."` is a server: literal vars rendered (the port),
    a filter, an inventory group or a var of a file not read (vars_files) unresolved by name."""
    (found,) = read_text(PLAYBOOK, "4_run_model.yml")
    assert found.resource == "task/Start vLLM server with logging"
    cmd = parse_serve_argv(list(found.argv), serve=found.serve_form)
    assert cmd.values["max_model_len"] == 2048 and cmd.values["gpu_memory_utilization"] == 0.82
    assert set(found.unresolved) >= {"$model_dir", "$tensor_parallel"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("--port {{ port }}", "--port 8000"),
        ("{{ dir }}/m", "/models/m"),  # a var whose value is another var's
        ("{{ model_id | lower }}", "${model_id}"),  # a filter: not rendered here
        ("{{ missing }}", "${missing}"),
    ],
)
def test_jinja_expressions_render_from_literal_vars_only(text: str, expected: str) -> None:
    assert render(text, {"port": 8000, "base": "/models", "dir": "{{ base }}"}) == expected


def test_a_playbook_that_starts_no_vllm_says_so(tmp_path: Path) -> None:
    plain = "- hosts: all\n  tasks:\n    - name: ping\n      shell: echo hello\n"
    with pytest.raises(NotADeployment, match="an Ansible playbook whose tasks start no vLLM server"):
        read_text(plain, "site.yml")
    path = tmp_path / "site.yml"
    path.write_text(plain)
    result = invoke(["check", str(path)], exit_code=2)
    assert "Traceback" not in result.output


def test_a_hostile_play_s_variables_render_within_a_budget() -> None:
    """Variables that each name the next eight times (v0 -> 8 x v1 -> ... -> v12) would take 8^10 substitutions within
    the nesting depth; the rendering stops at its reference budget and leaves the reference unresolved, without taking them."""
    variables = {f"v{i}": f"{{{{ v{i + 1} }}}}" * 8 for i in range(12)} | {"v12": "x"}
    assert render("vllm serve {{ v0 }}", variables) == "vllm serve ${v0}"
