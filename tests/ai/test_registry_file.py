"""The packaged model list (ai/model_list/: an index and a file per provider), its schema,
and the generator that writes it."""

from __future__ import annotations

import json
import random
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import picode.ai.models as models_module
from picode.ai.models import THINKING_LEVELS, ModelRegistry, builtin_registry
from picode.ai.thinking import thinking_request

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / ".ci" / "refresh-models"
AI = Path(models_module.__file__).parent
SAMPLE = Path(__file__).parent / "data" / "litellm_sample.json"


def load(name: str) -> Any:
    return json.loads((AI / name).read_text(encoding="utf-8"))


GENERATOR_CODE = runpy.run_path(str(GENERATOR), run_name="refresh_models")


def assembled(folder: Path) -> Any:
    """The whole document a list folder holds (what the schema describes)."""
    text = GENERATOR_CODE["assemble"](folder)
    assert text is not None, f"no model list in {folder}"
    return json.loads(text)


def packaged() -> Any:
    return assembled(AI / "model_list")


# --- the packaged file -----------------------------------------------------------------------


def test_models_json_validates_against_its_schema() -> None:
    jsonschema.validate(packaged(), load("models.schema.json"))


def test_the_schema_refuses_what_picode_could_not_read() -> None:
    schema = load("models.schema.json")
    good = packaged()
    model = good["models"][0]
    broken = [
        {**model, "context_window": "1M"},
        {**model, "thinking": {"kind": "adaptive"}},  # no levels to choose from
        {**model, "thinking": {"kind": "budget", "off": "maybe"}},
        {**model, "cost": {"input": -1, "output": 0, "cache_read": 0, "cache_write": 0}},
        {**model, "surprise": 1},
    ]
    for bad in broken:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "models": [bad]}, schema)


def test_each_provider_file_holds_only_its_own_models_and_the_index_names_them_all() -> None:
    folder = AI / "model_list"
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    files = {path.stem for path in folder.glob("*.json")} - {"index"}
    assert set(index["providers_listed"]) == files
    for name in files:
        part = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        assert part["provider"] == name
        assert {m["provider"] for m in part["models"]} == {name}


