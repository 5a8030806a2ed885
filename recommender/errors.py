"""One exception hierarchy for the whole tool; `recommender.cli` maps it to exit codes in one place.

Exit codes (also in the README and `vllm-plan --help`):
    0  success (for `explain`: the numbers were computed, whether or not the model fits)
    1  a check failed (`vllm-plan check`)
    2  bad input: unknown GPU or model, malformed config, invalid flag value
    3  no feasible plan for the requested target
    4  the model could not be fetched (hub unreachable, gated, offline and not cached); for `check`: nothing
       failed but some server could not be evaluated
"""

from __future__ import annotations


class PlanError(Exception):
    """Base class of every error the tool reports to a user as one line."""

    exit_code = 2


class InputError(PlanError):
    """The user gave something the tool cannot use (a value, a file, a name)."""

    exit_code = 2


class UnknownGpuError(InputError):
    """A GPU name that is not in the catalog."""


class UnknownModelError(InputError):
    """A model that is neither a local directory, a catalog entry nor reachable on the hub."""


class ModelConfigError(InputError):
    """A config.json that is unreadable, malformed or missing a key the memory model needs."""


class UnsupportedArchitectureError(InputError):
    """An architecture whose memory layout the tool does not model (yet)."""


class FlagError(InputError):
    """A vLLM flag value that vLLM itself would reject at argument parsing."""


class InfeasibleError(PlanError):
    """No configuration serves the requested target."""

    exit_code = 3


class FetchError(PlanError):
    """The hub could not be reached or refused access."""

    exit_code = 4


class NotEvaluatedError(PlanError):
    """check: inputs it could not evaluate and nothing that failed (a Helm chart where no helm is installed)."""

    exit_code = 4
