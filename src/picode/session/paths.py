"""Where picode keeps its files (docs/sessions.md)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "picode"
HOME_ENV = "PICODE_HOME"


@dataclass(frozen=True, slots=True)
class Paths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path

    @property
    def sessions_dir(self) -> Path:
        return self.data_dir / "sessions"

    @property
    def exports_dir(self) -> Path:
        """Where ``/export`` writes when no folder is given (never the project)."""
        return self.data_dir / "exports"

    @property
    def pasted_dir(self) -> Path:
        """Where an image pasted from the clipboard (``ctrl+v``) is kept to be attached."""
        return self.data_dir / "pasted"

    @property
    def auth_file(self) -> Path:
        return self.config_dir / "auth.json"

    @property
    def user_config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def themes_dir(self) -> Path:
        return self.config_dir / "themes"

    @property
    def extensions_dir(self) -> Path:
        return self.config_dir / "extensions"

    @property
    def rules_dir(self) -> Path:
        return self.config_dir / "rules"

    @property
    def keymap_file(self) -> Path:
        return self.config_dir / "keymap.toml"


def resolve_paths(env: Mapping[str, str] | None = None) -> Paths:
    """The platform's per-user folders, or all three under ``$PICODE_HOME`` when it is set."""
    environ = os.environ if env is None else env
    home = environ.get(HOME_ENV, "").strip()
    if home:
        root = Path(home).expanduser().absolute()
        return Paths(root / "config", root / "data", root / "cache")
    # Imported here so that `picode --version` does not pay for it.
    import platformdirs

    return Paths(
        Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
    )


def project_dir(cwd: Path) -> Path:
    return cwd / ".picode"
