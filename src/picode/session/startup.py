"""What the launcher hands a front end at start-up: plain data, cheap to import before the
first frame (nothing here imports a session, an SDK or pydantic)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from picode.ai.models import Model
    from picode.session.options import SessionOptions


@dataclass(slots=True)
class Prepared:
    """The session options, decided after the first frame, and what to tell the person."""

    options: SessionOptions
    warnings: list[str]
    #: Problems that changed what picode does (a broken config file): shown as errors.
    errors: list[str] = field(default_factory=list)


@dataclass(slots=True)
class QuickView:
    """What the first frame shows, read without validating the configuration."""

    cwd: Path
    model: Model
    thinking: str
    theme: str | None
    config_dir: Path
    keymap_file: Path
    #: Where saved sessions live (the ``-r`` picker lists them).
    sessions_dir: Path
    #: Where ``/export`` writes by default.
    exports_dir: Path
    #: Where an image pasted with ctrl+v is kept to be attached.
    pasted_dir: Path
    #: ``-r`` without an id: the app shows the session picker first.
    pick_session: bool = False
