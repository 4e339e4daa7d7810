"""Inputs that used to break a session: undecodable bytes, damaged or foreign session files,
a session file that cannot be written. Each ends with a clear message and nothing lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.wire.server import WireServer


def _request_messages(wire: WireServer, index: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = wire.requests[index].json["messages"]
    return messages


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    out = []
    for message in messages:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.append("".join(block.get("text", "") for block in content))
    return out


def test_invalid_utf8_argument_is_repaired_saved_as_utf8_and_continues(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Got it."), api.text("Still here."))

    # What the shell hands over for $'x \xff': the byte arrives as a lone surrogate.
    first = picode.run("-p", "x \udcff", "--model", api.model)

    assert first.returncode == 0, first.stderr
    assert first.stdout == "Got it.\n"
    [session_file] = picode.session_files()
    text = session_file.read_bytes().decode("utf-8")  # strict: valid UTF-8 throughout
    assert "\\udcff" not in text
    assert "x \ufffd" in text

    again = picode.run("-c", "-p", "and now?", "--model", api.model)

    assert again.returncode == 0, again.stderr
    assert again.stdout == "Still here.\n"
    assert _texts(_request_messages(wire, 1))[0] == "x \ufffd"


def test_a_session_saved_with_surrogates_by_an_older_version_still_continues(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("First."), api.text("Second."))
    assert picode.run("-p", "hello", "--model", api.model).returncode == 0
    [session_file] = picode.session_files()
    # Older versions escaped lone surrogates: valid JSON, but not encodable when sent.
    raw = session_file.read_text("utf-8").replace('"hello"', '"hel\\udcfflo"')
    session_file.write_text(raw, "utf-8")

    result = picode.run("-c", "-p", "more", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert _texts(_request_messages(wire, 1))[0] == "hel\ufffdlo"


def _two_turn_session(wire: WireServer, picode: PicodeEnv) -> tuple[AnthropicDriver, Path]:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Answer one."), api.text("Answer two."), api.text("Answer three."))
    assert picode.run("-p", "question one", "--model", api.model).returncode == 0
    assert picode.run("-c", "-p", "question two", "--model", api.model).returncode == 0
    [session_file] = picode.session_files()
    return api, session_file  # type: ignore[return-value]


def _rewrite_line(path: Path, needle: bytes, change: Any) -> None:
    lines = path.read_bytes().split(b"\n")
    index = next(i for i, line in enumerate(lines) if needle in line)
    lines[index] = change(lines[index])
    path.write_bytes(b"\n".join(lines))


def test_a_lost_first_line_keeps_the_rest_and_the_context_starts_with_the_user(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api, session_file = _two_turn_session(wire, picode)
    _rewrite_line(session_file, b'"question one"', lambda line: line[:40] + b"\xff\xfe{{")

    result = picode.run("-c", "-p", "question three", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert "loaded with problems" in result.stderr and "not valid JSON" in result.stderr
    sent = _request_messages(wire, 2)
    assert sent[0]["role"] == "user"
    assert _texts(sent) == ["question two", "Answer two.", "question three"]


def test_invalid_utf8_inside_a_line_is_repaired_and_reported_in_json_mode(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api, session_file = _two_turn_session(wire, picode)
    _rewrite_line(session_file, b'"Answer one."', lambda line: line.replace(b"one", b"o\xffe"))

    result = picode.run("--mode", "json", "-c", "-p", "question three", "--model", api.model)

    assert result.returncode == 0, result.stderr
    assert "invalid UTF-8 replaced by U+FFFD" in result.stderr
    notices = [e for e in result.json_lines() if e["type"] == "notice"]
    assert any("invalid UTF-8" in notice["text"] for notice in notices)
    assert _texts(_request_messages(wire, 2))[:2] == ["question one", "Answer o\ufffde."]


def test_session_refuses_a_file_that_is_not_a_session_and_leaves_it_alone(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    notes = picode.project / "notes.txt"
    notes.write_text("my precious notes\n", encoding="utf-8")

    result = picode.run("--session", str(notes), "-p", "hello", "--model", api.model)

    assert result.returncode == 1
    assert "is not a picode session" in result.stderr and "notes.txt" in result.stderr
    assert notes.read_text(encoding="utf-8") == "my precious notes\n"
    assert wire.requests == []


def test_a_session_that_cannot_be_saved_fails_the_run_in_print_and_json_modes(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Unsaved answer."), api.text("Unsaved again."))
    # A file where the sessions folder should be: every write of the session fails.
    (picode.home / "data").mkdir()
    (picode.home / "data" / "sessions").write_text("", encoding="utf-8")

    printed = picode.run("-p", "hello", "--model", api.model)
    events = picode.run("--mode", "json", "-p", "hello", "--model", api.model)

    assert printed.returncode == 1
    assert printed.stdout == "Unsaved answer.\n"  # the answer is still given
    assert "not saved" in printed.stderr
    assert events.returncode == 1
    assert "not saved" in events.stderr
    assert any(e["type"] == "notice" and e["level"] == "error" for e in events.json_lines())


def test_rpc_reports_a_failed_save_as_an_error_event(wire: WireServer, picode: PicodeEnv) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Unsaved."))
    (picode.home / "data").mkdir()
    (picode.home / "data" / "sessions").write_text("", encoding="utf-8")
    child = picode.start("--mode", "rpc", "--model", api.model)
    try:
        child.send({"type": "prompt", "message": "hello"})
        error = child.event("error")
        assert "Could not save the session" in error["error"]
        child.close_stdin()
        assert child.wait() == 0
    finally:
        child.stop()
