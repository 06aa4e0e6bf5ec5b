"""An export's dynamic_shapes as ``--dynamic`` specs and back (core/export/dim_specs.py), and the fixes torch or the
product suggests, each as specs: applied, the export that torch refused passes (torch's verdict is the truth)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from torch.export import Dim

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.dim_specs import (
    NoSpec,
    argument_names,
    flags_text,
    request_specs,
    shapes_from,
    specs_of,
    suggestions,
)
from jupyter_tracejit.core.export.options import DynamicSpecError, export_support_problem, parse_dynamic

pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))


class Loop(nn.Module):
    def forward(self, x):
        for i in range(x.size(0)):  # specialises x's dim 0
            x = x + i
        return x


class Windows(nn.Module):
    def forward(self, x, mask):
        return x.view(x.size(0), -1, 8).sum(-1) + mask.sum()  # needs x.size(1) a multiple of 8


class Wide(nn.Module):
    def forward(self, x):
        if x.shape[0] > 4:  # works for sizes above 4 only
            return x + 1
        return x - 1


def test_specs_say_each_form_torch_takes_and_back() -> None:
    batch, seq = Dim("batch", min=2, max=64), Dim("seq")
    shapes = {"x": {0: batch, 1: Dim.AUTO}, "mask": {0: batch, 1: 8 * Dim("_k", min=1, max=16)}, "y": None}
    specs = specs_of(shapes, None)
    assert specs == ["x:0=batch[2,64]", "x:1", "mask:0=batch", "mask:1=8*_k[1,16]"]
    assert specs_of(({0: seq}, (None, Dim.STATIC)), ["a", "b"]) == ["a:0=seq"]
    assert (
        flags_text(specs)
        == '--dynamic "x:0=batch[2,64]" --dynamic x:1 --dynamic mask:0=batch --dynamic "mask:1=8*_k[1,16]"'
    )
    back = parse_dynamic(specs)
    assert specs_of(back, None) == specs  # the round trip
    assert str(back["mask"][1]) == "8*_k" and (back["mask"][1].root.min, back["mask"][1].root.max) == (1, 16)
    for shapes, words in [
        ({"x": {0: Dim.DYNAMIC}}, "x:0 is Dim.DYNAMIC, which has no --dynamic spec"),
        ({"x": {0: 2 * Dim("k") + 1}}, "x:0 is 2*k + 1: only a multiple (8*seq) has a --dynamic spec"),
        ({"x": {"a": {0: Dim.AUTO}}}, "x's dynamic shapes are nested"),
        (({0: seq},), "a tuple by position, and the inputs' names are not known"),
    ]:
        with pytest.raises(NoSpec) as refused:
            specs_of(shapes, None)
        assert words in str(refused.value)
    with pytest.raises(DynamicSpecError, match="a multiple is 2\\* or more"):
        parse_dynamic(["x:0=1*k"])


def test_specs_become_a_dynamic_shapes_with_every_argument_named() -> None:
    names = argument_names(Windows(), (torch.randn(2, 16),), {"mask": torch.randn(2, 16)})
    assert names == ["x", "mask"]
    shapes = shapes_from(["x:1=seq[2,64]"], names)
    assert shapes is not None and list(shapes) == ["x", "mask"] and shapes["mask"] is None
    assert shapes_from([], names) is None
    with pytest.raises(NoSpec, match="y is not an input of the forward \\(its inputs: x, mask\\)"):
        shapes_from(["y:0"], names)
    assert argument_names(lambda *xs: xs, (torch.randn(2),), None) is None  # *args: not by name


def export_with(run, specs):
    names = argument_names(run.request.target, run.request.args, run.request.kwargs)
    return run.request.run(dynamic_shapes=shapes_from(specs, names))


def test_torchs_suggested_fixes_as_specs_make_the_refused_exports_pass() -> None:
    seq = Dim("seq", min=2, max=64)
    cases = [
        # a Dim the code made a constant: torch says "batch = 3": the dim becomes static
        (Loop(), (torch.randn(3, 4),), {"x": {0: Dim("batch", min=2, max=64)}}, "batch = 3", [], []),
        # a size that must be a multiple: "_seq = Dim('_seq', min=1, max=8)" then "seq = 8*_seq", both inputs
        (Windows(), (torch.randn(2, 16), torch.randn(2, 16)), {"x": {1: seq}, "mask": {1: seq}}, "seq = 8*_seq",
         ["x:1=8*_seq[1,8]", "mask:1=8*_seq"], ["x:1=8*_seq[1,8]", "mask:1=8*_seq"]),
        # a narrower range, the shapes given by position
        (Wide(), (torch.randn(6, 4),), ({0: Dim("batch", min=2, max=64)},), "batch = Dim('batch', min=5, max=64)",
         ["x:0=batch[5,64]"], ["x:0=batch[5,64]"]),
    ]  # fmt: skip
    for model, args, shapes, words, fixed, changed in cases:
        run = tj.export(model, args, dynamic_shapes=shapes, draft="never")
        assert not run.ok and run.error is not None, run.summary()  # torch refuses it
        specs = request_specs(run.request)
        (fix,) = suggestions(run, specs)
        assert fix.source == "torch" and words in fix.text, fix
        assert fix.specs == fixed and fix.changed == changed
        assert fix.removed == [
            s for s in specs if s not in fixed and s.split("=")[0] not in {f.split("=")[0] for f in fixed}
        ]
        again = export_with(run, fix.specs)
        assert again.ok, again.summary()  # and torch takes the fix


def test_a_dim_auto_the_code_specialised_is_offered_static() -> None:
    run = tj.export(Loop(), (torch.randn(3, 4),), dynamic_shapes={"x": {0: Dim.AUTO}}, draft="never")
    assert run.ok and request_specs(run.request) == ["x:0"]
    (fix,) = suggestions(run, ["x:0"])
    assert fix.source == "jupyter-tracejit" and fix.text.startswith("x.size()[0] became 3")
    assert fix.specs == [] and fix.removed == ["x:0"]
    assert export_with(run, fix.specs).ok
    # "auto": the dims that differ from the check inputs, as specs
    auto = tj.export(Wide(), (torch.randn(6, 4),), dynamic_shapes="auto", check_inputs=[(torch.randn(6, 5),)])
    assert request_specs(auto.request) == ["x:1"]


def test_the_specs_to_paste_export_a_model_of_several_inputs() -> None:
    """What the explorer shows to paste (``--dynamic x:1=...``) names one argument of two: the magic and the
    command line make the other static (torch refuses a dict without a key per argument)."""
    from jupyter_tracejit.core.command import CaptureCall
    from jupyter_tracejit.core.export.command import capture

    x, mask = torch.randn(2, 16), torch.randn(2, 16)
    call = CaptureCall(Windows(), [x], {"mask": mask}, options={"dynamic_shapes": parse_dynamic(["x:1=8*k[1,8]"])})
    run = capture(call).run()
    assert run.ok, run.summary()
    assert request_specs(run.request) == ["x:1=8*k[1,8]"]
