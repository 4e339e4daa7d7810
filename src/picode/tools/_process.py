"""Process-group control for commands: signal, check and kill a whole group."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

#: How long a group gets to exit after SIGTERM before SIGKILL.
TERM_GRACE_SECONDS = 0.2
_POLL_SECONDS = 0.01


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to the group; False when the group no longer exists."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Only possible if the id was reused by someone else's group: not ours to kill.
        return False
    return True


def group_alive(pgid: int) -> bool:
    """True while some member of the group is still running (zombies count as gone).

    Orphaned members are reaped by init, which in some containers never happens; a zombie
    holds no resources worth waiting for, so on Linux the members' states are checked.
    """
    if not signal_group(pgid, 0):
        return False
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            with open(os.path.join(entry.path, "stat"), "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


async def terminate_group(pgid: int, grace: float = TERM_GRACE_SECONDS) -> bool:
    """SIGTERM the group, SIGKILL it if anything survives ``grace`` seconds.

    Returns True when the group still had live members.
    """
    if not group_alive(pgid):
        return False
    signal_group(pgid, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        await asyncio.sleep(_POLL_SECONDS)
        if not group_alive(pgid):
            return True
    signal_group(pgid, signal.SIGKILL)
    return True
