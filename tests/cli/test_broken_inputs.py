"""Inputs that used to break a session: undecodable bytes, damaged or foreign session files,
a session file that cannot be written. Each ends with a clear message and nothing lost."""

from __future__ import annotations

import json
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


def test_a_key_without_a_known_shape_never_reaches_the_session_file(
    wire: WireServer, picode: PicodeEnv
) -> None:
    import stat

    api = use(AnthropicDriver(), wire, picode)
    key = "corp-gateway-token-5a7c9e"
    wire.enqueue(api.text(f"Your key is {key}, keep it safe."))

    result = picode.run(
        "-p", f"is {key} my key?", "--model", api.model, env={api.key_env or "": key}
    )

    assert result.returncode == 0, result.stderr
    assert key in result.stdout  # the answer itself is the person's to see
    [session_file] = picode.session_files()
    saved = session_file.read_text(encoding="utf-8")
    assert key not in saved
    assert "[redacted]" in saved
    assert stat.S_IMODE(session_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(session_file.stat().st_mode) == 0o600


def test_a_second_picode_on_the_same_session_is_refused(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("First."), api.text("After the other one quit."))
    assert picode.run("-p", "start", "--model", api.model).returncode == 0

    holder = picode.start("--mode", "rpc", "-c", "--model", api.model)
    try:
        holder.send({"type": "get_state"})
        holder.response("get_state")  # it has the session open now
        second = picode.run("-p", "-c", "me too", "--model", api.model)
        assert second.returncode == 1
        assert f"is open in another picode (pid {holder.process.pid})" in second.stderr
    finally:
        holder.close_stdin()
        assert holder.wait() == 0

    third = picode.run("-p", "-c", "now?", "--model", api.model)
    assert third.returncode == 0, third.stderr
    assert third.stdout == "After the other one quit.\n"
    entries = picode.session_entries()
    assert sum(1 for e in entries if e["type"] == "message") == 4  # nothing from the refused run


def test_session_with_a_new_path_starts_a_session_saved_there(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)
    wire.enqueue(api.text("Answer one."), api.text("Answer two."))

    first = picode.run("--session", "named.jsonl", "-p", "question one", "--model", api.model)
    again = picode.run("--session", "named.jsonl", "-p", "question two", "--model", api.model)

    assert first.returncode == 0, first.stderr
    assert again.returncode == 0, again.stderr
    named = picode.project / "named.jsonl"
    lines = named.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["type"] == "session"
    # The second run resumed it: the model saw the first exchange.
    assert _texts(_request_messages(wire, 1))[:2] == ["question one", "Answer one."]
    assert not list((picode.home / "data").rglob("*.jsonl"))  # nothing in the sessions folder


def test_session_with_a_new_path_in_a_missing_folder_is_refused(
    wire: WireServer, picode: PicodeEnv
) -> None:
    api = use(AnthropicDriver(), wire, picode)

    result = picode.run("--session", "nowhere/named.jsonl", "-p", "hi", "--model", api.model)

    assert result.returncode == 1
    assert "nowhere" in result.stderr and "Traceback" not in result.stderr
    assert wire.requests == []
