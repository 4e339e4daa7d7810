"""``[notifications]`` in config.toml: how the TUI tells a person who looked away that it
is done or waiting (docs/tui.md, "Notifications")."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

NotificationMethod: TypeAlias = Literal["auto", "bell", "osc9", "osc777", "off"]
NotificationEvent: TypeAlias = Literal["done", "approval"]


def _every_event() -> list[NotificationEvent]:
    return ["done", "approval"]


class NotificationSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: "auto" picks from the terminal (TERM_PROGRAM, TERM...); "off" never notifies.
    method: NotificationMethod = "auto"
    #: "done": a run ended; "approval": a call waits for an answer.
    when: list[NotificationEvent] = Field(default_factory=_every_event)
