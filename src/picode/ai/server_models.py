"""What an OpenAI-compatible server says it serves: ``GET /v1/models``, read with the standard
library (no SDK import, so ``--list-models`` stays quick), with a short timeout.

Used for local servers (Ollama, LM Studio, llama.cpp, vLLM) and OpenRouter: to list their
models and to give an id picode's model list lacks the server's limits. Never called on the
way to the first frame; every id and field here is untrusted text from the server.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

#: A local server answers in milliseconds; one that takes longer is as good as absent.
LOCAL_TIMEOUT_S = 1.0
#: OpenRouter's list is large and comes over the internet.
REMOTE_TIMEOUT_S = 5.0
#: Enough for OpenRouter's few hundred models; a bigger answer is not a models list.
MAX_BYTES = 16 * 1024 * 1024

#: Where servers put a model's context window, in order of trust: OpenRouter, vLLM, then
#: LM Studio's and llama.cpp's own fields.
_CONTEXT_FIELDS = (
    ("context_length",),
    ("max_model_len",),
    ("context_window",),
    ("loaded_context_length",),
    ("max_context_length",),
    ("meta", "n_ctx"),
)
_OUTPUT_FIELDS = (
    ("top_provider", "max_completion_tokens"),
    ("max_completion_tokens",),
    ("max_output_tokens",),
)
#: OpenRouter's prices are US dollars per token, as strings.
_PRICE_FIELDS = {
    "input": "prompt",
    "output": "completion",
    "cache_read": "input_cache_read",
    "cache_write": "input_cache_write",
}


class ServerModelsError(Exception):
    """The server is not there, did not answer in time, or answered something else."""


@dataclass(slots=True, frozen=True)
class ServerModel:
    id: str
    context_window: int | None = None
    max_tokens: int | None = None
    #: US dollars per million tokens, when the server says (OpenRouter).
    prices: tuple[tuple[str, float], ...] = ()


def models_url(base_url: str) -> str:
    return base_url.rstrip("/") + "/models"


def fetch_server_models(
    base_url: str, *, api_key: str | None = None, timeout: float = LOCAL_TIMEOUT_S
) -> list[ServerModel]:
    """The models ``base_url``'s ``/models`` lists; raises ``ServerModelsError`` saying why not."""
    url = models_url(base_url)
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        # No proxy: a local server is not behind one, and a proxy would answer for it.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(request, timeout=timeout) as response:
            body = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise ServerModelsError(f"{url} answered HTTP {exc.code}") from None
    except TimeoutError:
        raise ServerModelsError(f"{url} did not answer within {timeout:g} s") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, TimeoutError):
            raise ServerModelsError(f"{url} did not answer within {timeout:g} s") from None
        if isinstance(reason, ConnectionRefusedError):
            raise ServerModelsError(f"no server at {url} (connection refused)") from None
        raise ServerModelsError(f"cannot reach {url}: {reason}") from None
    except (OSError, ValueError) as exc:
        raise ServerModelsError(f"cannot reach {url}: {exc}") from None
    if len(body) > MAX_BYTES:
        raise ServerModelsError(f"{url} sent more than {MAX_BYTES // 1_048_576} MB")
    return parse_models(body, url)


def parse_models(body: bytes, url: str = "/v1/models") -> list[ServerModel]:
    """``{"data": [{"id": ...}, ...]}`` (OpenAI's shape; Ollama's ``{"models": [...]}`` too)."""
    try:
        payload = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise ServerModelsError(f"{url} did not answer JSON") from None
    entries = None
    if isinstance(payload, dict):
        entries = payload.get("data", payload.get("models"))
    if not isinstance(entries, list):
        raise ServerModelsError(f"{url} did not answer a models list (no 'data' array)")
    models: list[ServerModel] = []
    seen: set[str] = set()
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        model_id = entry.get("id", entry.get("model", entry.get("name")))
        if not isinstance(model_id, str) or not model_id.strip() or model_id in seen:
            continue
        seen.add(model_id)
        models.append(
            ServerModel(
                id=model_id,
                context_window=_first_count(entry, _CONTEXT_FIELDS),
                max_tokens=_first_count(entry, _OUTPUT_FIELDS),
                prices=_prices(entry.get("pricing")),
            )
        )
    return models


def probe_servers(
    targets: Mapping[str, tuple[str, str | None, float]],
) -> dict[str, list[ServerModel] | ServerModelsError]:
    """``{name: (base_url, key, timeout)}`` fetched at once, each in its own thread."""
    if not targets:
        return {}

    def one(item: tuple[str, str | None, float]) -> list[ServerModel] | ServerModelsError:
        base_url, key, timeout = item
        try:
            return fetch_server_models(base_url, api_key=key, timeout=timeout)
        except ServerModelsError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        results = pool.map(one, targets.values())
        return dict(zip(targets, results, strict=True))


def find_model(models: list[ServerModel], model_id: str) -> ServerModel | None:
    for model in models:
        if model.id == model_id:
            return model
    return None


def _first_count(entry: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> int | None:
    for path in paths:
        value: Any = entry
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        # bool is an int too; a server's flag is no token count.
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        if isinstance(value, float) and value.is_integer() and value > 0:
            return int(value)
    return None


def _prices(pricing: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(pricing, dict):
        return ()
    prices: list[tuple[str, float]] = []
    for ours, theirs in _PRICE_FIELDS.items():
        try:
            per_token = float(pricing.get(theirs, ""))
        except (TypeError, ValueError):
            continue
        if per_token >= 0:
            prices.append((ours, round(per_token * 1_000_000, 6)))
    return tuple(prices)
