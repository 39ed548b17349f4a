"""Provisioning and start-up say what they do: each step's start, heartbeats, end or failure.

Services call one :class:`Progress`. It times each step and hands its events to a
:class:`ProgressReporter`: a rich live display on a terminal (:class:`RichReporter`),
timestamped plain lines otherwise (:class:`PlainReporter`: CI logs, ``make test``), or nothing
(:class:`SilentReporter`, the default of library calls)::

    with progress.step("weaviate", "build Weaviate", "go install ...", log) as step:
        run_step(..., tick=step.tick)  # heartbeats while the build runs
    progress.report("kafka", "resolve Kafka jars", Outcome.CACHED, str(libs))
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Protocol

from rich.console import Console
from rich.markup import escape
from rich.progress import Progress as RichProgress
from rich.progress import SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column

from factstream.config import Settings
from factstream_lab.stack.process import CacheLayout, log_tail

__all__ = [
    "PLAIN_HEARTBEAT_S",
    "Outcome",
    "PlainReporter",
    "Progress",
    "ProgressReporter",
    "RichReporter",
    "RunningStep",
    "SilentReporter",
    "Step",
    "StepTiming",
    "cache_banner",
    "console_progress",
    "format_elapsed",
    "print_tool_path",
]

PLAIN_HEARTBEAT_S = 30.0  # a CI log shows life this often during a long build
RICH_HEARTBEAT_S = 1.0  # the live display shows the log's last line this often
_LAST_LINE_CHARS = 120


class Outcome(StrEnum):
    """How a step ended."""

    BUILT = "built"  # compiled or installed here, now
    FETCHED = "fetched"  # downloaded here, now
    CACHED = "cached"  # the cache folder already had it
    STARTED = "started"  # this step started the server
    RUNNING = "running"  # the server already answered (ours from before, or another's)
    REMOTE = "remote"  # the settings point at a server elsewhere: not ours to build or run


@dataclass(frozen=True)
class Step:
    """One step: whose, what it is called, the command or endpoint, and where it logs."""

    service: str
    title: str
    what: str = ""
    log: Path | None = None


class ProgressReporter(Protocol):
    """Where the events of steps go; :class:`Progress` does the timing."""

    @property
    def heartbeat_s(self) -> float:
        """How often a running step reports that it still runs."""
        ...

    def started(self, step: Step) -> None:
        """A step began."""

    def heartbeat(self, step: Step, elapsed_s: float, last_line: str) -> None:
        """A step still runs; ``last_line`` is its log's newest line (empty if none)."""

    def finished(self, step: Step, outcome: Outcome, elapsed_s: float | None, note: str) -> None:
        """A step ended well; ``elapsed_s`` is None for one that had nothing to do."""

    def failed(self, step: Step, error: BaseException, elapsed_s: float) -> None:
        """A step raised ``error`` (which its caller prints, log tail included)."""


def format_elapsed(seconds: float) -> str:
    """``0.4s``, ``12.3s``, ``5m 11s``, ``1h 02m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m {whole % 60:02d}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"


def _last_line(log: Path | None) -> str:
    if log is None:
        return ""
    line = log_tail(log, 1).strip()
    return line if len(line) <= _LAST_LINE_CHARS else line[: _LAST_LINE_CHARS - 3] + "..."


def _first_line(error: BaseException) -> str:
    return (str(error).splitlines() or [type(error).__name__])[0]


class RunningStep:
    """The handle a step's body gets: tick while working, set the outcome."""

    def __init__(self, step: Step, reporter: ProgressReporter, clock: Callable[[], float]) -> None:
        self.step, self.outcome, self.note = step, Outcome.BUILT, ""
        self._reporter, self._clock = reporter, clock
        self._began = clock()
        self._next_beat = self._began + reporter.heartbeat_s

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self._began

    def tick(self) -> None:
        """Called often while the step works; reports a heartbeat when one is due."""
        now = self._clock()
        if now < self._next_beat:
            return
        while self._next_beat <= now:  # beats stay on the grid: 30s, 1m, 1m 30s ...
            self._next_beat += self._reporter.heartbeat_s
        self._reporter.heartbeat(self.step, now - self._began, _last_line(self.step.log))

    def ends(self, outcome: Outcome, note: str = "") -> None:
        """How the step ended, if not :attr:`Outcome.BUILT`."""
        self.outcome, self.note = outcome, note


