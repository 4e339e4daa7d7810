"""The sandbox as bash uses it: which mechanism works here, the wrapped command line,
whether a failure looks like the sandbox's doing, and leaving it when the user agrees."""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from picode.tools.sandbox import linux, macos
from picode.tools.sandbox.policy import Layout, SandboxConfig, is_writable, layout
from picode.tools.sandbox.proxy import AllowlistProxy

#: The user's answer to "run this command outside the sandbox?" ("unasked": nobody to ask).
EscalationChoice = Literal["once", "network", "no", "unasked"]
#: Asks the user (the session's approval machinery); ``(command, what was blocked)``.
Escalator = Callable[[str, str], Awaitable[EscalationChoice]]


@dataclass(frozen=True, slots=True)
class Mechanism:
    kind: Literal["bwrap", "seatbelt"]
    program: str


@dataclass(frozen=True, slots=True)
class Probe:
    mechanism: Mechanism | None
    #: Why there is none (said once at start-up).
    problem: str | None


_probe_lock = threading.Lock()
_probed: Probe | None = None


def probe_mechanism(*, fresh: bool = False) -> Probe:
    """Which sandbox works on this machine; probed once per process and cached."""
    global _probed
    with _probe_lock:
        if _probed is None or fresh:
            _probed = _probe()
        return _probed


def _probe() -> Probe:
    if sys.platform == "darwin":
        program = macos.find_sandbox_exec()
        if program is None:
            return Probe(None, "sandbox-exec was not found")
        return Probe(Mechanism("seatbelt", program), None)
    if not sys.platform.startswith("linux"):
        return Probe(None, f"no sandbox is available on {sys.platform}")
    bwrap = linux.find_bwrap()
    if bwrap is None:
        return Probe(None, "bubblewrap (bwrap) was not found: reinstall picode with pip")
    problem = linux.probe(bwrap)
    if problem is not None:
        return Probe(None, f"{problem}; unprivileged user namespaces may be switched off")
    return Probe(Mechanism("bwrap", bwrap), None)


def unavailable_warning(config: SandboxConfig) -> str | None:
    """The start-up line when the sandbox is on in config but cannot work here, or cannot
    honour ``allow_hosts``."""
    if not config.enabled:
        return None
    found = probe_mechanism()
    if found.mechanism is not None:
        if config.allow_hosts and not config.network and found.mechanism.kind != "bwrap":
            return (
                "[sandbox] allow_hosts is not enforced on this system: sandboxed commands "
                "have no network (set network = true to allow all hosts)"
            )
        return None
    return (
        f"the sandbox is not available ({found.problem}); the model's commands run "
        "unconfined, under the approval policy only (see docs/security.md)"
    )


#: Messages a command prints when the sandbox stopped it, and what that means.
_SIGNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"read-only file system", re.I), "a write outside the writable folders"),
    (re.compile(r"network is unreachable", re.I), "network access"),
    (re.compile(r"could not resolve host", re.I), "network access"),
    (re.compile(r"temporary failure in name resolution", re.I), "network access"),
    (re.compile(r"name or service not known", re.I), "network access"),
    (re.compile(r"getaddrinfo|failed to resolve|nodename nor servname", re.I), "network access"),
    # Without network the sandbox has a loopback of its own, where nothing listens.
    (re.compile(r"connection refused", re.I), "network access"),
    (re.compile(r"operation not permitted", re.I), "an operation the sandbox forbids"),
)
_DENIED = re.compile(r"(?:^|[\s'\"`(])(/[^\s'\"`:)]+)[^\n]*?permission denied", re.I)
_DENIED_AFTER = re.compile(r"permission denied[^\n]*?(/[^\s'\"`:)]+)", re.I)


class Sandbox:
    """One per tool set (a session): the config, plus what the user allowed this session."""

    def __init__(self, config: SandboxConfig, mechanism: Mechanism | None = None) -> None:
        self.config = config
        self._mechanism = mechanism
        self._probed = mechanism is not None
        #: Set by "yes, and allow network for this session" (or ``/sandbox``).
        self.network_for_session = False
        #: Asks the user to run a blocked command outside; None: nobody to ask (headless).
        self.escalate: Escalator | None = None
        #: Lets sandboxed commands reach ``allow_hosts`` (Linux), started on first use.
        self.proxy: AllowlistProxy | None = None

    @property
    def mechanism(self) -> Mechanism | None:
        if not self.config.enabled:
            return None
        if not self._probed:
            self._mechanism = probe_mechanism().mechanism
            self._probed = True
        return self._mechanism

    @property
    def active(self) -> bool:
        return self.mechanism is not None

    def network(self) -> bool:
        return self.config.network or self.network_for_session

    def layout(self, cwd: Path) -> Layout:
        socket = self.proxy.socket if self.proxy is not None else None
        return layout(self.config, cwd, network=self.network(), proxy=socket)

    def uses_proxy(self) -> bool:
        mechanism = self.mechanism
        return (
            mechanism is not None
            and mechanism.kind == "bwrap"
            and bool(self.config.allow_hosts)
            and not self.network()
        )

    async def prepare(self) -> int:
        """Start what the next command needs (the allowlist proxy); returns a mark for
        ``blocked``: the hosts the proxy refuses from now on count for that command."""
        if not self.uses_proxy():
            return 0
        if self.proxy is None:
            self.proxy = AllowlistProxy(self.config.allow_hosts)
        await self.proxy.start()
        return len(self.proxy.refused)

    def wrap(self, command: list[str], cwd: Path) -> list[str]:
        """``command`` as it runs inside the sandbox (unchanged when there is none)."""
        mechanism = self.mechanism
        if mechanism is None:
            return command
        lay = self.layout(cwd)
        if mechanism.kind == "bwrap":
            return linux.bwrap_argv(mechanism.program, lay, command)
        return macos.seatbelt_argv(lay, command, mechanism.program)

    def blocked(self, output: str, cwd: Path, mark: int = 0) -> str | None:
        """What the sandbox seems to have blocked, judged from a failed command's output
        (and the hosts the allowlist proxy refused since ``mark``)."""
        if not self.active:
            return None
        refused = self.proxy.refused[mark:] if self.proxy is not None else []
        if refused:
            return f"network access to {', '.join(dict.fromkeys(refused))}"
        tail = output[-20000:]
        for pattern, meaning in _SIGNS:
            if pattern.search(tail):
                if meaning == "network access" and self.network():
                    continue
                return meaning
        lay = self.layout(cwd)
        for regex in (_DENIED, _DENIED_AFTER):
            for match in regex.finditer(tail):
                path = Path(match.group(1))
                if not is_writable(path, lay):
                    return f"access to {path}"
        return None


def how_to_allow(what: str) -> str:
    if what.startswith("network access to "):
        return (
            "add the host to allow_hosts under [sandbox] in picode's config.toml, or run "
            "picode interactively to be asked"
        )
    if what == "network access":
        return (
            "set network = true under [sandbox] in picode's config.toml, or run picode "
            "interactively to be asked"
        )
    return (
        "add the folder to writable = [...] under [sandbox] in picode's config.toml, or run "
        "picode interactively to be asked"
    )
