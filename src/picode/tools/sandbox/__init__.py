"""The sandbox around the model's commands (docs/security.md, "Sandbox")."""

from __future__ import annotations

from picode.tools.sandbox.policy import SandboxConfig
from picode.tools.sandbox.runtime import (
    EscalationChoice,
    Escalator,
    Mechanism,
    Sandbox,
    how_to_allow,
    probe_mechanism,
    unavailable_warning,
)

__all__ = [
    "EscalationChoice",
    "Escalator",
    "Mechanism",
    "Sandbox",
    "SandboxConfig",
    "how_to_allow",
    "probe_mechanism",
    "unavailable_warning",
]