@dataclass(frozen=True)
class StepTiming:
    """How one step ended and how long it took (None: it had nothing to do)."""

    service: str
    title: str
    outcome: Outcome | None  # None: it failed
    seconds: float | None

    def to_json(self) -> dict[str, object]:
        return {
            "service": self.service,
            "step": self.title,
            "outcome": "failed" if self.outcome is None else self.outcome.value,
            "seconds": None if self.seconds is None else round(self.seconds, 1),
        }


class Progress:
    """What provisioning and start-up call: steps with a body, and steps with nothing to do.

    Each step's end is also kept in :attr:`timings` (a results file's provisioning times).

    Args:
        reporter: Where the events go; nothing is shown without one.
        clock: Seconds, monotonic (tests pass a fake one).
    """

    def __init__(
        self, reporter: ProgressReporter | None = None, *, clock: Callable[[], float] | None = None
    ) -> None:
        self.reporter: ProgressReporter = reporter or SilentReporter()
        self._clock = clock or time.monotonic
        self.timings: list[StepTiming] = []  # in the order steps ended (threads append)

    @contextmanager
    def step(
        self, service: str, title: str, what: str = "", log: Path | None = None
    ) -> Iterator[RunningStep]:
        """Report the step's start, then its end with the elapsed time, or its failure."""
        step = Step(service, title, what, log)
        self.reporter.started(step)
        running = RunningStep(step, self.reporter, self._clock)
        try:
            yield running
        except BaseException as exc:  # Ctrl-C too: the display must say the step stopped
            self.timings.append(StepTiming(service, title, None, running.elapsed_s))
            self.reporter.failed(step, exc, running.elapsed_s)
            raise
        self.timings.append(StepTiming(service, title, running.outcome, running.elapsed_s))
        self.reporter.finished(step, running.outcome, running.elapsed_s, running.note)

    def report(
        self, service: str, title: str, outcome: Outcome, note: str = "", log: Path | None = None
    ) -> None:
        """A step that had nothing to do: cached, already running, remote."""
        self.timings.append(StepTiming(service, title, outcome, None))
        self.reporter.finished(Step(service, title, log=log), outcome, None, note)


class SilentReporter:
    """Reports nothing."""

    heartbeat_s = PLAIN_HEARTBEAT_S

    def started(self, step: Step) -> None:
        pass

    def heartbeat(self, step: Step, elapsed_s: float, last_line: str) -> None:
        pass

    def finished(self, step: Step, outcome: Outcome, elapsed_s: float | None, note: str) -> None:
        pass

    def failed(self, step: Step, error: BaseException, elapsed_s: float) -> None:
        pass


def _wall_clock() -> str:
    return time.strftime("%H:%M:%S")


class PlainReporter:
    """One timestamped line per event, for logs: ``12:00:31 weaviate  build Weaviate: ...``.

    Args:
        write: Takes one line (no newline) and shows it at once.
        now: The timestamp of a line.
        heartbeat_s: How often a long step says it still runs.
    """

    def __init__(
        self,
        write: Callable[[str], None],
        *,
        now: Callable[[], str] = _wall_clock,
        heartbeat_s: float = PLAIN_HEARTBEAT_S,
    ) -> None:
        self._write, self._now, self.heartbeat_s = write, now, heartbeat_s

    def _line(self, step: Step, *parts: str) -> None:
        text = "; ".join(p for p in parts if p)
        self._write(f"{self._now()} {step.service:<9} {step.title}: {text}")

    def started(self, step: Step) -> None:
        self._line(step, f"{step.what or step.title} ...", f"log: {step.log}" if step.log else "")

    def heartbeat(self, step: Step, elapsed_s: float, last_line: str) -> None:
        self._line(
            step,
            f"still running after {format_elapsed(elapsed_s)}",
            f"log: {step.log}" if step.log else "",
            f"last line: {last_line}" if last_line else "",
        )

    def finished(self, step: Step, outcome: Outcome, elapsed_s: float | None, note: str) -> None:
        took = f" in {format_elapsed(elapsed_s)}" if elapsed_s is not None else ""
        log = f"log: {step.log}" if step.log and elapsed_s is None else ""
        self._line(step, f"{outcome.value}{took}", note, log)

    def failed(self, step: Step, error: BaseException, elapsed_s: float) -> None:
        said = _first_line(error)
        log = f"log: {step.log}" if step.log and str(step.log) not in said else ""
        self._line(step, f"FAILED after {format_elapsed(elapsed_s)}: {said}", log)


