"""The fault tests' scripted world states only what its documents say: grounding keeps it all.

With the grounding check on by default, a scripted fact its document lacks would be
dropped and the fault tests would compare a thinner state than they mean to.
"""

from __future__ import annotations

from datetime import datetime

import pytest
from fixtures.reference import stream_scenario

from factstream.edit.grounding import check_grounded


@pytest.mark.parametrize("seed", [0, 7, 11])
def test_every_scripted_fact_and_rewrite_is_grounded(seed: int) -> None:
    scenario = stream_scenario(400, seed=seed)
    decisions = scenario.decisions
    checked = 0
    for document in scenario.documents:
        date = datetime.fromisoformat(document["timestamp"])
        facts = decisions.extract[document["text"].split("]")[0] + "]"]
        for fact in facts:
            assert check_grounded(str(fact), document["text"], date=date) is None, fact
            checked += 1
        for fact in facts:
            # A later document rewrites it; the rewrite may draw on the fact it replaces.
            rewrite = decisions.false.get(str(fact).removesuffix("."))
            if rewrite is not None:
                assert check_grounded(rewrite, "[doc-x] Stock report.", str(fact)) is None
    priced = [f for fs in decisions.extract.values() for f in fs if " costs " in str(f)]
    assert checked > 400 and priced
