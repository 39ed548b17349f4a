"""The factstream CLI: clear errors and exit codes, status without services."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factstream.cli import app

runner = CliRunner()


@pytest.fixture
def squatter() -> Iterator[int]:
    """A port held by a program that speaks no Kafka: it accepts and says nothing."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def test_up_refuses_a_port_held_by_another_program(
    squatter: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{squatter}")
    result = runner.invoke(app, ["services", "up", "--only", "kafka"])
    assert result.exit_code == 1
    assert f"port 127.0.0.1:{squatter} is taken" in result.output
    assert "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS" in result.output
    assert not (
        tmp_path / "kafka"
    ).exists()  # nothing was downloaded for a start that cannot happen


def test_status_reports_remote_and_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_LM_URL", "http://gpu-box.invalid:8000/v1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    monkeypatch.setenv("FACTSTREAM_WEAVIATE_HTTP_PORT", str(free))
    result = runner.invoke(app, ["services", "status", "--only", "lm", "--only", "weaviate"])
    assert result.exit_code == 0, result.output
    lines = {line.split("│")[1].strip(): line for line in result.output.splitlines() if "│" in line}
    assert "remote" in lines["lm"] and "stopped" in lines["weaviate"]


def test_unknown_service_is_rejected() -> None:
    result = runner.invoke(app, ["services", "status", "--only", "mysql"])
    assert result.exit_code == 2
    assert "Invalid value" in result.output and "kafka" in result.output


def test_a_failure_in_a_top_level_command_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = sock.getsockname()[1]
    monkeypatch.setenv("FACTSTREAM_WEAVIATE_HTTP_PORT", str(free))
    result = runner.invoke(app, ["facts", "--namespace", "desk"])
    assert result.exit_code == 1
    assert result.output.startswith("error: fact store at ")
    assert "Traceback" not in result.output


def test_the_command_line_loads_no_client_library_until_a_command_runs() -> None:
    # The embedding child process (spawn) imports factstream.__main__, hence the CLI, too.
    heavy = ("fastapi", "weaviate", "faust", "torch", "factstream.clients")
    code = f"import sys, factstream.cli; print([m for m in {heavy!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_product_command_does_not_import_the_laboratory() -> None:
    """The lab's commands (entry points) load only for a name not the product's, or --help."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from factstream.cli import app\n"
        "lab = lambda: any(m.startswith('factstream_lab') for m in sys.modules)\n"
        "before = lab()\n"
        "runner = CliRunner()\n"
        "config = runner.invoke(app, ['config'])\n"
        "after_config = lab()\n"
        "world = runner.invoke(app, ['world', '--help'])\n"
        "listed = 'generate' in world.output\n"
        "print(before, after_config, config.exit_code, world.exit_code, lab(), listed)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False", "0", "0", "True", "True"]


@pytest.mark.parametrize("command", ["demo", "up", "services", "eval", "world"])
def test_the_laboratory_commands_answer_under_factstream(command: str) -> None:
    result = runner.invoke(app, [command, "--help"])
    assert result.exit_code == 0, result.output
    usage = next(line for line in result.output.splitlines() if "Usage:" in line)
    assert f" {command} [OPTIONS]" in usage
    listed = runner.invoke(app, ["--help"])
    assert f"│ {command} " in listed.output
