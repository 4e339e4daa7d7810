"""Authentication as ACP sees it: picode needs the default model's API key.

picode cannot ask for a key inside an editor (a key typed into a chat would end up in the
session file), so the methods it offers say where picode looks for one. ``authenticate``
succeeds once the key is there: in the agent's environment (an ``env_var`` method: clients
that support it restart picode with the variable set) or in ``auth.json`` / ``config.toml``,
which are read again each time.
"""

from __future__ import annotations

from typing import Any

from acp import RequestError
from acp.schema import AuthEnvVar, AuthMethodAgent, EnvVarAuthMethod, TerminalAuthMethod

from picode.session.models import Credentials

#: The method that reads picode's own files (auth.json, config.toml).
FILES_METHOD = "picode-config"


def auth_methods(options: Any) -> list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent]:
    """Empty when the default model has its key: nothing to authenticate."""
    if Credentials(options.registry, options.paths).has_key(options.model):
        return []
    provider = options.model.provider
    methods: list[EnvVarAuthMethod | TerminalAuthMethod | AuthMethodAgent] = [
        AuthMethodAgent(
            id=FILES_METHOD,
            name=f"{provider} key in picode's config",
            description=how_to_set_key(options),
        )
    ]
    variables = _key_variables(options)
    if variables:
        methods.append(
            EnvVarAuthMethod(
                type="env_var",
                id=f"env-{variables[0]}",
                name=f"{provider} API key",
                vars=[AuthEnvVar(name=variables[0], label=f"{provider} API key")],
            )
        )
    return methods


def require_key(options: Any, method_id: str) -> None:
    # Checked whether or not a key is there: a method picode never offers is a client's
    # mistake to hear about, not a success.
    known = [FILES_METHOD, *(f"env-{name}" for name in _key_variables(options)[:1])]
    if method_id not in known:
        raise RequestError.invalid_params(
            {"message": f"unknown auth method {method_id!r}; one of {', '.join(known)}"}
        )
    if Credentials(options.registry, options.paths).has_key(options.model):
        return
    raise RequestError.auth_required({"message": how_to_set_key(options)})


def how_to_set_key(options: Any) -> str:
    model = options.model
    variables = _key_variables(options)
    places = []
    if variables:
        places.append(f"{' or '.join(variables)} in the environment picode starts with")
    auth_file = options.paths.auth_file
    places.append(f"{auth_file} (run picode login {model.provider} in a terminal)")
    return (
        f"picode has no API key for {model.provider} (model {model.ref}). Put it in "
        + ", or ".join(places)
        + "; then authenticate again. picode cannot ask for the key itself here."
    )


def _key_variables(options: Any) -> list[str]:
    info = options.registry.providers.get(options.model.provider)
    return list(info.api_key_env) if info is not None else []
