"""A seeded sample of the element-wise family's differential campaign (numpy vs directml).

A few random cases per operator for all 92 (``_elementwise_campaign.py``; the full
campaign is ``python scripts/directml_parity.py --family elementwise``). Every difference
must be one the campaign puts down to a cause: lavapipe's float-to-integer conversion,
or a device approximation outside D3D's accuracy rules (``KNOWN_KINDS``).
"""

from __future__ import annotations

import pytest
from _directml import directml  # noqa: F401  (fixture)
from _elementwise_campaign import KNOWN_KINDS, campaign

from dmlops.descs.elementwise import OPERATORS

pytestmark = [pytest.mark.directml, pytest.mark.usefixtures("directml")]

CASES_PER_OPERATOR = 4
SEED = 20


def test_seeded_sample_of_every_operator(capsys: pytest.CaptureFixture[str]) -> None:
    tallies = campaign(sorted(OPERATORS), CASES_PER_OPERATOR, SEED)
    run = sum(t.run for t in tallies.values())
    with capsys.disabled():
        print(f"\nelement-wise campaign sample: {run} cases run on numpy and directml, seed {SEED}")
    assert len(tallies) == 92
    unexplained = {
        op: {k: n for k, n in t.kinds.items() if not k.startswith("stack:") and k not in KNOWN_KINDS}
        for op, t in tallies.items()
    }
    unexplained = {op: kinds for op, kinds in unexplained.items() if kinds}
    examples = {op: tallies[op].examples for op in unexplained}
    assert not unexplained, f"differences not put down to a cause: {unexplained}; {examples}"
    assert all(t.run > 0 for t in tallies.values()), {op: dict(t.skipped) for op, t in tallies.items() if not t.run}
