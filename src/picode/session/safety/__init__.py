"""Trust, approval, secrets and private files: what keeps a session safe (docs/security.md).

The face of ``picode.session.safety``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.safety.approval import (
        ApprovalDecision,
        ApprovalPolicy,
        ApprovalRequest,
        Approver,
    )
    from picode.session.safety.plan_mode import (
        MODE_CYCLE,
        SESSION_MODES,
        PlanApprover,
        PlanDecision,
        PlanRequest,
        SessionMode,
    )
    from picode.session.safety.saved_approvals import SavedApprovalsError
    from picode.session.safety.secrets import model_command_environment, unset_script
    from picode.session.safety.trust import ProjectTrust, assess_project, record_decision

_WHERE = {
    "ApprovalDecision": "approval",
    "ApprovalPolicy": "approval",
    "ApprovalRequest": "approval",
    "Approver": "approval",
    "MODE_CYCLE": "plan_mode",
    "PlanApprover": "plan_mode",
    "PlanDecision": "plan_mode",
    "PlanRequest": "plan_mode",
    "ProjectTrust": "trust",
    "SESSION_MODES": "plan_mode",
    "SavedApprovalsError": "saved_approvals",
    "SessionMode": "plan_mode",
    "assess_project": "trust",
    "model_command_environment": "secrets",
    "record_decision": "trust",
    "unset_script": "secrets",
}

__all__ = [
    "MODE_CYCLE",
    "SESSION_MODES",
    "ApprovalDecision",
    "ApprovalPolicy",
    "ApprovalRequest",
    "Approver",
    "PlanApprover",
    "PlanDecision",
    "PlanRequest",
    "ProjectTrust",
    "SavedApprovalsError",
    "SessionMode",
    "assess_project",
    "model_command_environment",
    "record_decision",
    "unset_script",
]

__getattr__ = lazy_names(__name__, _WHERE)
