"""``picode login [PROVIDER]`` and ``picode logout [PROVIDER]``: a key in the auth file that
the next request carries, read without echo from a terminal or from a pipe."""

from __future__ import annotations

import json
import stat

from tests.cli.apis import AnthropicDriver, use
from tests.cli.harness import PicodeEnv
from tests.cli.terminal import ENTER, Terminal
from tests.wire.server import WireServer

API = AnthropicDriver()
KEY = "sk-ant-piped-0123456789"


def saved_keys(picode: PicodeEnv) -> dict[str, object]:
    path = picode.home / "config" / "auth.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def test_a_piped_key_is_saved_privately_and_the_next_request_carries_it(
    wire: WireServer, picode: PicodeEnv
) -> None:
    use(API, wire, picode)
    picode.env.pop("ANTHROPIC_API_KEY")
    wire.enqueue(API.text("Answered."))

    login = picode.run("login", "anthropic", stdin=KEY + "\n")
    assert login.returncode == 0, login.stderr
    assert "Saved the key for anthropic" in login.stdout and KEY not in login.stdout
    assert saved_keys(picode) == {"anthropic": {"api_key": KEY}}
    auth_file = picode.home / "config" / "auth.json"
    assert stat.S_IMODE(auth_file.stat().st_mode) == 0o600

    answer = picode.run("-p", "hello", "--model", API.model)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == "Answered.\n"
    # In whichever header the SDK puts it.
    assert any(KEY in value for value in wire.requests[0].headers.values())

    logout = picode.run("logout", "anthropic")
    assert logout.returncode == 0 and "Removed the key for anthropic" in logout.stdout
    assert saved_keys(picode) == {}
    again = picode.run("-p", "hello", "--model", API.model)
    assert again.returncode == 1 and "picode login anthropic" in again.stderr


def test_typed_in_a_terminal_the_key_is_not_echoed(picode: PicodeEnv) -> None:
    terminal = Terminal(["login", "openai"], cwd=picode.project, env=picode.env)
    try:
        terminal.wait_for_text("API key for openai (not shown):")
        terminal.send(b"sk-typed-0123456789")
        terminal.send(ENTER)
        terminal.wait_for_text("Saved the key for openai")
        assert terminal.wait_exit() == 0
        assert "sk-typed" not in terminal.text()
    finally:
        terminal.close()
    assert saved_keys(picode) == {"openai": {"api_key": "sk-typed-0123456789"}}


def test_without_a_provider_it_is_the_default_models_and_a_variable_set_is_named(
    picode: PicodeEnv,
) -> None:
    picode.add_config('default_model = "openai/gpt-5.4"')
    result = picode.run("login", stdin=KEY, env={"OPENAI_API_KEY": "from-env"})
    assert result.returncode == 0, result.stderr
    assert saved_keys(picode) == {"openai": {"api_key": KEY}}
    assert "OPENAI_API_KEY gives openai a key before the saved one" in result.stderr


def test_bad_input_is_refused_and_nothing_is_written(picode: PicodeEnv) -> None:
    unknown = picode.run("login", "anthropc", stdin=KEY)
    assert unknown.returncode == 1 and "Did you mean anthropic" in unknown.stderr
    empty = picode.run("login", "anthropic", stdin="\n")
    assert empty.returncode == 1 and "nothing was saved" in empty.stderr
    usage = picode.run("login", "anthropic", "please")
    assert usage.returncode == 2 and "picode -- login" in usage.stderr
    assert saved_keys(picode) == {}
