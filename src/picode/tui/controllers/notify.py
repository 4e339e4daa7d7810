"""Terminal notifications: the bell, or an OSC 9 / OSC 777 desktop notification, when a run
ends or a call waits for approval while the terminal is not focused (docs/tui.md,
"Notifications").

Focus comes from the terminal's focus reports (``CSI ? 1004 h``, enabled by Textual's
driver): a terminal that never sends them counts as focused, so it never rings for nothing.
A run the person stopped with Esc is not announced: they are there. The text is picode's
own; the one piece that is not (a tool's name) is cleaned of anything a terminal acts on,
so an OSC payload never carries ESC or BEL from untrusted text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from picode.agent.events import AgentEnd, AgentStart
from picode.ai.untrusted import safe

BEL = "\x07"
ESC = "\x1b"
TITLE = "picode"
DEFAULT_METHOD = "auto"
DEFAULT_WHEN: tuple[str, ...] = ("done", "approval")
#: A notification is a glance, and a long OSC payload is cut or refused by some terminals.
MAX_TEXT = 100
#: Anything left after ``safe`` that could end or split an OSC payload, or a line.
_PAYLOAD_BREAKERS = re.compile(r"[\x00-\x1f\x7f-\x9f;]+")


def pick_method(env: Mapping[str, str]) -> str:
    """The method "auto" stands for in this terminal: a desktop notification where the
    terminal is known to show one, else the bell (which every terminal has)."""
    if env.get("TMUX") or env.get("STY"):
        # A multiplexer swallows OSC unless passthrough is on (tmux's is off by default);
        # the bell it forwards and marks on the window.
        return "bell"
    program = env.get("TERM_PROGRAM", "")
    term = env.get("TERM", "")
    if program == "iTerm.app" or env.get("LC_TERMINAL") == "iTerm2":
        return "osc9"
    if term == "xterm-kitty" or env.get("KITTY_WINDOW_ID"):
        return "osc9"
    if program in ("ghostty", "WezTerm") or term in ("xterm-ghostty", "wezterm"):
        return "osc777"
    if term.startswith("foot"):
        return "osc777"
    return "bell"


def clean(text: str) -> str:
    """Text fit for an OSC payload: no escape sequence, control character or separator,
    on one line, cut at ``MAX_TEXT``."""
    text = " ".join(_PAYLOAD_BREAKERS.sub(" ", safe(text)).split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def sequence(method: str, body: str, *, tmux: bool = False) -> str:
    """What to write for ``method`` ("bell", "osc9", "osc777"); "" for none. Inside tmux
    an OSC goes through its passthrough (every ESC doubled), shown when the person set
    ``allow-passthrough on``."""
    body = clean(body)
    match method:
        case "bell":
            return BEL
        case "osc9":
            osc = f"{ESC}]9;{TITLE}: {body}{BEL}"
        case "osc777":
            osc = f"{ESC}]777;notify;{TITLE};{body}{BEL}"
        case _:
            return ""
    if tmux:
        return f"{ESC}Ptmux;{osc.replace(ESC, ESC + ESC)}{ESC}\\"
    return osc


if TYPE_CHECKING:
    # Only for the type checker: a Protocol class costs instructions to create, on
    # the way to the first frame.
    class NotifySettings(Protocol):
        @property
        def method(self) -> str: ...

        @property
        def when(self) -> Sequence[str]: ...

    class NotifyConfig(Protocol):
        @property
        def notifications(self) -> NotifySettings | None:
            """``[notifications]`` from config.toml; None: the defaults."""
            ...

    class Idles(Protocol):
        async def wait_for_idle(self) -> None: ...

    class NotifyHost(Protocol):
        """Whether the terminal has focus, what the person chose, and the terminal."""

        @property
        def app_focus(self) -> bool: ...

        @property
        def session(self) -> Idles | None: ...

        @property
        def config(self) -> NotifyConfig: ...

        def write_terminal(self, data: str) -> None:
            """Raw bytes to the terminal, between frames (the driver's writer)."""
            ...

        def run_worker(self, work: Any, *args: Any, **kwargs: Any) -> Any: ...


class TerminalNotifier:
    def __init__(self, host: NotifyHost, env: Mapping[str, str] | None = None) -> None:
        self._host = host
        self._env = os.environ if env is None else env
        #: Counts run starts and ends: a run that ends only to be followed by another (a
        #: retry, a queued message) is not the end the person waits for; the last one is.
        self._runs = 0
        self._ends = 0
        self._aborted = False
        self._failed = False
        self._stopped = False

    def handle(self, event: object) -> None:
        """A session event: a run starts, or ends (announced once the session is idle)."""
        if isinstance(event, AgentStart):
            self._runs += 1
            self._aborted = False
        elif isinstance(event, AgentEnd):
            stops = [getattr(m, "stop_reason", None) for m in event.messages]
            self._aborted = self._aborted or "aborted" in stops
            self._failed = bool(stops) and stops[-1] == "error"
            self._ends += 1
            # The function, not a coroutine: a worker the closing app never starts leaves
            # no coroutine behind that was never awaited.
            after = partial(self._after_run, self._runs, self._ends)
            self._host.run_worker(after, exit_on_error=False)

    def run_aborted(self) -> None:
        """Esc stopped the run: the person is there, nothing to announce."""
        self._aborted = True

    def stop(self) -> None:
        """picode is quitting: nothing more is written."""
        self._stopped = True

    def approval_waiting(self, tool_name: str, escalation: bool = False) -> None:
        what = f"{tool_name} outside the sandbox" if escalation else tool_name
        self.notify("approval", f"waiting for approval: {clean(what)}")

    async def _after_run(self, run: int, end: int) -> None:
        session = self._host.session
        if session is not None:
            await session.wait_for_idle()
        if (run, end) == (self._runs, self._ends) and not self._aborted:
            self.notify("done", "stopped by an error" if self._failed else "done")

    def method(self) -> str:
        settings = self._host.config.notifications
        method = DEFAULT_METHOD if settings is None else settings.method
        return pick_method(self._env) if method == "auto" else method

    def notify(self, kind: str, body: str) -> bool:
        """Write the notification for ``kind`` ("done", "approval") unless the terminal has
        focus or the person turned it off; whether anything was written."""
        settings = self._host.config.notifications
        when = DEFAULT_WHEN if settings is None else settings.when
        if self._stopped or kind not in when or self._host.app_focus:
            return False
        data = sequence(self.method(), body, tmux=bool(self._env.get("TMUX")))
        if data:
            self._host.write_terminal(data)
        return bool(data)