def test_a_registry_reads_only_the_provider_files_it_is_asked_about(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []
    real = models_module.packaged_models
    monkeypatch.setattr(
        models_module, "packaged_models", lambda name: read.append(name) or real(name)
    )
    registry = builtin_registry()
    assert read == []
    registry.resolve("opus")
    assert read == ["anthropic"]
    registry.models()
    assert sorted(read) == sorted(packaged_files())


def packaged_files() -> list[str]:
    return [p.stem for p in (AI / "model_list").glob("*.json") if p.stem != "index"]


def test_every_model_belongs_to_a_provider_of_providers_json() -> None:
    providers = load("providers.json")["providers"]
    missing = {m["provider"] for m in packaged()["models"]} - set(providers)
    assert not missing


def test_aliases_and_defaults_name_packaged_models() -> None:
    registry = builtin_registry()
    for alias, ref in registry.aliases.items():
        resolved = registry.resolve(alias)
        assert resolved.model.ref == ref
        assert resolved.model.known
    for provider in ("anthropic", "openai", "google"):
        assert registry.default_model(provider).known


def test_every_thinking_level_gives_a_request_and_an_honest_label_on_every_model() -> None:
    for model in builtin_registry().models():
        for level in THINKING_LEVELS:
            request = thinking_request(model, level, model.max_tokens)
            label = request.label
            if model.reasoning and level != "off":
                assert request.thinks, (model.ref, level)
            if request.thinks and request.value not in (None, level) and request.budget is None:
                # What is sent differs from the level set: the label says so.
                assert request.value in label and "(" in label, (model.ref, level, label)


# --- aliases and retired models --------------------------------------------------------------


@pytest.fixture
def registry() -> ModelRegistry:
    return builtin_registry()


def test_aliases_resolve_with_a_thinking_suffix_and_any_case(registry: ModelRegistry) -> None:
    for name in ("opus", "sonnet", "haiku", "gpt", "codex", "gemini", "flash"):
        assert name in registry.aliases
    resolved = registry.resolve("Opus:high")
    assert resolved.model.ref == registry.aliases["opus"]
    assert resolved.thinking == "high"


def test_a_retired_model_still_runs_with_a_warning_naming_its_successor(
    registry: ModelRegistry,
) -> None:
    ref = next(iter(registry.aliases.values()))
    provider, model_id = ref.split("/", 1)
    model = registry.get(provider, model_id)
    assert model is not None
    from dataclasses import replace

    registry.add_model(replace(model, retires="2020-01-01", successor="claude-next"))
    resolved = registry.resolve(ref)
    assert resolved.warning is not None
    assert "retired" in resolved.warning and "2020-01-01" in resolved.warning
    assert "claude-next" in resolved.warning
    registry.add_model(replace(model, retires="2999-01-01"))
    assert registry.resolve(ref).warning is None


# --- the generator --------------------------------------------------------------------------


def generate(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """Run the generator on ``source`` into the folder ``out``."""
    command = [sys.executable, str(GENERATOR), "--source", str(source), "--out", str(out)]
    return subprocess.run(
        [*command, "--as-of", "2026-12-04", "--version", "1.2.3", *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_generator_is_deterministic_whatever_the_source_order(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    assert generate(SAMPLE, first).returncode == 0
    entries = list(json.loads(SAMPLE.read_text()).items())
    random.Random(7).shuffle(entries)
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(dict(entries)))
    assert generate(shuffled, second).returncode == 0
    one, two = assembled(first), assembled(second)
    del one["source"]["sha256"], two["source"]["sha256"]  # the bytes differ, the facts do not
    assert one == two
    again = tmp_path / "again"
    generate(SAMPLE, again)
    for path in first.iterdir():
        assert (again / path.name).read_bytes() == path.read_bytes()
    check = generate(SAMPLE, first, "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_generator_keeps_current_models_and_derives_their_thinking(tmp_path: Path) -> None:
    out = tmp_path / "list"
    result = generate(SAMPLE, out)
    assert result.returncode == 0, result.stderr
    document = assembled(out)
    jsonschema.validate(document, load("models.schema.json"))
    models = {f"{m['provider']}/{m['id']}": m for m in document["models"]}

    # Dated snapshots, special-purpose and retired models, and previews of released models
    # are left out; the rest is kept under picode's provider names.
    assert "anthropic/claude-opus-4-5-20251101" not in models
    assert "openai/gpt-5-2025-08-07" not in models
    assert "openai/gpt-4" not in models  # retired before the as-of date
    assert not any("audio" in ref or "tts" in ref or "embedding" in ref for ref in models)
    assert "google/gemini-3.1-flash-lite-preview" not in models
    assert "google/gemini-3.1-flash-lite" in models
    assert "vertex/claude-opus-4-7" in models
    assert "bedrock/global.anthropic.claude-opus-4-7" in models
    assert "groq/openai/gpt-oss-120b" in models

    opus = models["anthropic/claude-opus-4-7"]
    assert opus["name"] == "Claude Opus 4.7"
    assert (opus["context_window"], opus["max_tokens"]) == (1_000_000, 128_000)
    assert opus["cost"] == {"input": 5, "output": 25, "cache_read": 0.5, "cache_write": 6.25}
    assert opus["thinking"] == {
        "kind": "adaptive",
        "levels": ["low", "medium", "high", "xhigh", "max"],
        "display": "summarized",
    }
    assert models["anthropic/claude-opus-4-6"]["thinking"] == {
        "kind": "adaptive",
        "levels": ["low", "medium", "high", "max"],
    }
    assert models["anthropic/claude-opus-4-5"]["thinking"] == {"kind": "budget"}
    assert models["openai/gpt-5"]["thinking"] == {
        "kind": "effort",
        "levels": ["minimal", "low", "medium", "high"],
        "off": False,
    }
    assert models["openai/gpt-5.4"]["thinking"]["levels"][0] == "none"
    assert "google/gemini-2.5-pro" not in models  # retired on 2026-12-01
    assert models["google/gemini-3.1-pro-preview"]["thinking"]["kind"] == "level"
    assert models["openai/gpt-5"]["retires"] == "2026-12-11"
    assert all(m["max_tokens"] <= m["context_window"] for m in models.values())

    # Aliases follow the newest model; defaults are the flagship aliases.
    assert document["aliases"]["opus"] == "anthropic/claude-opus-9-1"
    assert document["aliases"]["gemini"] == "google/gemini-3.1-pro-preview"
    assert document["defaults"]["anthropic"] == "claude-opus-9-1"
    assert document["source"]["version"] == "1.2.3"
    assert document["source"]["as_of"] == "2026-12-04"


def test_gemini_2_5_budgets_as_of_a_day_it_was_current(tmp_path: Path) -> None:
    out = tmp_path / "list"
    assert generate(SAMPLE, out, "--as-of", "2026-11-01").returncode == 0
    models = {m["id"]: m for m in assembled(out)["models"]}
    assert models["gemini-2.5-pro"]["thinking"] == {"kind": "budget", "off": False, "min": 128}
    assert models["gemini-2.5-flash"]["thinking"] == {"kind": "budget", "off": "disable"}


def test_the_generator_prints_a_review_of_what_moved(tmp_path: Path) -> None:
    out = tmp_path / "list"
    generate(SAMPLE, out)
    document = assembled(out)
    document["models"] = [m for m in document["models"] if m["id"] != "claude-opus-4-7"]
    document["models"][0]["cost"]["input"] = 999
    document["aliases"]["opus"] = "anthropic/claude-opus-4-6"
    GENERATOR_CODE["write"](out, json.dumps(document))

    check = generate(SAMPLE, out, "--check")
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    assert "+ anthropic/claude-opus-4-7" in lines
    assert any(line.startswith("~ ") and "cost" in line and "999" in line for line in lines)
    assert "~ aliases opus: anthropic/claude-opus-4-6 -> anthropic/claude-opus-9-1" in lines
    assert assembled(out) == document  # --check writes nothing


def test_the_generator_refuses_a_bad_date(tmp_path: Path) -> None:
    result = generate(SAMPLE, tmp_path / "x", "--as-of", "yesterday")
    assert result.returncode == 2
    assert "--as-of" in result.stderr
    assert not (tmp_path / "x").exists()


def test_the_generator_module_runs_without_network_when_given_a_source(tmp_path: Path) -> None:
    # Imported as a module too: the download path is the only one that needs pip.
    assert GENERATOR_CODE["SOURCE_PACKAGE"] == "litellm"
    text = GENERATOR_CODE["render"](SAMPLE.read_bytes(), "x", "2026-12-04")
    assert json.loads(text)["models"]
