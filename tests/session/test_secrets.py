"""Secrets kept from the model and from files: the commands' environment, what tools return
to the model, and what a session file keeps of a reply."""

from __future__ import annotations

import json
from pathlib import Path

from picode.ai.models import builtin_registry
from picode.ai.providers.faux import FauxToolCall, text_turn, tool_turn
from picode.ai.redaction import redact_text
from picode.ai.types import ToolResultMessage
from picode.session.config.settings import Settings, load_config
from picode.session.paths import Paths
from picode.session.safety.secrets import (
    command_environment,
    looks_secret,
    model_command_environment,
    remember_secret,
    unset_script,
)

from .conftest import SessionHarness, run

GHP = "ghp_" + "Q7w8E9r0" * 4 + "tYuI"
LOCAL_KEY = "local-gateway-key-8c3e71"


def _file_text(path: Path | None) -> str:
    assert path is not None
    return path.read_text(encoding="utf-8")


def test_a_github_token_in_a_reply_is_not_stored_in_the_clear(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn(f"Use {GHP} to push."))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("which token?")
        saved = _file_text(session.session_file_path)
        assert GHP not in saved
        assert "Use [redacted] to push." in saved
        for line in saved.splitlines():
            json.loads(line)
        await session.close()

    run(scenario())


def test_tool_results_reach_the_model_without_keys_or_tokens(harness: SessionHarness) -> None:
    remember_secret(LOCAL_KEY)
    (harness.cwd / ".env").write_text(f"GH={GHP}\nLLM={LOCAL_KEY}\nDEBUG=1\n", encoding="utf-8")
    faux = harness.faux(tool_turn(FauxToolCall("read", {"path": ".env"})), text_turn("Read it."))

    async def scenario() -> None:
        session = await harness.open(faux)
        await session.prompt("what is in .env?")
        await session.close()

    run(scenario())
    sent = faux.last_request.messages
    result = next(m for m in sent if isinstance(m, ToolResultMessage))
    assert GHP not in result.text and LOCAL_KEY not in result.text
    assert "GH=[redacted]" in result.text and "LLM=[redacted]" in result.text
    assert "DEBUG=1" in result.text


def test_token_shapes_can_reach_the_model_when_the_user_says_so(harness: SessionHarness) -> None:
    remember_secret(LOCAL_KEY)
    (harness.cwd / "fixture.txt").write_text(f"{GHP} {LOCAL_KEY}\n", encoding="utf-8")
    faux = harness.faux(
        tool_turn(FauxToolCall("read", {"path": "fixture.txt"})), text_turn("Read it.")
    )
    settings = Settings()
    settings.redaction.tool_results = False

    async def scenario() -> None:
        session = await harness.open(faux, settings=settings)
        await session.prompt("read the fixture")
        saved = _file_text(session.session_file_path)
        await session.close()
        # What the model may read is still no reason to keep it in a file.
        assert GHP not in saved and LOCAL_KEY not in saved

    run(scenario())
    result = next(m for m in faux.last_request.messages if isinstance(m, ToolResultMessage))
    assert GHP in result.text  # the user's choice: fixtures and tests need the real bytes
    assert LOCAL_KEY not in result.text  # picode's own keys never


def test_shell_output_the_person_adds_reaches_the_model_masked(harness: SessionHarness) -> None:
    faux = harness.faux(text_turn("Noted."))

    async def scenario() -> None:
        session = await harness.open(faux)
        session.add_note(f"I ran `cat .env`:\n```\nGH={GHP}\n```")
        await session.prompt("what did it print?")
        await session.close()

    run(scenario())
    sent = "".join(message.text for message in faux.last_request.messages)
    assert GHP not in sent and "GH=[redacted]" in sent


# --- the environment of the model's commands --------------------------------------------


