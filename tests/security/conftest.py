"""The attack suite's files: every hostile file, crafted once per session, each payload aimed at a marker file in
one folder; after every test that folder must still be empty (nothing ran)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_tracejit.core.export.options import export_support_problem
from tests.security import hostile as h

#: file name -> (the tag of tj.load's refusal, words its message must hold)
REFUSED: dict[str, tuple[str, str]] = {
    "opaque_obj.pt2": ("untrusted_pickle", "'k' is a pickled Python object (data/constants/opaque_obj_0)"),
    "opaque_obj_uint8.pt2": ("untrusted_pickle", "pickle.loads"),
    "custom_obj.pt2": ("untrusted_pickle", "torch._C._pickle_load_obj"),
    "use_pickle_constant.pt2": ("untrusted_pickle", "data/constants/tensor_evil:data.pkl names posix.system"),
    "raw_pickle_constant.pt2": ("untrusted_pickle", "old-style raw pickle"),
    "use_pickle_weight.pt2": ("untrusted_pickle", "data/weights/weight_evil:data.pkl names posix.system"),
    "sample_inputs.pt2": ("untrusted_pickle", "data/sample_inputs/model.pt:data.pkl names posix.system"),
    "legacy_weights.pt2": ("untrusted_pickle", "data/weights/model.pt:data.pkl names posix.system"),
    "expression.pt2": ("untrusted_code", "sympy.sympify"),
    "aotinductor.pt2": ("untrusted_code", "AOTInductor package"),
    "program_bomb.pt2": ("zip_bomb", "inflates"),
    "data_pkl.pt": ("untrusted_pickle", "its pickle data.pkl names posix.system"),
    "data_pkl_stack_global.pt": ("untrusted_pickle", "its pickle data.pkl names posix.system"),
    "constants_pkl.pt": ("untrusted_pickle", "its pickle constants.pkl names posix.system"),
    "traced_inputs_pkl.pt": ("untrusted_pickle", "its pickle traced_inputs.pkl names posix.system"),
    "two_folders.pt": ("corrupt_archive", "more than one top-level folder"),
    "named_twice.pt": ("corrupt_archive", "twice"),
    "many_members.pt": ("zip_bomb", "lists 10000000 members"),
}

needs_export = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))


@pytest.fixture(scope="session")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where every payload would create its file."""
    return tmp_path_factory.mktemp("markers")


@pytest.fixture(autouse=True)
def nothing_ran(markers: Path) -> Iterator[None]:
    yield
    assert sorted(p.name for p in markers.iterdir()) == [], "a payload ran"


def craft(d: Path, pt2: Path, pt: Path, marker: Callable[[str], Path]) -> dict[str, Path]:
    """Every hostile file of :data:`REFUSED`, made in ``d`` from a benign exported program ``pt2`` and traced
    archive ``pt``, each payload touching ``marker(<its name>)``."""
    out = {"exported.pt2": pt2, "traced.pt": pt}
    out["opaque_obj.pt2"] = h.constant_as(pt2, d / "opaque_obj.pt2", "opaque_obj_0", h.payload(marker("opaque")))
    out["opaque_obj_uint8.pt2"] = h.constant_as(
        pt2, d / "opaque_obj_uint8.pt2", "opaque_obj_0", h.payload(marker("uint8")), use_pickle=False
    )
    out["custom_obj.pt2"] = h.constant_as(pt2, d / "custom_obj.pt2", "custom_obj_0", h.payload(marker("custom")))
    out["use_pickle_constant.pt2"] = h.constant_as(
        pt2, d / "use_pickle_constant.pt2", "tensor_evil", h.torch_save_payload(marker("constant"))
    )
    out["raw_pickle_constant.pt2"] = h.constant_as(
        pt2, d / "raw_pickle_constant.pt2", "tensor_evil", h.payload(marker("raw"))
    )
    out["use_pickle_weight.pt2"] = h.weight_as_pickle(
        pt2, d / "use_pickle_weight.pt2", h.torch_save_payload(marker("weight"))
    )
    out["sample_inputs.pt2"] = h.sample_inputs_as(pt2, d / "sample_inputs.pt2", h.torch_save_payload(marker("inputs")))
    out["legacy_weights.pt2"] = h.legacy_weights(pt2, d / "legacy_weights.pt2", h.torch_save_payload(marker("legacy")))
    out["expression.pt2"] = h.expression(pt2, d / "expression.pt2", marker("expression"))
    out["aotinductor.pt2"] = h.compiled(pt2, d / "aotinductor.pt2")
    out["program_bomb.pt2"] = h.program_bomb(pt2, d / "program_bomb.pt2")
    out["data_pkl.pt"] = h.pickle_member(pt, d / "data_pkl.pt", "data.pkl", h.payload(marker("data")))
    out["data_pkl_stack_global.pt"] = h.pickle_member(
        pt, d / "data_pkl_stack_global.pt", "data.pkl", h.payload(marker("data4"), protocol=4)
    )
    out["constants_pkl.pt"] = h.pickle_member(pt, d / "constants_pkl.pt", "constants.pkl", h.payload(marker("c")))
    out["traced_inputs_pkl.pt"] = h.pickle_member(
        pt, d / "traced_inputs_pkl.pt", "traced_inputs.pkl", h.payload(marker("inputs_pt"))
    )
    out["two_folders.pt"] = h.two_folders(pt, out["data_pkl.pt"], d / "two_folders.pt")
    out["named_twice.pt"] = h.named_twice(pt, d / "named_twice.pt", "data.pkl", h.payload(marker("twice")))
    out["many_members.pt"] = h.many_members(d / "many_members.pt")
    return out


@pytest.fixture(scope="session")
def files(tmp_path_factory: pytest.TempPathFactory, markers: Path) -> dict[str, Path]:
    """:func:`craft`'s files (each payload touching a file in ``markers``), and the benign ``exported.pt2`` and
    ``traced.pt`` they were made from."""
    if export_support_problem() is not None:
        pytest.skip(str(export_support_problem()))
    d = tmp_path_factory.mktemp("hostile")
    out = craft(d, h.exported(d / "exported.pt2"), h.traced(d / "traced.pt"), lambda name: markers / name)
    assert set(REFUSED) <= set(out)
    return out
