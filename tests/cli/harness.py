"""Run the real ``picode`` executable as a child process in an isolated home and project.

``PICODE_HOME`` keeps config and sessions inside the test's temporary folder, the project is
the child's cwd, and provider keys or base URLs of the surrounding shell never leak in.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PICODE = [sys.executable, "-m", "picode"]

#: Variables that would point the child at a real provider or change its behaviour.
SCRUBBED_PREFIXES = (
    "ANTHROPIC_",
    "OPENAI_",
    "GEMINI_",
    "GOOGLE_",
    "PICODE_",
    # The preset providers' keys, base URLs and logins (providers.json).
    "OPENROUTER_",
    "GROQ_",
    "CEREBRAS_",
    "XAI_",
    "DEEPSEEK_",
    "MISTRAL_",
    "TOGETHER_",
    "FIREWORKS_",
    "OLLAMA_",
    "LMSTUDIO_",
    "LLAMACPP_",
    "VLLM_",
    "AZURE_OPENAI_",
    "AWS_",
    "CLOUD_ML_",
)

#: Generous: a loaded two-core machine imports an SDK in seconds, not milliseconds.
RUN_TIMEOUT = 60.0

#: Retry back-off short enough for tests; the rest of the policy as shipped.
FAST_RETRY = {"base_delay_ms": 10, "max_delay_ms": 2000}


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


class PicodeEnv:
    """Children run in their own session: no controlling terminal (nothing can stop to ask
    on it) and no share in a Ctrl+C meant for pytest."""

    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.project = root / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(SCRUBBED_PREFIXES)}
        # Compiled bytecode may be cached: every child pays the SDK import otherwise twice.
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["PICODE_HOME"] = str(self.home)
        # A home of its own: a developer's ~/.agents and ~/.claude skills stay out.
        self.user_home = root / "user-home"
        self.user_home.mkdir()
        self.env["HOME"] = str(self.user_home)
        self.env["NO_COLOR"] = "1"
        self.retry: dict[str, int] = dict(FAST_RETRY)
        self.config_parts: list[str] = []
        self._write_config()

    # --- setup -------------------------------------------------------------------------

    def add_config(self, text: str) -> None:
        self.config_parts.append(text)
        self._write_config()

    def set_retry(self, **settings: int) -> None:
        self.retry.update(settings)
        self._write_config()

    def _write_config(self) -> None:
        folder = self.home / "config"
        folder.mkdir(exist_ok=True)
        retry = "\n".join(f"{key} = {value}" for key, value in self.retry.items())
        text = "\n".join(["[retry]", retry, *self.config_parts])
        (folder / "config.toml").write_text(text + "\n", encoding="utf-8")

    # --- running -----------------------------------------------------------------------

    def run(
        self,
        *args: str,
        stdin: str = "",
        timeout: float = RUN_TIMEOUT,
        env: dict[str, str] | None = None,
    ) -> Result:
        done = subprocess.run(
            [*PICODE, *args],
            cwd=self.project,
            env={**self.env, **(env or {})},
            input=stdin,
            capture_output=True,
            start_new_session=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
        )
        return Result(done.returncode, done.stdout, done.stderr)

    def start(self, *args: str, env: dict[str, str] | None = None) -> Child:
        process = subprocess.Popen(
            [*PICODE, *args],
            cwd=self.project,
            env={**self.env, **(env or {})},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            start_new_session=True,
        )
        return Child(process)

    # --- inspecting --------------------------------------------------------------------

    def session_files(self) -> list[Path]:
        return sorted((self.home / "data" / "sessions").rglob("*.jsonl"))

    def session_entries(self) -> list[dict[str, Any]]:
        files = self.session_files()
        assert len(files) == 1, f"expected one session file, found {files}"
        return [json.loads(line) for line in files[0].read_text("utf-8").splitlines()]


class Child:
    """A running picode whose stdout lines are collected by a thread, to wait on with a
    timeout instead of blocking on a pipe."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.stderr_text = ""
        threading.Thread(target=self._pump, daemon=True).start()
        self._stderr_reader = threading.Thread(target=self._pump_stderr, daemon=True)
        self._stderr_reader.start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr_text = self.process.stderr.read()

    def send(self, command: dict[str, Any] | str) -> None:
        assert self.process.stdin is not None
        line = command if isinstance(command, str) else json.dumps(command)
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.flush()
        self.process.stdin.buffer.write(data)
        self.process.stdin.buffer.flush()

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    def expect(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = RUN_TIMEOUT
    ) -> dict[str, Any]:
        """The next JSON line matching ``predicate`` (lines before it stay in ``seen``)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(0.0, remaining))
            except queue.Empty:
                raise AssertionError(f"timed out; output so far: {self.seen[-20:]}") from None
            if line is None:
                raise AssertionError(f"picode exited; output: {self.seen[-20:]}")
            self.seen.append(line)
            payload = json.loads(line)
            if predicate(payload):
                return payload

    def response(self, command: str, timeout: float = RUN_TIMEOUT) -> dict[str, Any]:
        return self.expect(
            lambda p: p.get("type") == "response" and p.get("command") == command, timeout
        )

    def event(self, event_type: str, timeout: float = RUN_TIMEOUT) -> dict[str, Any]:
        return self.expect(lambda p: p.get("type") == event_type, timeout)

    def interrupt(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def kill(self) -> None:
        self.process.kill()

    def wait(self, timeout: float = RUN_TIMEOUT) -> int:
        code = self.process.wait(timeout)
        self._stderr_reader.join(timeout)
        return code

    def stderr(self) -> str:
        return self.stderr_text

    def stop(self) -> None:
        """Last-resort clean-up for a failed test: never leave a child behind."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
