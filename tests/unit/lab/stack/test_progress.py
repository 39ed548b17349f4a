"""Progress of provisioning: plain lines, heartbeats on a fake clock, failures with log tails."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from factstream.console import print_error
from factstream.errors import BuildStepFailed, ServiceStartFailed
from factstream_lab.stack.process import TAIL_LINES, log_tail, run_step, start_detached, wait_until
from factstream_lab.stack.progress import (
    Outcome,
    PlainReporter,
    Progress,
    RichReporter,
    console_progress,
    format_elapsed,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lines() -> list[str]:
    return []


@pytest.fixture
def progress(clock: FakeClock, lines: list[str]) -> Progress:
    return Progress(PlainReporter(lines.append, now=lambda: "12:00:00"), clock=clock)


def test_a_built_step_says_what_runs_where_it_logs_and_how_long_it_took(
    progress: Progress, clock: FakeClock, lines: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "weaviate-build.log"
    with progress.step("weaviate", "build Weaviate", "go install x@v1", log) as step:
        clock.now += 311
        step.ends(Outcome.BUILT, "/cache/weaviate-server")
    assert lines == [
        f"12:00:00 weaviate  build Weaviate: go install x@v1 ...; log: {log}",
        "12:00:00 weaviate  build Weaviate: built in 5m 11s; /cache/weaviate-server",
    ]


def test_a_cached_step_is_one_line_with_what_the_cache_had(
    progress: Progress, lines: list[str]
) -> None:
    progress.report("kafka", "resolve Kafka jars", Outcome.CACHED, "/cache/kafka/libs")
    assert lines == ["12:00:00 kafka     resolve Kafka jars: cached; /cache/kafka/libs"]


def test_a_running_service_names_its_log(progress: Progress, lines: list[str]) -> None:
    log = Path("/cache/logs/kafka-9092.log")
    progress.report("kafka", "start kafka", Outcome.RUNNING, "127.0.0.1:9092, pid 7", log)
    assert lines == [f"12:00:00 kafka     start kafka: running; 127.0.0.1:9092, pid 7; log: {log}"]


def test_heartbeats_every_30s_on_the_clock_with_the_logs_last_line(
    progress: Progress, clock: FakeClock, lines: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "lm-build.log"
    log.write_text("### lm: build\n[ 42%] Building CXX object ggml.o\n")
    with progress.step("lm", "build the LM server", "pip install llama-cpp-python", log) as step:
        for seconds in (10, 29.9, 30, 45, 59.9, 61, 95):  # ticks come often; beats do not
            clock.now = 1000 + seconds
            step.tick()
    beats = [line for line in lines if "still running" in line]
    assert beats == [
        f"12:00:00 lm        build the LM server: still running after {took}; log: {log}; "
        "last line: [ 42%] Building CXX object ggml.o"
        for took in ("30.0s", "1m 01s", "1m 35s")
    ]


def test_a_failed_step_is_reported_and_its_error_carries_the_logs_tail(
    progress: Progress, clock: FakeClock, lines: list[str], tmp_path: Path
) -> None:
    log = tmp_path / "weaviate-build.log"
    script = "import sys\nfor i in range(30): print(f'compile line {i}')\nsys.exit(2)"
    with (
        pytest.raises(BuildStepFailed) as info,
        progress.step("weaviate", "build Weaviate", "go install", log) as step,
    ):
        clock.now += 2
        run_step("weaviate", "go install", [sys.executable, "-c", script], log, tick=step.tick)
    message = str(info.value)
    assert f"failed with exit code 2; its log: {log}" in message
    assert f"its last {TAIL_LINES} lines:" in message
    assert "  | compile line 29" in message and "  | compile line 10" in message
    assert "compile line 9\n" not in message  # only the tail
    assert info.value.tail == log_tail(log)
    assert lines[-1] == (
        f"12:00:00 weaviate  build Weaviate: FAILED after 2.0s: weaviate: step 'go install' "
        f"failed with exit code 2; its log: {log}"
    )


def test_a_server_that_dies_at_start_shows_its_logs_tail(tmp_path: Path) -> None:
    log, pidfile = tmp_path / "crasher.log", tmp_path / "crasher.pid"
    cmd = [sys.executable, "-c", "print('FATAL: bad config [/etc/x]'); raise SystemExit(1)"]
    pid = start_detached(cmd, log, pidfile)
    with pytest.raises(ServiceStartFailed) as info:
        wait_until("crasher", lambda: False, pid=pid, log=log, timeout_s=60, interval_s=0.05)
    assert "  | FATAL: bad config [/etc/x]" in str(info.value)


def test_run_step_ticks_while_the_step_runs(tmp_path: Path) -> None:
    go_on = tmp_path / "go-on"
    # The step runs until the tick lets it finish: it cannot end before a tick came.
    script = (
        f"import pathlib, time\nwhile not pathlib.Path({str(go_on)!r}).exists(): time.sleep(0.05)"
    )
    run_step("svc", "wait", [sys.executable, "-c", script], tmp_path / "b.log", tick=go_on.touch)
    assert go_on.exists()


def test_the_error_printer_shows_log_lines_as_they_are(capsys: pytest.CaptureFixture[str]) -> None:
    tail = "[/usr/include] not found\n[error] cmake failed"
    print_error(BuildStepFailed("lm", "build", 1, Path("/cache/logs/lm-build.log"), tail))
    out = capsys.readouterr().out
    assert "  | [/usr/include] not found" in out and "  | [error] cmake failed" in out


def test_the_rich_display_prints_a_line_per_finished_step(tmp_path: Path) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=True, color_system=None)
    with RichReporter(console) as reporter:
        progress = Progress(reporter)
        progress.report("kafka", "resolve Kafka jars", Outcome.CACHED, "/cache/[libs]")
        with progress.step("weaviate", "build Weaviate", "go install x", tmp_path / "w.log"):
            pass
        with pytest.raises(RuntimeError), progress.step("lm", "build the LM server"):
            raise RuntimeError("boom")
    text = out.getvalue()
    assert "kafka resolve Kafka jars: cached /cache/[libs]" in text
    assert f"weaviate build Weaviate: go install x  log: {tmp_path / 'w.log'}" in text
    assert "weaviate build Weaviate: built in 0.0s" in text
    assert "lm build the LM server: failed after" in text


def test_plain_lines_when_the_console_is_no_terminal() -> None:
    out = io.StringIO()
    with console_progress(Console(file=out, width=80)) as progress:
        progress.report("lm", "fetch the model", Outcome.CACHED, "/cache/" + "m" * 100 + ".gguf")
    assert out.getvalue().count("\n") == 1  # one line, never wrapped
    assert isinstance(progress.reporter, PlainReporter)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.04, "0.0s"), (12.34, "12.3s"), (311, "5m 11s"), (3720, "1h 02m")],
)
def test_elapsed_times_read_as_people_write_them(seconds: float, text: str) -> None:
    assert format_elapsed(seconds) == text


def test_a_log_tail_leaves_out_blank_lines_and_terminal_escapes(tmp_path: Path) -> None:
    log = tmp_path / "kafka-build.log"
    log.write_text("one\n\x1b[1;31mtwo\x1b[0m\n\x1b[0m\x1b[0m\n\n")
    assert log_tail(log, 2) == "one\ntwo"
    assert log_tail(tmp_path / "missing.log") == ""


def test_services_provision_prints_plain_lines_when_piped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from factstream.cli import app

    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_LM_URL", "http://gpu-box.invalid:8000/v1")
    result = CliRunner().invoke(app, ["services", "provision", "--only", "lm"])
    assert result.exit_code == 0, result.output
    assert re.search(
        r"^\d\d:\d\d:\d\d lm {8}provision: remote; uses http://gpu-box.invalid:8000/v1",
        result.output,
        re.MULTILINE,
    ), result.output


def test_each_steps_end_is_kept_for_the_results_file(
    progress: Progress, clock: FakeClock, tmp_path: Path
) -> None:
    with progress.step("lm", "build the LM server", "pip install", tmp_path / "lm.log"):
        clock.now += 300
    progress.report("kafka", "resolve Kafka jars", Outcome.CACHED, "/cache/libs")
    with pytest.raises(RuntimeError), progress.step("weaviate", "build Weaviate"):
        clock.now += 4
        raise RuntimeError("go: no network")
    assert [t.to_json() for t in progress.timings] == [
        {"service": "lm", "step": "build the LM server", "outcome": "built", "seconds": 300.0},
        {"service": "kafka", "step": "resolve Kafka jars", "outcome": "cached", "seconds": None},
        {"service": "weaviate", "step": "build Weaviate", "outcome": "failed", "seconds": 4.0},
    ]