def test_secret_looking_names_are_recognised() -> None:
    secret = [
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "github_token",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "DB_PASSWORD",
        "MYSQL_PWD",
        "OPENAI_APIKEY",
        "GH_PAT",
        "NPM_CONFIG__AUTH",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "SLACK_BOT_TOKEN",
        "SESSION_COOKIE",
        "GPG_PASSPHRASE",
    ]
    ordinary = [
        "PATH",
        "HOME",
        "PWD",
        "OLDPWD",
        "LANG",
        "TERM",
        "SSH_AUTH_SOCK",
        "AWS_REGION",
        "AWS_PROFILE",
        "TOKENIZERS_PARALLELISM",
        "GIT_AUTHOR_NAME",
        "KEYMAP",
        "XDG_SESSION_TYPE",
    ]
    assert [name for name in secret if not looks_secret(name)] == []
    assert [name for name in ordinary if looks_secret(name)] == []


def test_the_environment_loses_keys_secret_names_and_secret_values() -> None:
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "MY_LLM": "plain-value-1234",  # a configured provider's key variable
        "GITHUB_TOKEN": "anything",
        "DATABASE_URL": "postgres://app:hunter2@db/app",
        "PLAIN_NAME": GHP,
        "NPM_TOKEN": "npm-allowed",
        "CI_JOB_TOKEN": "ci-allowed",
        "EDITOR": "vim",
    }
    kept = command_environment(environ, key_names=["MY_LLM"], allow=["NPM_TOKEN", "CI_*"])
    assert kept == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "NPM_TOKEN": "npm-allowed",
        "CI_JOB_TOKEN": "ci-allowed",
        "EDITOR": "vim",
    }


def test_every_providers_key_variable_goes_whatever_its_name() -> None:
    registry = builtin_registry()
    names = {name for info in registry.providers.values() for name in info.api_key_env}
    assert {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"} <= names
    environ = dict.fromkeys(names, "x") | {"PATH": "/bin"}
    assert model_command_environment(registry, [], environ) == {"PATH": "/bin"}


def test_the_values_that_went_are_masked_wherever_they_appear() -> None:
    environ = {
        "PATH": "/bin",
        "DB_PASSWORD": "hunter2-but-longer",
        "GOOGLE_APPLICATION_CREDENTIALS": "/home/me/key.json",
        "EDITOR": "vim-with-plugins",
    }
    model_command_environment(builtin_registry(), [], environ)
    text = "password: hunter2-but-longer in /home/me/key.json, edited with vim-with-plugins"
    assert redact_text(text) == (
        "password: [redacted] in /home/me/key.json, edited with vim-with-plugins"
    )


def test_an_unset_line_for_a_shell_another_program_starts() -> None:
    environ = {"PATH": "/bin", "GITHUB_TOKEN": "x", "A_KEY": "y", "odd-name": "z"}
    kept = command_environment(environ)
    assert unset_script(environ, kept) == "unset A_KEY GITHUB_TOKEN\n"
    assert unset_script({"PATH": "/bin"}, {"PATH": "/bin"}) == ""


def test_a_project_cannot_widen_what_the_model_sees(paths: Paths, cwd: Path) -> None:
    paths.user_config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.user_config_file.write_text('[bash]\nenv_allow = ["NPM_TOKEN"]\n', encoding="utf-8")
    project = cwd / ".picode"
    project.mkdir()
    (project / "config.toml").write_text(
        '[bash]\nenv_allow = ["GITHUB_TOKEN"]\n\n[redaction]\ntool_results = false\n',
        encoding="utf-8",
    )
    for trusted in (False, True):
        loaded = load_config(paths, cwd, project_trusted=trusted)
        assert loaded.settings.bash.env_allow == ["NPM_TOKEN"]
        assert loaded.settings.redaction.tool_results is True
        warnings = [str(p) for p in loaded.problems if p.severity == "warning"]
        assert any("[bash] env_allow" in w and "only your own" in w for w in warnings)
        assert any("redaction" in w and "only your own" in w for w in warnings)
