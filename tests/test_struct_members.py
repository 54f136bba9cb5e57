"""Each desc mirrors its DML struct: member names in ABI order, from the seed pages.

The member lists are read from the ``Syntax`` blocks of the seed pages themselves
(house style 9.2); MAX_POOLING_GRAD's page has no Syntax block (erratum E10) and
RESAMPLE2 / MAX_POOLING2 have no seed page, so those three lists are transcribed from
DirectML.h as quoted in the spec (section 1.2).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dmlops.descs import REGISTRY, desc_class

SEEDS = Path(__file__).resolve().parents[1].parent / "shared" / "seeds"

FROM_HEADER = {
    "MAX_POOLING_GRAD": ("InputTensor", "InputGradientTensor", "OutputGradientTensor", "DimensionCount", "Strides",
                         "WindowSize", "StartPadding", "EndPadding", "Dilations"),
    "MAX_POOLING2": ("InputTensor", "OutputTensor", "OutputIndicesTensor", "DimensionCount", "Strides", "WindowSize",
                     "StartPadding", "EndPadding", "Dilations"),
    "RESAMPLE2": ("InputTensor", "OutputTensor", "InterpolationMode", "RoundingDirection", "DimensionCount", "Scales",
                  "InputPixelOffsets", "OutputPixelOffsets"),
}  # fmt: skip

# Copies of the seed pages' Syntax blocks, so the test also runs where ../shared is absent
# (CI clones only the project). When the seeds are present they are re-read and compared.
FROM_SEEDS = {
    "ROI_ALIGN": ("InputTensor", "ROITensor", "BatchIndicesTensor", "OutputTensor", "ReductionFunction",
                  "InterpolationMode", "SpatialScaleX", "SpatialScaleY", "OutOfBoundsInputValue",
                  "MinimumSamplesPerOutput", "MaximumSamplesPerOutput"),
    "RESAMPLE_GRAD1": ("InputGradientTensor", "OutputGradientTensor", "InterpolationMode", "RoundingDirection",
                       "DimensionCount", "Scales", "InputPixelOffsets", "OutputPixelOffsets"),
    "SLICE1": ("InputTensor", "OutputTensor", "DimensionCount", "InputWindowOffsets", "InputWindowSizes",
               "InputWindowStrides"),
    "GATHER": ("InputTensor", "IndicesTensor", "OutputTensor", "Axis", "IndexDimensions"),
}  # fmt: skip


def members_from_seed_syntax(struct: str) -> tuple[str, ...] | None:
    """Member names of ``struct <name> { ... };`` in any seed page, or None."""
    if not SEEDS.is_dir():
        return None
    pattern = re.compile(r"struct\s+" + struct + r"\s*\{(.*?)\};", re.S)
    for page in sorted(SEEDS.glob("*.txt")):
        m = pattern.search(page.read_text())
        if m:
            return tuple(re.findall(r"(\w+)\s*;", m.group(1)))
    return None


@pytest.mark.parametrize("op", sorted(FROM_SEEDS))
def test_seed_copies_match_the_pages(op: str) -> None:
    found = members_from_seed_syntax(f"DML_{op}_OPERATOR_DESC")
    if found is None:
        pytest.skip("seed pages not present (CI clones only the project)")
    assert found == FROM_SEEDS[op]


@pytest.mark.parametrize("op", sorted(REGISTRY))
def test_desc_members_follow_struct_order(op: str) -> None:
    cls = desc_class(op)
    assert cls.dml_name == f"DML_{op}_OPERATOR_DESC"
    assert str(cls.operator_type) == f"DML_OPERATOR_{op}"
    assert cls.dml_member_names() == {**FROM_SEEDS, **FROM_HEADER}[op]
