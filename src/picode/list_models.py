"""``picode --list-models [filter]``: every model picode can use, with each provider's key
state and the local servers that answer. Plain text, no SDK imported; local servers are
probed at once, each with a short timeout. Ids from servers are untrusted text."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from picode.ai.models import Model, ModelRegistry, ProviderInfo, builtin_registry
from picode.ai.server_models import LOCAL_TIMEOUT_S, ServerModel, ServerModelsError
from picode.ai.untrusted import one_line

if TYPE_CHECKING:
    from picode.session.models.auth import AuthStore

#: Long ids (OpenRouter's, Bedrock's) are cut here; the rest of the row stays aligned.
ID_WIDTH = 56


@dataclass(slots=True)
class Row:
    ref: str
    context: int | None
    output: int | None
    prices: str
    thinking: str


def run_list_models(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the list; always exit 0 (what is missing is said in the list itself)."""
    from picode.launch import assess_trust
    from picode.session.config.providers import apply_providers
    from picode.session.config.settings import load_config
    from picode.session.models.auth import AuthStore
    from picode.session.paths import resolve_paths

    stream = out or sys.stdout
    paths = resolve_paths()
    trusted = assess_trust(args).trusted
    loaded = load_config(paths, Path.cwd(), project_trusted=trusted)
    for problem in loaded.problems:
        print(f"picode: config {problem.severity}: {problem}", file=sys.stderr)
    registry = builtin_registry()
    apply_providers(registry, loaded.settings)
    text = render(registry, args.list_models or "", os.environ, AuthStore(paths.auth_file))
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        # `picode --list-models | head`: the reader had enough; nothing is wrong.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def render(
    registry: ModelRegistry, needle: str, env: Mapping[str, str], auth: AuthStore | None = None
) -> str:
    """The whole listing; ``needle`` is a case-insensitive substring of provider/id."""
    from picode.session.config.providers import base_url_for

    wanted = needle.strip().lower()
    servers = _probe_local(registry, env)
    sections: list[tuple[str, list[Row], str]] = []
    for name in sorted(registry.providers, key=_provider_order(registry)):
        info = registry.providers[name]
        rows = [_row(model) for model in registry.models(name)]
        listed = servers.get(name)
        if isinstance(listed, list):
            known = {model.id for model in registry.models(name)}
            rows += [_server_row(name, m) for m in listed if m.id not in known]
        matching = [row for row in rows if wanted in row.ref.lower()]
        if wanted and not matching and wanted not in name.lower():
            continue
        base_url = base_url_for(registry, name, env)
        state = _state(info, env, auth, base_url, listed)
        sections.append((f"{name}  [{info.api}]  {state}", matching, name))
    if not sections:
        return f"No provider or model matches '{one_line(needle, 80)}'.\n"
    # As wide as the longest id shown, so a short list fits a narrow terminal.
    refs = [one_line(row.ref, ID_WIDTH) for _, rows, _ in sections for row in rows]
    width = max([len("MODEL"), *map(len, refs)])
    header = f"  {'MODEL':<{width}} {'CONTEXT':>9} {'OUTPUT':>9}  {'USD/M: IN OUT CACHE R/W':<24}"
    lines = [header + " THINKING"]
    for title, rows, name in sections:
        lines += ["", title]
        lines += [_format_row(row, width) for row in rows]
        if not rows:
            lines.append(f"  (no models listed; any id works: --model {name}/<id>)")
    return "\n".join(lines) + "\n"


def _provider_order(registry: ModelRegistry) -> Callable[[str], tuple[int, int]]:
    names = list(registry.providers)

    def key(name: str) -> tuple[int, int]:
        # Packaged order (the big three first, local servers last) is kept.
        return (1 if registry.providers[name].local else 0, names.index(name))

    return key


def _probe_local(
    registry: ModelRegistry, env: Mapping[str, str]
) -> dict[str, list[ServerModel] | ServerModelsError]:
    from picode.ai.server_models import probe_servers
    from picode.session.config.providers import api_key_for, base_url_for

    targets: dict[str, tuple[str, str | None, float]] = {}
    for name, info in registry.providers.items():
        base_url = base_url_for(registry, name, env)
        if info.local and base_url:
            targets[name] = (base_url, api_key_for(registry, name, env), LOCAL_TIMEOUT_S)
    return probe_servers(targets)


def _state(
    info: ProviderInfo,
    env: Mapping[str, str],
    auth: AuthStore | None,
    base_url: str | None,
    listed: list[ServerModel] | ServerModelsError | None,
) -> str:
    if info.local:
        if isinstance(listed, list):
            count = f"{len(listed)} model" + ("" if len(listed) == 1 else "s")
            return f"key: not needed; server found at {one_line(base_url or '')} ({count})"
        reason = f" ({listed})" if listed is not None else ""
        return f"key: not needed; server not found{reason}"
    parts = [_key_state(info, env, auth)]
    if info.endpoint_env and not base_url:
        names = " or ".join(n for n in (info.endpoint_env, info.base_url_env) if n)
        parts.append(f"endpoint: missing, set {names}")
    return "; ".join(parts)


def _key_state(info: ProviderInfo, env: Mapping[str, str], auth: AuthStore | None) -> str:
    for variable in info.api_key_env:
        if env.get(variable, "").strip():
            return f"key: set from {variable}"
    if info.api_key:
        return "key: set in config.toml"
    if auth is not None and auth.get(info.name):
        return "key: set in auth.json"
    if not info.api_key_env:
        return "key: not needed"
    names = " or ".join(info.api_key_env)
    if info.key_optional:
        for variable in info.login_env:
            if env.get(variable, "").strip():
                return f"key: not set, login from {variable}"
        logins = ", ".join(info.login_env[:2]) + (", ..." if len(info.login_env) > 2 else "")
        return f"key: missing, set {names} (or log in: {logins})"
    return f"key: missing, set {names}"


def _row(model: Model) -> Row:
    cost = model.cost
    if any((cost.input, cost.output, cost.cache_read, cost.cache_write)):
        prices = (
            f"{_price(cost.input)} {_price(cost.output)} "
            f"{_price(cost.cache_read)}/{_price(cost.cache_write)}"
        )
    else:
        prices = "-"
    return Row(model.ref, model.context_window, model.max_tokens, prices, _thinking(model))


def _server_row(provider: str, model: ServerModel) -> Row:
    prices = dict(model.prices)
    shown = (
        f"{_price(prices.get('input', 0))} {_price(prices.get('output', 0))} -" if prices else "-"
    )
    # A server's list does not say whether a model thinks.
    return Row(f"{provider}/{model.id}", model.context_window, model.max_tokens, shown, "?")


def _price(value: float) -> str:
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def _thinking(model: Model) -> str:
    """How the model takes a thinking level (docs/models.md): its kind and its levels."""
    from picode.ai.thinking import control_of

    control = control_of(model)
    if control is None:
        return "no"
    levels = [level for level in control.levels if level != "none"]
    shown = f"{control.kind} {levels[0]}-{levels[-1]}" if len(levels) > 1 else control.kind
    return shown if control.off is not False else f"{shown}, always on"


def _count(value: int | None) -> str:
    return f"{value:,}" if value else "-"


def _format_row(row: Row, width: int) -> str:
    ref = one_line(row.ref, ID_WIDTH)
    if row.ref == "MODEL":
        context, output = "CONTEXT", "OUTPUT"
    else:
        context, output = _count(row.context), _count(row.output)
    return (f"  {ref:<{width}} {context:>9} {output:>9}  {row.prices:<24} {row.thinking}").rstrip()
