"""How a thinking level is sent to one model, and what the user is told it became.

picode's levels (off … xhigh) are the same for every model; each model's API takes something
else: Anthropic a token budget or adaptive thinking with an effort, OpenAI an effort from a
per-model set, Gemini 3 a thinking level, Gemini 2.5 a budget. The registry says which, per
model (``thinking`` in ai/model_list/, written by ``.ci/refresh-models``); ``thinking_request``
turns a level into the request and a label that never claims more than what is sent: "off" on
a model that always thinks becomes "low (the lowest this model allows)".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # Types only: this module is on the way to the first frame, where typing's Literal and
    # unions cost more than all the rest of it.
    from typing import Literal, TypeAlias

    from picode.ai.models import Model, ThinkingLevel

    ThinkingKind: TypeAlias = Literal["adaptive", "budget", "effort", "level"]
    #: True: off is the request without a thinking setting; "disable": off must be said
    #: (the model thinks by default); False: the model cannot stop thinking.
    OffRule: TypeAlias = bool | Literal["disable"]

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


class ThinkingControl:
    """One model's way of taking a thinking setting (``thinking`` in ai/model_list/).

    Plain classes, not dataclasses or NamedTuples, here: this module is on the way to the
    first frame (the footer says the level), and both of those compile code to define."""

    __slots__ = ("display", "kind", "levels", "min_budget", "off")

    def __init__(
        self,
        kind: ThinkingKind,
        levels: tuple[str, ...] = (),
        off: OffRule = True,
        display: str | None = None,
        min_budget: int | None = None,
    ) -> None:
        self.kind = kind
        self.levels = levels
        self.off = off
        #: Adaptive thinking: how the thinking text comes back ("summarized" streams it).
        self.display = display
        #: Budget thinking: the smallest budget, when the model cannot turn thinking off.
        self.min_budget = min_budget

    def _key(self) -> tuple[object, ...]:
        return (self.kind, self.levels, self.off, self.display, self.min_budget)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ThinkingControl) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "ThinkingControl({})".format(", ".join(map(repr, self._key())))

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


class ThinkingRequest:
    """A level as one model's API takes it."""

    __slots__ = ("asked", "budget", "disabled", "display", "note", "omitted", "value")

    def __init__(
        self,
        asked: str,
        *,
        omitted: bool = False,
        disabled: bool = False,
        value: str | None = None,
        budget: int | None = None,
        display: str | None = None,
        note: str | None = None,
    ) -> None:
        self.asked = asked
        #: Nothing about thinking goes into the request (the API's own default applies).
        self.omitted = omitted
        #: Thinking is switched off explicitly.
        self.disabled = disabled
        #: The effort or thinking level sent (adaptive, effort and level kinds).
        self.value = value
        self.budget = budget
        self.display = display
        #: Why what is sent differs from what was asked.
        self.note = note

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
