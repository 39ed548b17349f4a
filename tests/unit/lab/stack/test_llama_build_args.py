"""The LM server's build leaves out llama.cpp's common library, which the server never loads."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from factstream.config import Settings
from factstream_lab.stack import llama
from factstream_lab.stack.llama import LlamaServer, server_only_cmake_args
from factstream_lab.stack.manager import build_services

# llama-cpp-python's pattern: the parent forces the option on in the cache, then adds
# llama.cpp, whose project() is followed by option() and a guarded add_subdirectory.
_PARENT = """cmake_minimum_required(VERSION 3.21)
project(llama_cpp NONE)
set(LLAMA_BUILD_COMMON ON CACHE BOOL "Build llama.cpp common library" FORCE)
add_subdirectory(vendor/llama.cpp)
message(STATUS "parent sees LLAMA_BUILD_COMMON=${LLAMA_BUILD_COMMON}")
"""
_LLAMA_CPP = """cmake_minimum_required(VERSION 3.14...3.28)
project("llama.cpp" NONE)
option(LLAMA_BUILD_COMMON "llama: build common utils library" OFF)
if (LLAMA_BUILD_COMMON)
    message(STATUS "common library: built")
else()
    message(STATUS "common library: left out")
endif()
"""


def _configure(tmp_path: Path, cmake_args: str) -> str:
    source = tmp_path / "src"
    (source / "vendor" / "llama.cpp").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(_PARENT)
    (source / "vendor" / "llama.cpp" / "CMakeLists.txt").write_text(_LLAMA_CPP)
    argv = ["cmake", "-S", str(source), "-B", str(tmp_path / "build"), *shlex.split(cmake_args)]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)  # noqa: S603
    return done.stdout


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (the LM server's build)")
@pytest.mark.parametrize("leave_out", [True, False])
def test_the_include_file_turns_off_the_common_library_the_parent_forces_on(
    tmp_path: Path, leave_out: bool
) -> None:
    include = tmp_path / "dir with space" / "no-common.cmake"
    include.parent.mkdir()
    include.write_text(llama._NO_COMMON_CMAKE)
    args = server_only_cmake_args(include) if leave_out else "-DLLAVA_BUILD=OFF"
    out = _configure(tmp_path, args)
    assert ("common library: left out" in out) is leave_out
    assert ("common library: built" in out) is not leave_out
    # Only llama.cpp's directory is changed; the parent's cache entry stays as it set it.
    assert "parent sees LLAMA_BUILD_COMMON=ON" in out


def test_the_build_writes_the_include_file_and_passes_it_in_cmake_args(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    [svc] = build_services(Settings(), ["lm"])
    assert isinstance(svc, LlamaServer)
    calls: list[tuple[list[str], dict[str, str]]] = []

    def record(
        service: str,
        step: str,
        cmd: Sequence[str | Path],
        log: Path,
        *,
        env: Mapping[str, str] | None = None,
        **_: object,
    ) -> None:
        calls.append(([str(c) for c in cmd], dict(env or {})))
        if "venv" in cmd:
            svc.venv.mkdir(parents=True)

    monkeypatch.setattr(llama, "run_step", record)
    svc._build_server(lambda: None)
    [_, (pip, env)] = calls
    assert any(arg.startswith("llama-cpp-python[server]==") for arg in pip)
    args = shlex.split(env["CMAKE_ARGS"])
    assert "-DLLAVA_BUILD=OFF" in args and "-DGGML_NATIVE=OFF" in args
    [include] = [a.split("=", 1)[1] for a in args if a.startswith("-DCMAKE_PROJECT_llama.cpp_")]
    assert Path(include).parent == svc.venv
    assert Path(include).read_text().strip() == "set(LLAMA_BUILD_COMMON OFF)"
