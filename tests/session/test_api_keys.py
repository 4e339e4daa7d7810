"""Saving and forgetting a provider's key in the auth file (``session/models/keys.py``), what
``/login`` and ``picode login`` do."""

from __future__ import annotations

import stat

import pytest

from picode.ai.models import builtin_registry
from picode.ai.redaction import mask_known
from picode.session.config.providers import api_key_for, apply_providers
from picode.session.config.settings import Settings
from picode.session.models.auth import AuthStore
from picode.session.models.keys import ApiKeyError, forget_api_key, save_api_key
from picode.session.paths import Paths


def test_a_saved_key_is_the_one_requests_carry_and_is_private(paths: Paths) -> None:
    registry, auth = builtin_registry(), AuthStore(paths.auth_file)
    saved = save_api_key(registry, auth, {}, "anthropic", "  sk-ant-saved-0123456789\n")
    assert saved.path == paths.auth_file and saved.used_instead is None
    assert api_key_for(registry, "anthropic", {}, auth) == "sk-ant-saved-0123456789"
    assert stat.S_IMODE(paths.auth_file.stat().st_mode) == 0o600
    # From now on masked wherever it would be written or shown.
    assert mask_known("key=sk-ant-saved-0123456789")[1] == 1


def test_saving_says_what_gives_a_key_first(paths: Paths) -> None:
    registry, auth = builtin_registry(), AuthStore(paths.auth_file)
    env = {"OPENAI_API_KEY": "from-env"}
    assert save_api_key(registry, auth, env, "openai", "saved-1").used_instead == "OPENAI_API_KEY"
    settings = Settings.model_validate({"providers": {"xai": {"api_key": "in-config"}}})
    apply_providers(registry, settings)  # amends the built-in provider
    assert save_api_key(registry, auth, {}, "xai", "saved-2").used_instead == (
        "api_key in config.toml"
    )


def test_forgetting_removes_only_that_key_and_says_if_another_remains(paths: Paths) -> None:
    registry, auth = builtin_registry(), AuthStore(paths.auth_file)
    save_api_key(registry, auth, {}, "anthropic", "key-a-123456")
    save_api_key(registry, auth, {}, "openai", "key-o-123456")
    forgotten = forget_api_key(registry, auth, {"ANTHROPIC_API_KEY": "env"}, "anthropic")
    assert forgotten.removed and forgotten.still_from == "ANTHROPIC_API_KEY"
    assert auth.get("anthropic") is None and auth.get("openai") == "key-o-123456"
    again = forget_api_key(registry, auth, {}, "anthropic")
    assert not again.removed and again.still_from is None


@pytest.mark.parametrize(
    ("provider", "key", "said"),
    [
        ("anthropc", "k-123456", "Did you mean anthropic"),
        ("anthropic", "   ", "No key given"),
        ("anthropic", "two words", "does not look like an API key"),
        ("anthropic", "line\nbreak", "does not look like an API key"),
        ("anthropic", "esc\x1b[2J", "does not look like an API key"),
    ],
)
def test_what_cannot_be_saved_is_refused_and_nothing_changes(
    paths: Paths, provider: str, key: str, said: str
) -> None:
    registry, auth = builtin_registry(), AuthStore(paths.auth_file)
    save_api_key(registry, auth, {}, "openai", "kept-123456")
    before = paths.auth_file.read_bytes()
    with pytest.raises(ApiKeyError, match=said):
        save_api_key(registry, auth, {}, provider, key)
    assert paths.auth_file.read_bytes() == before


def test_a_damaged_auth_file_is_not_overwritten(paths: Paths) -> None:
    paths.auth_file.parent.mkdir(parents=True, exist_ok=True)
    paths.auth_file.write_text("{not json", encoding="utf-8")
    registry, auth = builtin_registry(), AuthStore(paths.auth_file)
    with pytest.raises(ApiKeyError, match="not valid JSON"):
        save_api_key(registry, auth, {}, "anthropic", "key-123456")
    with pytest.raises(ApiKeyError, match="not valid JSON"):
        forget_api_key(registry, auth, {}, "anthropic")
    assert paths.auth_file.read_text(encoding="utf-8") == "{not json"
