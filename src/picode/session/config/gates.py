"""What a project's ``config.toml`` may only do in a trusted folder (docs/security.md).

An untrusted ``.picode/config.toml`` may add context and tighten safety. It may not redirect
requests or name the variables keys are read from (``[providers.*]``, ``[mcp]``), choose
another default model or a higher thinking level (another bill), lower ``approval`` or weaken
one of the person's safeguards (``GUARDS``). Each such key is a ``Gate``: described in plain
words for the trust question, removed when the folder is not trusted (the person's value
applies).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from picode.ai.models import THINKING_LEVELS
from picode.session.config.lines import Loc
from picode.session.safety.approval import APPROVAL_POLICIES

#: From the least to the most careful; a project may only move to the right untrusted.
APPROVAL_ORDER = APPROVAL_POLICIES
#: What a safety key falls back to when its value is unusable and no lower layer has one.
FAIL_SAFE: dict[Loc, Any] = {("approval",): "all"}


@dataclass(frozen=True, slots=True)
class Gate:
    loc: Loc
    description: str
    #: What the fingerprint covers, so a changed value asks again.
    value: Any


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _switched_off(project: object, user: object) -> bool:
    return project is False and user is True


def _switched_on(project: object, user: object) -> bool:
    return project is True and user is False


def _more(project: object, user: object) -> bool:
    return _number(project) and _number(user) and project > user  # type: ignore[operator]


def _less(project: object, user: object) -> bool:
    return _number(project) and _number(user) and project < user  # type: ignore[operator]


def _longer_limit(project: object, user: object) -> bool:
    """A time limit where 0 means none: 0, or more than a limited ``user``."""
    if not (_number(project) and _number(user)) or user == 0:
        return False
    return project == 0 or project > user  # type: ignore[operator]


#: The person's safeguards a project may not weaken untrusted (docs/security.md): where the
#: key lives, when the project's value is weaker than the person's, and what it would do.
GUARDS: tuple[tuple[Loc, Callable[[object, object], bool], str], ...] = (
    (("checkpoints", "enabled"), _switched_off, "turns off the checkpoints /rewind and /undo use"),
    (("ttsr", "enabled"), _switched_off, "turns your stream rules off"),
    (("edit_guard", "enabled"), _switched_off, "turns the streaming edit guard off"),
    (
        ("bash", "default_timeout_s"),
        _longer_limit,
        "lets commands run longer than your bash time limit",
    ),
    (("retry", "enabled"), _switched_on, "turns retries on where you turned them off"),
    (("retry", "max_retries"), _more, "retries failed requests more often than you allow"),
    (("retry", "base_delay_ms"), _less, "retries failed requests sooner than you allow"),
    (("retry", "max_delay_ms"), _less, "retries failed requests sooner than you allow"),
    (("tools", "max_parallel"), _more, "runs more tool calls at once than you allow"),
    (("limits", "max_turns"), _longer_limit, "lets the agent go on further without you"),
    (("limits", "max_cost_usd"), _longer_limit, "lets the agent spend more without you"),
)


def looser_approval(project: object, user: str) -> bool:
    """Would ``project`` ask about fewer tool calls than ``user``? (Unknown values: no;
    validation reports them.)"""
    if project not in APPROVAL_ORDER or user not in APPROVAL_ORDER:
        return False
    return APPROVAL_ORDER.index(str(project)) < APPROVAL_ORDER.index(user)


def project_gates(
    project: Mapping[str, Any],
    *,
    user_approval: str,
    user_providers: set[str],
    builtin_providers: set[str],
    user_value: Callable[[Loc], object] = lambda loc: None,
) -> list[Gate]:
    """``user_value``: the person's own setting at a ``GUARDS`` location."""
    """The keys of the project layer ``project`` that need the folder's trust."""
    gates: list[Gate] = []
    providers = project.get("providers")
    if isinstance(providers, dict):
        for name, table in providers.items():
            gates.append(_provider_gate(str(name), table, builtin=name in builtin_providers))
    elif "providers" in project:
        gates.append(Gate(("providers",), "sets [providers]", providers))
    if "mcp" in project:
        gates.append(Gate(("mcp",), "starts MCP servers it names ([mcp])", project["mcp"]))
    if "hooks" in project:
        gates.append(Gate(("hooks",), _hooks_description(project["hooks"]), project["hooks"]))
    model = project.get("default_model")
    if isinstance(model, str) and model:
        gate = _model_gate(
            model, user_value(("default_model",)), builtin_providers | user_providers
        )
        if gate is not None:
            gates.append(gate)
    thinking, user_thinking = project.get("thinking"), user_value(("thinking",)) or "off"
    if _higher_thinking(thinking, user_thinking):
        what = f"raises thinking from {user_thinking!r} to {thinking!r} (costlier replies)"
        gates.append(Gate(("thinking",), what, thinking))
    approval = project.get("approval")
    if looser_approval(approval, user_approval):
        gates.append(
            Gate(
                ("approval",),
                f"lowers approval from {user_approval!r} to {approval!r}: "
                + _runs_unasked(str(approval)),
                approval,
            )
        )
    for loc, weaker, what in GUARDS:
        table = project.get(str(loc[0]))
        if not isinstance(table, Mapping) or loc[1] not in table:
            continue
        value, user = table[loc[1]], user_value(loc)
        if weaker(value, user):
            shown = f"[{loc[0]}] {loc[1]} = {json.dumps(value)}"
            gates.append(Gate(loc, f"{shown}: {what} (yours: {json.dumps(user)})", value))
    return gates


