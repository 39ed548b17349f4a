"""Which model the sentence-transformers adapter loads (no model is loaded here)."""

from __future__ import annotations

from factstream.embed.st_embedder import bundled_model_path, resolve_model


def test_default_name_resolves_to_the_bundled_folder() -> None:
    path = bundled_model_path()
    assert (path / "modules.json").is_file()
    assert (path / "model.safetensors").is_file()
    assert resolve_model("all-MiniLM-L6-v2") == str(path)
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(path)


def test_other_names_and_paths_pass_through() -> None:
    assert resolve_model("BAAI/bge-small-en-v1.5") == "BAAI/bge-small-en-v1.5"
    assert resolve_model("/models/mine") == "/models/mine"
