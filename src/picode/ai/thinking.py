"""How a thinking level is sent to one model, and what the user is told it became.

picode's levels (off … xhigh) are the same for every model; each model's API takes something
else: Anthropic a token budget or adaptive thinking with an effort, OpenAI an effort from a
per-model set, Gemini 3 a thinking level, Gemini 2.5 a budget. The registry says which, per
model (``thinking`` in models.json, written by ``.ci/refresh-models``); ``thinking_request``
turns a level into the request and a label that never claims more than what is sent: "off" on
a model that always thinks becomes "low (the lowest this model allows)".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from picode.ai.models import Model, ThinkingLevel

ThinkingKind = Literal["adaptive", "budget", "effort", "level"]
#: True: off is the request without a thinking setting; "disable": off must be said
#: (the model thinks by default); False: the model cannot stop thinking.
OffRule = bool | Literal["disable"]

# One scale for picode's levels and every API's values, to find the nearest one.
_SCALE = {"none": 0, "off": 0, "minimal": 1, "low": 2, "medium": 3, "high": 4, "xhigh": 5, "max": 6}
_ANTHROPIC_BUDGETS = {
    "minimal": 1024,
    "low": 4096,
    "medium": 10_000,
    "high": 32_000,
    "xhigh": 60_000,
}
_GOOGLE_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24_576, "xhigh": 32_768}
LOWEST = "the lowest this model allows"
HIGHEST = "the highest this model allows"
NEAREST = "the nearest this model allows"


@dataclass(slots=True, frozen=True)
class ThinkingControl:
    """One model's way of taking a thinking setting (models.json ``thinking``)."""

    kind: ThinkingKind
    levels: tuple[str, ...] = ()
    off: OffRule = True
    #: Adaptive thinking: how the thinking text comes back ("summarized" streams it).
    display: str | None = None
    #: Budget thinking: the smallest budget, when the model cannot turn thinking off.
    min_budget: int | None = None

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> ThinkingControl:
        off = spec.get("off", True)
        return cls(
            kind=spec["kind"],
            levels=tuple(spec.get("levels", ())),
            off=off if off in (True, False, "disable") else True,
            display=spec.get("display"),
            min_budget=spec.get("min"),
        )


def default_control(api: str) -> ThinkingControl:
    """For a model the registry does not know but is told thinks (config, unknown ids)."""
    if api.startswith("openai"):
        return ThinkingControl("effort", ("low", "medium", "high"))
    return ThinkingControl("budget")


@dataclass(slots=True, frozen=True)
class ThinkingRequest:
    """A level as one model's API takes it."""

    asked: str
    #: Nothing about thinking goes into the request (the API's own default applies).
    omitted: bool = False
    #: Thinking is switched off explicitly.
    disabled: bool = False
    #: The effort or thinking level sent (adaptive, effort and level kinds).
    value: str | None = None
    budget: int | None = None
    display: str | None = None
    #: Why what is sent differs from what was asked.
    note: str | None = None

    @property
    def thinks(self) -> bool:
        return not (self.omitted or self.disabled) and self.value != "none"

    @property
    def label(self) -> str:
        """What the footer and /thinking show: the level actually requested."""
        if not self.thinks:
            return "off"
        shown = self.value or self.asked
        return f"{shown} ({self.note})" if self.note else shown


def runs_at(model: Model, level: ThinkingLevel) -> tuple[ThinkingLevel, str | None]:
    """The level ``model`` runs at: ``off`` for a model that does not think, with the one
    sentence that says so when another level was asked for."""
    if model.reasoning or level == "off":
        return level, None
    return "off", f"{model.ref} does not think: its thinking level is off."


def control_of(model: Model) -> ThinkingControl | None:
    if not model.reasoning:
        return None
    return model.thinking or default_control(model.api)


def thinking_request(
    model: Model, level: ThinkingLevel | str | None, max_tokens: int | None = None
) -> ThinkingRequest:
    """``level`` as ``model`` takes it; ``max_tokens`` bounds Anthropic budgets."""
    asked = level if level in _SCALE and level != "none" else "off"
    control = control_of(model)
    if control is None:
        return ThinkingRequest(asked, omitted=True)
    if control.kind == "budget":
        return _budget(model, control, asked, max_tokens)
    if asked == "off":
        if control.kind == "effort" and "none" in control.levels:
            return ThinkingRequest(asked, value="none")
        if control.off is True:
            return ThinkingRequest(asked, omitted=True)
        if control.off == "disable":
            return ThinkingRequest(asked, disabled=True)
    choices = [value for value in control.levels if value != "none"]
    if not choices:
        return ThinkingRequest(asked, omitted=True)
    value, note = _nearest(asked, choices)
    return ThinkingRequest(asked, value=value, display=control.display, note=note)


def _nearest(asked: str, choices: list[str]) -> tuple[str, str | None]:
    if asked in choices:
        return asked, None
    target = _SCALE[asked]
    ranked = sorted(choices, key=lambda v: (abs(_SCALE[v] - target), -_SCALE[v]))
    value = ranked[0]
    if all(_SCALE[v] > target for v in choices):
        return value, LOWEST
    if all(_SCALE[v] < target for v in choices):
        return value, HIGHEST
    return value, NEAREST


def _budget(
    model: Model, control: ThinkingControl, asked: str, max_tokens: int | None
) -> ThinkingRequest:
    google = model.api == "google-generative-ai"
    if asked == "off":
        if control.off is True:
            return ThinkingRequest(asked, omitted=True)
        if control.off == "disable":
            return ThinkingRequest(asked, disabled=True, budget=0)
        smallest = control.min_budget or (128 if google else 1024)
        return ThinkingRequest(asked, budget=smallest, value=f"{smallest} tokens", note=LOWEST)
    budget = (_GOOGLE_BUDGETS if google else _ANTHROPIC_BUDGETS)[asked]
    if control.min_budget:
        budget = max(budget, control.min_budget)
    if model.api == "anthropic-messages" and max_tokens is not None:
        # Anthropic requires budget < max_tokens and at least 1024.
        budget = max(1024, min(budget, max_tokens - 1024))
    return ThinkingRequest(asked, budget=budget)
