"""Esc through a real pseudo-terminal: a lone ESC byte written to the pty → the app's key
handler runs, for Textual's own Linux driver and for picode's (tui/driver.py), in turns.

    python bench/esc_pty.py [--runs N]

Each run starts a minimal Textual app in a pty (the same app for both drivers, so only the
input path differs), waits until it is ready, writes ``\\x1b`` and times until the app
reports the Escape key on a pipe. ESCDELAY is 10 ms as picode sets it.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import statistics
import subprocess
import sys
import time

APP = r"""
import os, sys
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver
from picode.tui.driver import PromptEscDriver
out = int(sys.argv[2])
class Probe(App):
    def get_driver_class(self):
        return PromptEscDriver if sys.argv[1] == "picode" else LinuxDriver
    def on_mount(self):
        os.write(out, b"R")
    def on_key(self, event):
        if event.key == "escape":
            os.write(out, b"E")
            self.exit()
Probe().run()
"""


def one(driver: str) -> float:
    read_end, write_end = os.pipe()
    master, slave = pty.openpty()
    env = {**os.environ, "ESCDELAY": "10", "TERM": "xterm-256color"}
    child = subprocess.Popen(
        [sys.executable, "-c", APP, driver, str(write_end)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        pass_fds=(write_end,),
        env=env,
    )
    os.close(slave)
    os.close(write_end)
    try:
        assert _wait_for(read_end, master, b"R", 30) is not None, "app did not start"
        time.sleep(0.3)  # let start-up queries settle
        start = time.perf_counter()
        os.write(master, b"\x1b")
        seen = _wait_for(read_end, master, b"E", 5)
        assert seen is not None, "no Escape seen"
        return (seen - start) * 1000
    finally:
        child.kill()
        child.wait()
        os.close(master)
        os.close(read_end)


def _wait_for(pipe: int, master: int, token: bytes, timeout: float) -> float | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([pipe, master], [], [], 0.05)
        if master in ready:
            try:
                os.read(master, 65536)  # drain the screen so the app never blocks
            except OSError:
                pass
        if pipe in ready and token in os.read(pipe, 16):
            return time.perf_counter()
    return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    results: dict[str, list[float]] = {"textual": [], "picode": []}
    for _ in range(runs):
        for driver in results:
            results[driver].append(one(driver))
    for driver, times in results.items():
        print(
            f"{driver:8s} Esc byte → key handled: median {statistics.median(times):6.1f} ms "
            f"(min {min(times):.1f}, max {max(times):.1f}, n={len(times)})"
        )


if __name__ == "__main__":
    main()