def _model_gate(model: str, user_model: object, known_providers: set[str]) -> Gate | None:
    """Another model is another bill: an untrusted project may not choose one, except the
    person's own."""
    if model == user_model:
        return None
    loc: Loc = ("default_model",)
    if model.partition("/")[0] not in known_providers:
        return Gate(
            loc,
            f"makes {model!r} the default model, served by a provider the project defines",
            model,
        )
    yours = repr(user_model) if isinstance(user_model, str) else "picode's choice"
    return Gate(loc, f"chooses the model {model!r} (yours: {yours})", model)


def _higher_thinking(project: object, user: object) -> bool:
    if project not in THINKING_LEVELS or user not in THINKING_LEVELS:
        return False
    return THINKING_LEVELS.index(project) > THINKING_LEVELS.index(user)  # type: ignore[arg-type]


def _hooks_description(hooks: object) -> str:
    """What the trust question says of ``[hooks]``: the events and the commands, spelled
    out (they are what would run)."""
    if not isinstance(hooks, Mapping):
        return "runs commands on picode's events ([hooks])"
    commands: list[str] = []
    for event, specs in hooks.items():
        for spec in specs if isinstance(specs, list) else [specs]:
            command = spec.get("command") if isinstance(spec, Mapping) else None
            if isinstance(command, str):
                commands.append(f"{event}: {command}")
    shown = "; ".join(commands[:3]) + (
        f" and {len(commands) - 3} more" if len(commands) > 3 else ""
    )
    return "runs commands on picode's events ([hooks]" + (f": {shown})" if shown else ")")


def _runs_unasked(approval: str) -> str:
    if approval == "never":
        return "bash, write and edit would run without asking you"
    return "bash would run without asking you"


def _provider_gate(name: str, table: object, *, builtin: bool) -> Gate:
    loc: Loc = ("providers", name)
    if not isinstance(table, dict):
        return Gate(loc, f"sets [providers.{name}]", table)
    parts: list[str] = []
    url = table.get("base_url")
    if url:
        parts.append(f"sends its requests to {url}")
    if table.get("api"):
        parts.append(f"speaks the {table['api']} API")
    if table.get("api_key_env"):
        parts.append(f"sends the environment variable {table['api_key_env']} as its API key")
    if table.get("api_key"):
        parts.append("uses an API key written in the project")
    headers = table.get("headers")
    if isinstance(headers, dict) and headers:
        parts.append("adds the headers " + ", ".join(str(key) for key in headers))
    models = table.get("models")
    if isinstance(models, list) and models:
        parts.append(f"adds {len(models)} model(s)")
    what = "; ".join(parts) or "changes its settings"
    if builtin:
        key_note = " (your key for it would go there)" if url else ""
        return Gate(loc, f"changes the built-in provider {name!r}: {what}{key_note}", table)
    return Gate(loc, f"adds the provider {name!r}: {what}", table)
