from __future__ import annotations

import asyncio
import textwrap
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from picode.agent.tool import ToolResult
from picode.session.extensions import loader as extensions_module
from picode.session.extensions.loader import ExtensionHost


@dataclass
class FakeSink:
    messages: list[tuple[str, str]] = field(default_factory=list)
    entries: list[tuple[str, Any]] = field(default_factory=list)
    notices: list[tuple[str, str, str | None]] = field(default_factory=list)

    def send_message(self, text: str, deliver_as: str) -> None:
        self.messages.append((text, deliver_as))

    def append_entry(self, custom_type: str, data: Any) -> None:
        self.entries.append((custom_type, data))

    def notify(self, text: str, level: str, source: str | None) -> None:
        self.notices.append((text, level, source))


class Setup:
    def __init__(self, root: Path) -> None:
        self.cwd = root / "project"
        self.user_dir = root / "config" / "extensions"
        self.project_dir = self.cwd / ".picode" / "extensions"
        self.user_dir.mkdir(parents=True)
        self.project_dir.mkdir(parents=True)
        self.sink = FakeSink()

    def user(self, name: str, code: str) -> Path:
        return _write(self.user_dir / name, code)

    def project(self, name: str, code: str) -> Path:
        return _write(self.project_dir / name, code)

    def host(self, *, entry_points: bool = False) -> ExtensionHost:
        return ExtensionHost(
            cwd=self.cwd,
            user_dir=self.user_dir,
            project_dir=self.project_dir,
            use_entry_points=entry_points,
            sink=self.sink,
        )

    def load(self, **kwargs: Any) -> tuple[ExtensionHost, list[str]]:
        host = self.host(**kwargs)
        return host, host.load()


def _write(path: Path, code: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code), encoding="utf-8")
    return path


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    return Setup(tmp_path)


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 10))


ECHO_TOOL = """
from picode.agent.tool import FunctionTool, ToolResult

async def _echo(args, signal, on_update):
    return ToolResult.text("echo: " + args["text"])

def register(api):
    api.register_tool(FunctionTool(
        name="echo", label="Echo", description="Echo text back.",
        schema={"type": "object", "properties": {"text": {"type": "string"}},
                "required": ["text"]},
        function=_echo,
    ))
"""


def test_folder_project_and_package_extensions_load(setup: Setup) -> None:
    setup.user("echo.py", ECHO_TOOL)
    setup.project(
        "greeter/__init__.py",
        """
        from .words import GREETING

        def register(api):
            api.register_command("greet", "Say hello", lambda arg: api.notify(GREETING + arg))
        """,
    )
    setup.project("greeter/words.py", "GREETING = 'hello '\n")
    setup.project("_private.py", "raise RuntimeError('never imported')\n")
    host, problems = setup.load()
    assert problems == []
    assert [e.name for e in host.loaded] == ["echo", "greeter"]
    assert [tool.name for tool in host.tools] == ["echo"]
    result = run(host.tools[0].execute("c1", {"text": "hi"}, None, lambda _: None))  # type: ignore[arg-type]
    assert result.text_content == "echo: hi"
    assert run(host.run_command("/greet", "world")) is True
    assert setup.sink.notices == [("hello world", "info", "greeter")]


def test_a_failing_extension_is_reported_and_the_others_still_load(setup: Setup) -> None:
    broken = setup.user("broken.py", "import not_a_real_module_xyz\n")
    setup.user(
        "half.py",
        """
        from picode.agent.tool import FunctionTool

        def register(api):
            api.register_command("half", "never kept", lambda arg: None)
            raise ValueError("bad config value")
        """,
    )
    setup.user("no_register.py", "X = 1\n")
    setup.user("async_register.py", "async def register(api):\n    pass\n")
    setup.user("bad_event.py", "def register(api):\n    api.on('tool_cal', print)\n")
    setup.user("exits.py", "import sys\nsys.exit(3)\n")
    setup.user("echo.py", ECHO_TOOL)
    host, problems = setup.load()
    assert [e.name for e in host.loaded] == ["echo"]
    assert [tool.name for tool in host.tools] == ["echo"]
    assert host.commands == {}  # the half-registered command was rolled back
    text = "\n".join(problems)
    assert len(problems) == 6
    assert str(broken) in text
    assert "ModuleNotFoundError: No module named 'not_a_real_module_xyz'" in text
    assert "ValueError: bad config value" in text
    assert "no register(api) function" in text
    assert "must be a plain function, not async" in text
    assert "unknown event 'tool_cal'" in text
    assert "SystemExit: 3" in text


def test_project_extension_never_replaces_the_users_of_the_same_name(setup: Setup) -> None:
    setup.user("style.py", "def register(api):\n    api.notify('user')\n")
    setup.project("style.py", "def register(api):\n    api.notify('project')\n")
    host, problems = setup.load()
    assert [(e.name, Path(e.source).parent) for e in host.loaded] == [("style", setup.user_dir)]
    assert setup.sink.notices == [("user", "info", "style")]
    assert len(problems) == 1
    assert "style" in problems[0]
    assert "skipped" in problems[0]


