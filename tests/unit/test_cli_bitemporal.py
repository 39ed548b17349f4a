"""``factstream ask`` and ``factstream facts`` with --valid-at / --valid-from / --valid-to.

The commands open their clients as usual; here those are in-memory doubles holding
fixtures/bitemporal.py's knowledge base (Lawler in the Assembly until 2023-01-03).
"""

from __future__ import annotations

import pytest
from fixtures.bitemporal import ASSEMBLY, CONGRESS, HOME, lawler_store
from typer.testing import CliRunner

import factstream.clients
from factstream.cli import app
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics

runner = CliRunner()
REPLY = '{"reasoning": "from the facts", "answer": "an assemblyman"}'


@pytest.fixture(autouse=True)
def _memory_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    async def build(settings: Settings, registry: object) -> Clients:
        lm = ScriptedLM([REPLY])
        store = await lawler_store()
        return Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))

    monkeypatch.setattr(factstream.clients, "_build_clients", build)
    monkeypatch.setenv("FACTSTREAM_API_MIN_SIMILARITY", "-1")


def test_ask_at_a_valid_time_says_which_and_each_facts_interval() -> None:
    args = ["ask", "What is Lawler's position?", "-n", "desk", "--valid-at", "2022-06-01"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert ASSEMBLY in result.output and HOME in result.output
    assert CONGRESS not in result.output
    assert "2021-01-01 to 2023-01-03" in result.output  # the Assembly seat's interval
    assert "valid time (request): at 2022-06-01" in result.output
    assert "answer: an assemblyman" in result.output


def test_ask_reads_the_questions_time_and_as_of_with_it() -> None:
    result = runner.invoke(app, ["ask", "Lawler's position in 2022?", "-n", "desk"])
    assert result.exit_code == 0, result.output
    assert 'valid time (question): "in 2022" = 2022-01-01 to 2023-01-01' in result.output
    assert CONGRESS not in result.output
    # Believed on 2023-06-01 (before the news of 2023-09-01): the Assembly seat, still open.
    believed = ["--as-of", "2023-06-01", "--valid-from", "2023-02-01", "--valid-to", "2023-03-01"]
    result = runner.invoke(app, ["ask", "Lawler's position?", "-n", "desk", *believed])
    assert result.exit_code == 0, result.output
    assert ASSEMBLY in result.output and CONGRESS not in result.output
    assert "since 2021-01-01" in result.output
    assert "valid time (request): 2023-02-01 to 2023-03-01" in result.output


def test_facts_at_a_valid_time() -> None:
    result = runner.invoke(app, ["facts", "-n", "desk", "--valid-at", "2024-01-01T00:00:00Z"])
    assert result.exit_code == 0, result.output
    assert CONGRESS in result.output and HOME in result.output
    assert ASSEMBLY not in result.output and "since 2023-01-03" in result.output
    everything = runner.invoke(app, ["facts", "-n", "desk", "--search", "position in 2022"])
    assert everything.exit_code == 0, everything.output
    assert all(text in everything.output for text in (ASSEMBLY, CONGRESS, HOME))
    ended = runner.invoke(app, ["facts", "-n", "desk", "--valid-to", "2021-01-01"])
    assert ended.exit_code == 0 and "Mike Lawler" not in ended.output


@pytest.mark.parametrize("command", [["ask", "Who?"], ["facts"]])
def test_conflicting_valid_times_are_refused(command: list[str]) -> None:
    both = runner.invoke(
        app, [*command, "-n", "desk", "--valid-at", "2022-01-01", "--valid-to", "2023-01-01"]
    )
    assert both.exit_code == 2 and "not both" in both.output
    backwards = ["--valid-from", "2023-01-01", "--valid-to", "2022-01-01"]
    reversed_ = runner.invoke(app, [*command, "-n", "desk", *backwards])
    assert reversed_.exit_code == 2 and "--valid-from must be before --valid-to" in reversed_.output
