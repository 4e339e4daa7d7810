"""Settings: reading config.toml files, checking them, writing one key back (docs/configuration.md).

The face of ``picode.session.config``: front ends import from here, never from its modules.
Each name is imported on first use, so the face costs nothing on the way to the first frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from picode.session._faces import lazy_names

if TYPE_CHECKING:
    from picode.session.config.notifications import NotificationSettings
    from picode.session.config.settings import CONFIG_FILE_NAME, Settings, load_config
    from picode.session.config.write import ConfigWriteError, set_user_setting

_WHERE = {
    "CONFIG_FILE_NAME": "settings",
    "ConfigWriteError": "write",
    "NotificationSettings": "notifications",
    "Settings": "settings",
    "load_config": "settings",
    "set_user_setting": "write",
}

__all__ = [
    "CONFIG_FILE_NAME",
    "ConfigWriteError",
    "NotificationSettings",
    "Settings",
    "load_config",
    "set_user_setting",
]

__getattr__ = lazy_names(__name__, _WHERE)
