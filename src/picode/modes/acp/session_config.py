"""What an ACP client can switch per session: the mode (``session/set_mode``: an approval
policy or plan mode), and
the model and thinking level (``session/set_config_option``, categories model and
thought_level: this protocol version has no ``session/set_model``)."""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import (
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
)

from picode.ai.models import THINKING_LEVELS, UnknownModelError
from picode.ai.thinking import runs_at
from picode.session.safety import SessionMode as PicodeMode

#: picode's approval levels (``--approve``, ``approval`` in config.toml) and plan mode, as
#: ACP modes.
MODES: dict[PicodeMode, SessionMode] = {
    "never": SessionMode(
        id="never", name="Never ask", description="Tools run without asking first."
    ),
    "edits": SessionMode(
        id="edits",
        name="Ask before edits",
        description="write and edit wait for your approval; commands run at once.",
    ),
    "all": SessionMode(
        id="all",
        name="Ask before edits and commands",
        description="write, edit and bash wait for your approval.",
    ),
    "plan": SessionMode(
        id="plan",
        name="Plan",
        description="Only reading runs; the agent shows you a plan to approve before it "
        "changes anything.",
    ),
}
MODEL_OPTION = "model"
THINKING_OPTION = "thinking"


def mode_state(session: Any) -> SessionModeState:
    return SessionModeState(current_mode_id=session.mode, available_modes=list(MODES.values()))


def set_mode(session: Any, mode_id: str) -> None:
    if mode_id not in MODES:
        known = ", ".join(MODES)
        raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}; one of {known}"})
    session.set_mode(mode_id)


def config_options(session: Any) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    models = session.available_models()
    if all(model.ref != session.model.ref for model in models):
        models = [session.model, *models]
    options: list[SessionConfigOptionSelect | SessionConfigOptionBoolean] = [
        SessionConfigOptionSelect(
            id=MODEL_OPTION,
            name="Model",
            category="model",
            type="select",
            current_value=session.model.ref,
            options=[SessionConfigSelectOption(value=m.ref, name=m.name) for m in models],
        )
    ]
    levels = THINKING_LEVELS if session.model.reasoning else ("off",)
    options.append(
        SessionConfigOptionSelect(
            id=THINKING_OPTION,
            name="Thinking",
            category="thought_level",
            type="select",
            current_value=session.thinking,
            options=[SessionConfigSelectOption(value=level, name=level) for level in levels],
        )
    )
    return options


async def set_option(session: Any, config_id: str, value: Any) -> list[str]:
    """Apply a choice; the warnings it brings (a model without a key). Raises RequestError."""
    if not isinstance(value, str):
        raise RequestError.invalid_params({"message": f"{config_id} takes a value from its list"})
    if config_id == MODEL_OPTION:
        try:
            return list((await session.select_model(value)).warnings)
        except UnknownModelError as exc:
            raise RequestError.invalid_params({"message": str(exc)}) from None
    if config_id == THINKING_OPTION:
        if value not in THINKING_LEVELS:
            known = ", ".join(THINKING_LEVELS)
            raise RequestError.invalid_params(
                {"message": f"unknown thinking level {value!r}; one of {known}"}
            )
        _, note = runs_at(session.model, value)
        if note:
            raise RequestError.invalid_params({"message": note})
        session.set_thinking_level(value)
        return []
    known = f"{MODEL_OPTION}, {THINKING_OPTION}"
    raise RequestError.invalid_params({"message": f"unknown option {config_id!r}; one of {known}"})