def test_no_project_folder_loads_no_project_code(setup: Setup, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    setup.project("evil.py", f"open({str(marker)!r}, 'w').close()\ndef register(api): pass\n")
    setup.user("echo.py", ECHO_TOOL)
    host = ExtensionHost(
        cwd=setup.cwd,
        user_dir=setup.user_dir,
        project_dir=None,
        sink=setup.sink,
        use_entry_points=False,
    )
    assert host.load() == []
    assert [e.name for e in host.loaded] == ["echo"]
    assert not marker.exists()


def test_duplicate_tool_names_are_reported(setup: Setup) -> None:
    setup.project("a_echo.py", ECHO_TOOL)
    setup.project("b_echo.py", ECHO_TOOL)
    host, problems = setup.load()
    assert len(host.tools) == 1
    assert problems == [
        "Extension 'b_echo': a tool named 'echo' is already registered by 'a_echo'; "
        "this one was skipped."
    ]


def test_tool_call_block_first_reason_wins(setup: Setup) -> None:
    setup.project(
        "a_guard.py",
        """
        calls = []

        def register(api):
            def check(info):
                calls.append((info.name, info.call_id))
                if "rm -rf" in info.args.get("command", ""):
                    return "destructive command blocked"
            api.on("tool_call", check)
        """,
    )
    setup.project(
        "b_guard.py",
        """
        def register(api):
            async def check(info):
                if info.name == "bash":
                    return "second opinion"
            api.on("tool_call", check)
        """,
    )
    host, problems = setup.load()
    assert problems == []
    assert run(host.on_tool_call("read", {"path": "a"}, "c0")) is None
    assert run(host.on_tool_call("bash", {"command": "ls"}, "c1")) == "second opinion"
    blocked = run(host.on_tool_call("bash", {"command": "rm -rf /"}, "c2"))
    assert blocked == "destructive command blocked"


def test_tool_result_handlers_replace_in_turn(setup: Setup) -> None:
    setup.project(
        "a_redact.py",
        """
        from picode.agent.tool import ToolResult

        def register(api):
            def redact(info):
                text = info.result.text_content
                if "SECRET" in text:
                    redacted = text.replace("SECRET", "[redacted]")
                    return ToolResult.text(redacted, info.result.details)
            api.on("tool_result", redact)
        """,
    )
    setup.project(
        "b_tag.py",
        """
        from picode.agent.tool import ToolResult

        def register(api):
            async def tag(info):
                if info.name == "bash":
                    return ToolResult.text(info.result.text_content + " [checked]")
            api.on("tool_result", tag)
        """,
    )
    host, _ = setup.load()
    original = ToolResult.text("token=SECRET", {"exit": 0})
    replaced = run(host.on_tool_result("bash", {"command": "env"}, "c1", original))
    assert replaced is not None
    assert replaced.text_content == "token=[redacted] [checked]"
    untouched = ToolResult.text("plain")
    assert run(host.on_tool_result("read", {}, "c2", untouched)) is None


def test_input_is_transformed_by_each_handler(setup: Setup) -> None:
    setup.project(
        "expand.py",
        """
        def register(api):
            api.on("input", lambda text: text.replace("@today", "2024-05-01"))
            async def shout(text):
                return None if text.startswith("/") else text + "!"
            api.on("input", shout)
        """,
    )
    host, _ = setup.load()
    assert run(host.transform_input("plan for @today")) == "plan for 2024-05-01!"
    assert run(host.transform_input("/quiet")) == "/quiet"


def test_runtime_api_calls_reach_the_sink(setup: Setup) -> None:
    setup.project(
        "todo.py",
        """
        def register(api):
            async def todo(argument):
                api.append_entry("todo", {"item": argument})
                api.send_message("Please handle: " + argument, deliver_as="steer")
                api.notify("added " + argument, "warning")
            api.register_command("todo", "Remember an item", todo)
        """,
    )
    host, _ = setup.load()
    assert host.commands["todo"].description == "Remember an item"
    assert host.commands["todo"].extension == "todo"
    assert run(host.run_command("todo", "write docs")) is True
    assert run(host.run_command("nope", "")) is False
    assert setup.sink.entries == [("todo", {"item": "write docs"})]
    assert setup.sink.messages == [("Please handle: write docs", "steer")]
    assert setup.sink.notices == [("added write docs", "warning", "todo")]


def test_handler_exceptions_are_reported_not_raised(setup: Setup) -> None:
    setup.project(
        "a_flaky.py",
        """
        def register(api):
            def boom(payload):
                raise RuntimeError("handler exploded")
            api.on("turn_end", boom)
            api.on("tool_call", boom)
            api.on("input", boom)
            api.register_command("crash", "fails", boom)
            api.on("tool_result", lambda info: "not a result")
        """,
    )
    setup.project(
        "b_steady.py",
        """
        def register(api):
            api.on("turn_end", lambda payload: api.notify(f"turn ended: {payload}"))
            api.on("agent_start", lambda: api.notify("no-argument handler ran"))
        """,
    )
    host, problems = setup.load()
    assert problems == []

    async def scenario() -> tuple[Any, ...]:
        await host.emit("turn_end", "T1")
        await host.emit("agent_start")
        return (
            await host.on_tool_call("bash", {}, "c1"),
            await host.transform_input("keep me"),
            await host.run_command("crash", "x"),
            await host.on_tool_result("bash", {}, "c1", ToolResult.text("r")),
        )

    assert run(scenario()) == (None, "keep me", True, None)
    notices = setup.sink.notices
    errors = [text for text, level, _ in notices if level == "error"]
    assert len(errors) == 4
    assert all("RuntimeError: handler exploded" in text for text in errors)
    assert "Extension 'a_flaky' failed in its 'turn_end' handler" in errors[0]
    assert ("turn ended: T1", "info", "b_steady") in notices
    assert ("no-argument handler ran", "info", "b_steady") in notices
    warnings = [text for text, level, _ in notices if level == "warning"]
    assert warnings == [
        "Extension 'a_flaky': its 'tool_result' handler returned str, expected a ToolResult "
        "or None; ignored."
    ]


def test_emit_rejects_hook_and_unknown_events(setup: Setup) -> None:
    host, _ = setup.load()
    with pytest.raises(ValueError, match="on_tool_call"):
        run(host.emit("tool_call", None))
    with pytest.raises(ValueError, match="does not dispatch"):
        run(host.emit("nonsense"))


def test_api_arguments_are_validated(setup: Setup) -> None:
    setup.project("bad_name.py", "def register(api):\n    api.register_command('a b', '', print)\n")
    setup.project("bad_tool.py", "def register(api):\n    api.register_tool(object())\n")
    setup.project(
        "bad_send.py",
        "def register(api):\n    api.send_message('x', deliver_as='later')\n",
    )
    _, problems = setup.load()
    text = "\n".join(problems)
    assert "command name 'a b'" in text
    assert "register_tool needs a tool" in text
    assert "deliver_as must be one of" in text
    assert len(problems) == 3


def test_entry_point_extensions(
    setup: Setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    _write(
        site / "ep_plugin.py",
        """
        def register(api):
            api.register_command("ep", "from an entry point", lambda arg: None)

        def other(api):
            api.register_command("ep2", "a function entry point", lambda arg: None)
        """,
    )
    monkeypatch.syspath_prepend(str(site))
    group = extensions_module.ENTRY_POINT_GROUP
    points = [
        metadata.EntryPoint("plugin", "ep_plugin", group),
        metadata.EntryPoint("plugin_fn", "ep_plugin:other", group),
        metadata.EntryPoint("missing", "no_such_plugin_module", group),
    ]
    requested: list[str] = []

    def fake_entry_points(*, group: str) -> list[metadata.EntryPoint]:
        requested.append(group)
        return points

    monkeypatch.setattr(extensions_module.metadata, "entry_points", fake_entry_points)
    host, problems = setup.load(entry_points=True)
    assert requested == ["picode.extensions"]
    assert sorted(host.commands) == ["ep", "ep2"]
    assert len(problems) == 1
    assert "entry point missing = no_such_plugin_module" in problems[0]
    _, problems_off = setup.load(entry_points=False)
    assert requested == ["picode.extensions"]  # not consulted again
    assert problems_off == []


def test_the_documented_example_works(setup: Setup) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "extensions.md"
    text = docs.read_text(encoding="utf-8")
    example = text.split("## A complete example", 1)[1].split("```python\n", 1)[1]
    setup.project("guardrails.py", example.split("```", 1)[0])
    host, problems = setup.load()
    assert problems == []
    assert [tool.name for tool in host.tools] == ["word_count"]
    assert sorted(host.commands) == ["todo", "todo-run"]

    async def scenario() -> tuple[Any, ...]:
        await host.emit("session_start", object())
        blocked = await host.on_tool_call("bash", {"command": "git push --force origin"}, "c1")
        allowed = await host.on_tool_call("bash", {"command": "git push origin main"}, "c2")
        redacted = await host.on_tool_result("bash", {}, "c3", ToolResult.text("token=abc123"))
        typed = await host.transform_input("notes for @today")
        await host.run_command("todo", "write the changelog")
        await host.run_command("todo-run", "")
        counted = await host.tools[0].execute("c4", {"text": "one two three"}, None, print)  # type: ignore[arg-type]
        return blocked, allowed, redacted, typed, counted

    blocked, allowed, redacted, typed, counted = run(scenario())
    assert blocked is not None and "Force-pushing is not allowed" in blocked
    assert allowed is None
    assert redacted.text_content == "token=[redacted]"
    assert "@today" not in typed and typed.startswith("notes for 2")
    assert counted.text_content == "3 words"
    assert setup.sink.entries == [("todo", {"item": "write the changelog"})]
    assert setup.sink.messages == [
        ("Work through these to-dos, one at a time:\n- write the changelog", "prompt")
    ]
    assert ("guardrails loaded for project", "info", "guardrails") in setup.sink.notices
