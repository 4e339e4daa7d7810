"""Secrets kept from the model: the environment its commands get, and what it reads.

Masking itself is ``picode.ai.redaction`` (one pattern for every stream and file); this
module decides what the session applies it to. docs/security.md, "Secrets", is the user's
view of both rules below.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
from collections.abc import Iterable, Mapping

from picode.agent.tool import ToolResult
from picode.ai.models import ModelRegistry
from picode.ai.redaction import (
    MIN_SECRET_CHARS,
    REDACTED,
    looks_like_secret,
    mask_known,
    redact,
    remember_secret,
)
from picode.ai.types import TextContent

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "command_environment",
    "looks_secret",
    "mask_known",
    "model_command_environment",
    "redact_tool_result",
    "remember_secret",
    "unset_script",
]

#: Never dropped by the name rule: a command needs them and they hold no secret
#: (``SSH_AUTH_SOCK`` is a socket's path: the agent behind it never gives its keys out).
ALWAYS_KEPT = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "PWD", "TMPDIR", "SSH_AUTH_SOCK"}
)

#: A word of the name (split at ``_``, ``-`` and ``.``) that says the value is a secret.
_SECRET_WORD = re.compile(
    r"""
    .*(?:SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE).*   # anywhere in a word
    | .*(?:TOKENS?|KEYS?)                                         # a word's end: APIKEY
    | AUTH | PAT | PWD                                            # whole words
    """,
    re.VERBOSE,
)
#: A URL with a password in it: ``postgres://user:password@host``.
_URL_CREDENTIALS = re.compile(r"://[^\s/@:]*:[^\s/@]+@")


def looks_secret(name: str) -> bool:
    """Does the variable's name say it holds a secret? (Case does not matter.)"""
    if name in ALWAYS_KEPT:
        return False
    words = [word for word in re.split(r"[_.-]", name.upper()) if word]
    # PWD alone is the working folder; MYSQL_PWD is a password.
    if words == ["PWD"] or words == ["OLDPWD"]:
        return False
    return any(_SECRET_WORD.fullmatch(word) for word in words)


def command_environment(
    environ: Mapping[str, str], *, key_names: Iterable[str] = (), allow: Iterable[str] = ()
) -> dict[str, str]:
    """``environ`` without picode's key variables (``key_names``), variables whose name
    looks secret and variables whose value holds a key, a token or a URL with a password;
    a name matching one of ``allow`` (exact, or a ``*`` pattern) is kept whatever it is."""
    keys = set(key_names)
    allowed = list(allow)
    kept: dict[str, str] = {}
    for name, value in environ.items():
        secret = name not in ALWAYS_KEPT and (
            name in keys
            or looks_secret(name)
            or _URL_CREDENTIALS.search(value) is not None
            or looks_like_secret(value)
        )
        if not secret or any(fnmatch.fnmatchcase(name, pattern) for pattern in allowed):
            kept[name] = value
    return kept


def model_command_environment(
    registry: ModelRegistry, env_allow: Iterable[str], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for the commands the model runs, built once per session: every
    provider's key variables (built-in and configured) go, whatever their names, and the
    values of what went are remembered as secrets."""
    key_names = [name for info in registry.providers.values() for name in info.api_key_env]
    source = os.environ if environ is None else environ
    kept = command_environment(source, key_names=key_names, allow=env_allow)
    for name, value in source.items():
        if name not in kept and not value.startswith(("/", "~", ".")) and " " not in value:
            # The same password in a file the model reads is masked there too (a path to a
            # key file is no secret, and masking it would hide files from the model).
            remember_secret(value)
    return kept


def unset_script(environ: Mapping[str, str], kept: Mapping[str, str]) -> str:
    """A shell line that drops what ``kept`` left out of ``environ``, for a command another
    program starts with its own environment (the editor's terminal over ACP)."""
    names = sorted(name for name in environ if name not in kept and _SHELL_NAME.match(name))
    return f"unset {' '.join(names)}\n" if names else ""


_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def redact_tool_result(result: ToolResult, *, shapes: bool = True) -> ToolResult:
    """``result`` as the model may read it: picode's keys always masked, token shapes too
    unless ``shapes`` is off; the same object when there was nothing to mask."""
    content = list(result.content)
    changed = False
    for index, block in enumerate(content):
        if isinstance(block, TextContent):
            text, count = redact(block.text, shapes=shapes)
            if count:
                content[index] = dataclasses.replace(block, text=text)
                changed = True
    return ToolResult(content, result.details, result.is_error) if changed else result
