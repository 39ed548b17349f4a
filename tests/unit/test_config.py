"""Settings come from the environment (plus explicit overrides), are frozen, every var listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from factstream.config import Settings, env_var_table, load_settings
from factstream.errors import SettingsError


def test_defaults_point_at_the_local_stack() -> None:
    settings = Settings()
    assert settings.kafka.first_host_port == ("127.0.0.1", 9092)
    assert settings.lm.host_port == ("127.0.0.1", 8000)
    assert settings.weaviate.url == "http://127.0.0.1:8080"


def test_environment_overrides_each_section(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS", "10.0.0.5:19092,10.0.0.6:19092")
    monkeypatch.setenv("FACTSTREAM_LM_URL", "http://gpu-box:8123/v1")
    monkeypatch.setenv("FACTSTREAM_WEAVIATE_GRPC_PORT", "50999")
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    settings = load_settings()
    assert settings.kafka.first_host_port == ("10.0.0.5", 19092)
    assert settings.lm.host_port == ("gpu-box", 8123)
    assert settings.weaviate.grpc_port == 50999
    assert settings.local.cache_dir == tmp_path


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(ValidationError):
        settings.kafka.topic_prefix = "x"  # type: ignore[misc]


def test_bad_values_are_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_WEAVIATE_HTTP_PORT", "not-a-port")
    with pytest.raises(ValidationError, match="http_port"):
        load_settings()


def test_env_var_table_names_every_field_once() -> None:
    rows = env_var_table()
    names = [row.name for row in rows]
    assert len(names) == len(set(names))
    fields = sum(len(type(section).model_fields) for section in Settings().__dict__.values())
    assert len(rows) == fields
    assert "FACTSTREAM_CACHE_DIR" in names and "FACTSTREAM_LM_URL" in names
    assert all(row.description for row in rows)


def test_env_var_table_hides_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_LM_API_KEY", "sk-very-secret")
    rows = {row.name: row for row in env_var_table()}
    assert rows["FACTSTREAM_LM_API_KEY"].default == "(secret)"


def test_from_env_takes_overrides_without_touching_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FACTSTREAM_KAFKA_TOPIC_PREFIX", "from-env.")
    monkeypatch.setenv("FACTSTREAM_LM_MODEL", "env-model")
    before = dict(os.environ)
    settings = Settings.from_env(
        {
            "FACTSTREAM_KAFKA_TOPIC_PREFIX": "override.",
            "FACTSTREAM_WEAVIATE_HTTP_PORT": "18080",
            "FACTSTREAM_CACHE_DIR": str(tmp_path),  # a variable named apart from its section
            "FACTSTREAM_EDITOR_METHOD": "rag",
        }
    )
    assert dict(os.environ) == before
    assert settings.kafka.topic_prefix == "override."
    assert settings.weaviate.http_port == 18080
    assert settings.local.cache_dir == tmp_path
    assert settings.editor.method == "rag"
    assert settings.lm.model == "env-model"  # what is not overridden still comes from the env
    assert Settings.from_env() == Settings() == Settings.from_env({})


def test_from_env_refuses_an_unknown_name() -> None:
    with pytest.raises(
        SettingsError,
        match="FACTSTREAM_KAFKA_TOPIC_PREFX is not a factstream "
        "setting; did you mean FACTSTREAM_KAFKA_TOPIC_PREFIX",
    ):
        Settings.from_env({"FACTSTREAM_KAFKA_TOPIC_PREFX": "x."})
    with pytest.raises(SettingsError, match="HOME is not a factstream setting"):
        Settings.from_env({"HOME": "/"})


def test_from_env_names_the_variable_of_an_invalid_value() -> None:
    with pytest.raises(SettingsError, match="FACTSTREAM_WEAVIATE_HTTP_PORT: Input should be"):
        Settings.from_env({"FACTSTREAM_WEAVIATE_HTTP_PORT": "not-a-port"})
    with pytest.raises(SettingsError, match="FACTSTREAM_EDITOR_METHOD: Input should be"):
        Settings.from_env({"FACTSTREAM_EDITOR_METHOD": "guess"})
