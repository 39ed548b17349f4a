"""The LM server's command line: llama-cpp-python's server with its prompt cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from factstream.config import Settings
from factstream_lab.stack.llama import LlamaServer
from factstream_lab.stack.manager import build_services


def _server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> LlamaServer:
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_LOCAL_GGUF", str(gguf))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    [svc] = build_services(Settings(), ["lm"])
    assert isinstance(svc, LlamaServer)
    return svc


def _option(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def test_the_server_keeps_prompt_states_in_ram_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    argv = _server(monkeypatch, tmp_path).launch().argv
    assert argv[1:3] == ["-m", "llama_cpp.server"]
    assert _option(argv, "--model") == str(tmp_path / "model.gguf")
    assert _option(argv, "--cache") == "true"
    assert _option(argv, "--cache_type") == "ram"
    assert _option(argv, "--cache_size") == str(48 * 1024 * 1024)


def test_the_prompt_cache_size_is_a_setting_and_zero_turns_it_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    sized = _server(monkeypatch, tmp_path, FACTSTREAM_LOCAL_LM_PROMPT_CACHE_MB="8")
    assert _option(sized.launch().argv, "--cache_size") == str(8 * 1024 * 1024)
    off = _server(monkeypatch, tmp_path, FACTSTREAM_LOCAL_LM_PROMPT_CACHE_MB="0").launch().argv
    assert "--cache" not in off and "--cache_size" not in off
    assert _option(off, "--n_threads") == "2"