_MARKS = {
    Outcome.BUILT: "[green]✓[/]",
    Outcome.FETCHED: "[green]✓[/]",
    Outcome.STARTED: "[green]✓[/]",
    Outcome.CACHED: "[dim]·[/]",
    Outcome.RUNNING: "[dim]·[/]",
    Outcome.REMOTE: "[dim]·[/]",
}


class RichReporter:
    """A live display on a terminal: a spinner, the step, its elapsed time and its log's newest
    line while it runs; a line above the display for each step that ended.

    Use it as a context manager: the display runs inside the ``with`` block.
    """

    heartbeat_s = RICH_HEARTBEAT_S

    def __init__(self, console: Console) -> None:
        self._console = console
        self._bar = RichProgress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            TimeElapsedColumn(),
            TextColumn(
                "{task.fields[detail]}",
                style="dim",
                markup=False,
                table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1),
            ),
            console=console,
            transient=True,
            expand=True,
        )
        self._tasks: dict[Step, TaskID] = {}

    def __enter__(self) -> RichReporter:
        self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._bar.stop()

    @staticmethod
    def _name(step: Step) -> str:
        return f"[bold]{escape(step.service)}[/] {escape(step.title)}"

    def _print(self, text: str, log: Path | None) -> None:
        where = f"  [dim]log: {escape(str(log))}[/]" if log else ""
        self._bar.console.print(f"{text}{where}", soft_wrap=True, highlight=False)

    def started(self, step: Step) -> None:
        self._print(f"[cyan]→[/] {self._name(step)}: {escape(step.what)}", step.log)
        self._tasks[step] = self._bar.add_task(self._name(step), detail=step.what)

    def heartbeat(self, step: Step, elapsed_s: float, last_line: str) -> None:
        if step in self._tasks and last_line:
            self._bar.update(self._tasks[step], detail=last_line)

    def _end(self, step: Step) -> None:
        task = self._tasks.pop(step, None)
        if task is not None:
            self._bar.remove_task(task)

    def finished(self, step: Step, outcome: Outcome, elapsed_s: float | None, note: str) -> None:
        self._end(step)
        took = f" in {format_elapsed(elapsed_s)}" if elapsed_s is not None else ""
        detail = f" [dim]{escape(note)}[/]" if note else ""
        log = step.log if elapsed_s is None else None
        self._print(f"{_MARKS[outcome]} {self._name(step)}: {outcome.value}{took}{detail}", log)

    def failed(self, step: Step, error: BaseException, elapsed_s: float) -> None:
        self._end(step)
        self._print(
            f"[bold red]✗[/] {self._name(step)}: failed after {format_elapsed(elapsed_s)}",
            step.log,
        )


def cache_banner(cache_dir: Path) -> str:
    """The line before provisioning: where the cache is and what a first run costs."""
    return (
        f"cache: {cache_dir}  (a first run downloads and builds Kafka, Weaviate and llama.cpp: "
        "about 25 minutes on 2 cores, see the README; later runs reuse the cache)"
    )


@contextmanager
def console_progress(console: Console) -> Iterator[Progress]:
    """A live display if ``console`` is a terminal, else plain lines on it."""
    if console.is_terminal and not console.is_dumb_terminal:
        with RichReporter(console) as reporter:
            yield Progress(reporter)
        return

    def write(line: str) -> None:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    yield Progress(PlainReporter(write))


def print_tool_path(provision: Callable[[CacheLayout, Progress], Path]) -> int:
    """The ``python -m`` entry of a cached tool: provision it (progress goes to stderr) in the
    configured cache folder and print its path; the exit status."""
    with console_progress(Console(stderr=True)) as progress:
        binary = provision(CacheLayout(Settings().local.cache_dir), progress)
    print(binary)
    return 0
