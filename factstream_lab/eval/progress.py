"""Progress bars for evaluation runs (rich), behind the harness's Progress interface."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from factstream_lab.eval.clark import Progress as RunProgress

__all__ = ["RichProgress"]


class RichProgress(RunProgress):
    """One bar per stage (documents up to a checkpoint, that checkpoint's questions)."""

    def __init__(self, console: Console, label: str) -> None:
        self._label = label
        self._bars = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> RichProgress:
        self._bars.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._bars.stop()

    def stage(self, name: str, total: int) -> None:
        self._task = self._bars.add_task(f"{self._label}: {name}", total=total)

    def advance(self, steps: int) -> None:
        if self._task is not None:
            self._bars.advance(self._task, steps)
