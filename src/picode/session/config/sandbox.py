"""``[sandbox]`` in config.toml, and the rule that a project may only tighten it.

A project's ``.picode/config.toml`` (trusted or not) may switch the sandbox on, take the
network away, narrow the hosts or sandbox ``!cmd`` too; it may never switch the sandbox
off, allow the network, add hosts or add writable paths. What would loosen is dropped
with a warning before the files are merged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SECTION = "sandbox"


class SandboxSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: bash runs confined (docs/security.md, "Sandbox").
    enabled: bool = True
    #: Sandboxed commands may use the network.
    network: bool = False
    #: Hosts reachable with ``network = false``, through picode's proxy (Linux).
    allow_hosts: list[str] = Field(default_factory=list)
    #: Extra writable paths besides the project and temp folders (``~`` expands).
    writable: list[str] = Field(default_factory=list)
    #: ``!cmd`` typed by the user runs in the sandbox too.
    user_commands: bool = False


#: key: (its safer value, the default, why a project may not set the other one).
_SWITCHES: dict[str, tuple[bool, bool, str]] = {
    "enabled": (True, True, "a project may not switch the sandbox off"),
    "network": (False, False, "a project may not give commands the network"),
    "user_commands": (True, False, "a project may not take your commands out of the sandbox"),
}


def clamp_project(user: Any, project: dict[str, Any]) -> list[tuple[str, str]]:
    """Remove from ``project`` (a config file's data) the ``[sandbox]`` keys that would
    loosen ``user``'s table; returns (key, why) for each one removed."""
    table = project.get(SECTION)
    if table is None:
        return []
    if not isinstance(table, dict):
        del project[SECTION]
        return [(SECTION, "is not a table")]
    mine = user if isinstance(user, dict) else {}
    dropped: list[tuple[str, str]] = []

    def drop(key: str, why: str) -> None:
        del table[key]
        dropped.append((f"{SECTION}.{key}", why))

    for key, (safer, default, why) in _SWITCHES.items():
        if key in table and table[key] != safer and table[key] != mine.get(key, default):
            drop(key, why)
    if "writable" in table:
        drop("writable", "a project may not add writable paths")
    if "allow_hosts" in table and mine.get("network", False) is not True:
        allowed = mine.get("allow_hosts")
        hosts = table["allow_hosts"]
        if not isinstance(hosts, list) or not isinstance(allowed, list):
            drop("allow_hosts", "a project may not allow hosts you did not")
        else:
            kept = [host for host in hosts if host in allowed]
            if kept != hosts:
                table["allow_hosts"] = kept
                dropped.append((f"{SECTION}.allow_hosts", "hosts you did not allow were left out"))
    return dropped
