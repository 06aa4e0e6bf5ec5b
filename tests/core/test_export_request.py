"""export(...): torch.export's arguments in, a run out, never raising; bad arguments named with their fix; re-export
with changed options; dynamic_shapes="auto" from check_inputs."""

from __future__ import annotations

import threading
import warnings

import pytest
import torch
from torch import nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.export.options import ExportOptions, export_support_problem
from jupyter_tracejit.core.export.request import auto_dynamic_shapes, export
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.validate import check_run
from tests.models import LoopOverRows

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def scale(x, y):
    return x * 2 + y


def test_an_export_is_a_run_that_records_its_options_and_exports_again(capfd):
    model = MLP()
    run = export(model, (torch.randn(3, 8),))
    assert run.error is None and run.backend == "export" and run.graph is not None
    assert isinstance(run.traced, torch.export.ExportedProgram)
    assert run.options == {
        "dynamic_shapes": None,
        "strict": False,
        "check_inputs": None,
        "draft": "on_request",
        "compare_trace": False,
        "module_mode": "as_is",
        "no_grad": False,
    }
    data = run.to_json()
    check_run(data)
    assert TraceRun.from_json(data).to_json() == data
    again = run.request.run(strict=True, module_mode="eval")
    assert again.error is None and again.options["strict"] is True and again.options["module_mode"] == "eval"
    assert model.training, "eval for that export only"
    assert capfd.readouterr().err == ""


def test_a_function_and_a_lone_tensor():
    run = export(scale, torch.ones(2, 3), {"y": torch.ones(2, 3)})
    assert run.error is None and run.target.kind == "function" and run.target.name == "scale"
    assert run.inputs["forward"][0] == "Float(2, 3)"


def test_auto_marks_the_dims_that_differ_from_the_check_inputs():
    x = torch.randn(3, 8)
    shapes = auto_dynamic_shapes((x,), [(torch.randn(5, 8),)])
    assert shapes == ({0: torch.export.Dim.AUTO},)
    run = export(MLP(), (x,), dynamic_shapes="auto", check_inputs=[(torch.randn(5, 8),)])
    assert run.error is None, run.error
    assert run.options["dynamic_shapes"] == "auto" and run.options["check_inputs"] == [["Float(5, 8)"]]
    first = run.graph.values[run.graph.inputs[0]]
    assert isinstance(first.shape[0], str) and first.shape[1] == 8  # the batch is a symbol, the features are not


def test_bad_arguments_are_named_with_their_fix(capfd):
    scripted = torch.jit.script(MLP())
    cases = [
        (lambda: export(scripted, (torch.randn(2, 8),)), "already_script", "Export the original nn.Module"),
        (lambda: export(MLP(), [torch.randn(2, 8)]), "bad_argument", "args=(x,)"),
        (lambda: export(MLP(), (torch.randn(2, 8),), draft="sometimes"), "bad_argument", "'on_failure'"),
        (lambda: export(MLP(), (torch.randn(2, 8),), module_mode="test"), "bad_argument", "module_mode='eval'"),
        (lambda: export(MLP(), (torch.randn(2, 8),), dynamic_shapes="auto"), "bad_argument", "check_inputs"),
        (lambda: export(MLP(), (torch.randn(2, 8),), dynamic_shapes="all"), "bad_argument", "Dim.AUTO"),
        (lambda: export(MLP(), (torch.randn(2, 8),), strict="yes"), "bad_argument", "strict=True"),
        (lambda: export(42, ()), "bad_argument", "export(model, (x,))"),
        # torch's own words were "object of type 'int' has no len()" and a bare AssertionError
        (lambda: export(MLP(), (torch.randn(2, 8),), dynamic_shapes=5), "dynamic_shapes_type", "{'x': {0:"),
        (lambda: export(MLP(), (torch.randn(2, 8),), dynamic_shapes={0, 1}), "dynamic_shapes_type", "a tuple"),
        # three inputs for a forward of one: torch's TypeError read as the model's failure
        (lambda: export(MLP(), (torch.randn(2, 8),) * 3), "inputs_mismatch", "MLP.forward: (x,)"),
    ]
    for make, tag, fix in cases:
        run = make()
        assert run.error is not None and run.error.phase == "arguments", run.error
        assert run.error.tag == tag and fix in run.error.hint, (run.error.tag, run.error.hint)
        assert run.backend == "export" and not run.graphs
        check_run(run.to_json())
    assert capfd.readouterr().err == ""


def test_options_refuse_a_name_that_is_not_one():
    try:
        ExportOptions().replace(check_trace=False)
    except TypeError as e:
        assert "unknown export option(s): check_trace" in str(e) and "dynamic_shapes" in str(e)
    else:
        raise AssertionError("replace accepted an unknown option")


def test_a_torch_without_what_export_needs_is_a_clear_error(monkeypatch):
    from jupyter_tracejit.core.export import options as export_options

    monkeypatch.setattr(export_options.torch.export.Dim, "AUTO", None, raising=False)
    monkeypatch.delattr(export_options.torch.export.Dim, "AUTO")
    assert "lacks what the export back end uses" in (export_options.export_support_problem() or "")
    run = export(MLP(), (torch.randn(2, 8),))
    assert run.error is not None and run.error.tag == "torch_too_old" and "tj.trace" in run.error.hint


def branchy(x):
    if x.sum() > 0:  # data-dependent: export refuses it
        return x.sin()
    return x.cos()


class WithCond(nn.Module):
    def forward(self, x):
        return torch.cond(x.sum() > 0, torch.sin, torch.cos, (x,))


def test_a_failed_export_shows_the_drafts_graph_and_report(capfd):
    if_line = branchy.__code__.co_firstlineno + 1
    run = export(branchy, (torch.ones(3),), draft="on_failure")  # the draft at once, before the run returns
    assert run.error is not None and run.error.phase == "export" and run.error.line == if_line
    assert run.export is not None and run.export.draft, "the draft's report"
    assert any(f.line == if_line and f.file == __file__ for f in run.export.draft), run.export.draft
    assert run.graph is not None and run.traced is None  # the draft's graph, not an exported program of the user's
    # the draft's asserts say what they assert (its conditions simplify to True with the example's value)
    asserts = run.export.guards_of("runtime_assert")
    assert asserts and all(g.expr not in ("True", "False") for g in asserts), asserts
    check_run(run.to_json())
    assert capfd.readouterr().err == ""
    never = export(branchy, (torch.ones(3),), draft="never")
    assert never.error is not None and not never.graphs and never.export is not None and never.export.draft is None


def test_a_draft_beside_an_accepted_export_leaves_it_standing(monkeypatch):
    run = export(WithCond(), (torch.ones(3),), draft="always")
    assert run.error is None and run.traced is not None and run.export is not None
    assert run.export.draft == [] and not [f for f in run.findings if f.kind == "draft_failure"]
    assert any(n.kind.endswith("cond") for n in run.graph.nodes)

    def crash(*args, **kwargs):
        raise RuntimeError("draft_export cannot handle this program")

    monkeypatch.setattr(torch.export, "draft_export", crash)
    run = export(WithCond(), (torch.ones(3),), draft="always")
    notes = [f for f in run.findings if f.kind == "draft_failure"]
    assert run.error is None and run.traced is not None and run.export is not None and run.export.draft is None
    assert len(notes) == 1 and notes[0].severity == "info" and "cannot handle this program" in notes[0].message
    assert "the export itself succeeded and stands" in notes[0].message
    failed = export(branchy, (torch.ones(3),), draft="on_failure")
    assert failed.error is not None and failed.error.phase == "export" and not failed.graphs
    assert "export's own error stands" in next(f for f in failed.findings if f.kind == "draft_failure").message
    assert failed.export is not None and failed.export.draft_offer is None  # ran at once: nothing offered
    offered = export(branchy, (torch.ones(3),))  # the draft on request: it fails when asked, the run stands
    assert offered.export is not None and offered.export.draft_offer is not None
    assert offered.draft() is offered and offered.export.draft_offer.status == "failed"
    assert "export's own error stands" in next(f for f in offered.findings if f.kind == "draft_failure").message
    assert offered.error is not None and not offered.graphs


def test_compare_trace_puts_the_trace_beside_the_export():
    model = MLP()
    run = export(model, (torch.randn(3, 8),), compare_trace=True)
    assert run.error is None and run.compared is not None
    assert run.compared.comparison.coverage == 1.0 and len(run.compared.comparison.matched) == 3  # linear relu linear
    assert run.compared.trace_summary.startswith("MLP: ok")
    assert run.options["compare_trace"] is True
    data = run.to_json()
    check_run(data)
    assert TraceRun.from_json(data).to_json() == data
    broken = TraceRun.from_json(data).to_json()
    broken["compared"]["comparison"]["matched"][0][1] = 999
    try:
        check_run(broken)
    except ValueError as e:
        assert "compared/comparison/matched/0/1" in str(e)
    else:
        raise AssertionError("a comparison naming a node that does not exist passed")
    failed = export(branchy, (torch.ones(3),), compare_trace=True, draft="never")
    assert failed.compared is None
    assert [f.kind for f in failed.findings if f.kind == "compare_trace"] == ["compare_trace"]


class TwoInputs(nn.Module):
    def forward(self, x, mask=None):
        return x * 2 if mask is None else x * mask


def test_dynamic_shapes_naming_an_argument_not_given_or_a_dim_not_there_say_so(capfd):
    x = torch.ones(3, 4)
    seq = torch.export.Dim("seq", min=2, max=64)
    run = export(TwoInputs(), (x,), dynamic_shapes={"x": {0: seq}, "mask": {0: seq}}, draft="never")
    assert run.error is not None and run.error.tag == "dynamic_shapes_mismatch"
    # it said 'mask' "is not an argument of TwoInputs.forward"
    assert run.error.message == (
        "dynamic_shapes names 'mask', which TwoInputs.forward takes but these inputs do not give (its inputs: x): "
        "give it an example input (kwargs=...) or leave it out of dynamic_shapes"
    )
    for shapes in ({"x": {2: seq}}, ({2: seq},)):
        run = export(TwoInputs(), (x,), dynamic_shapes=shapes)
        # torch raised a bare "IndexError: list assignment index out of range"
        assert run.error is not None and run.error.phase == "arguments", run.error
        assert run.error.message == "dynamic_shapes marks dim 2 of x, which has 2 dims (3 x 4)"
        assert "from 0 to 1" in run.error.hint and not run.findings
    assert export(TwoInputs(), (x,), dynamic_shapes={"x": {-2: seq}}).error is None  # torch counts from the end
    assert capfd.readouterr().err == ""


def test_dynamic_shapes_that_do_not_follow_the_inputs_show_the_structure_they_need(capfd):
    x = torch.ones(3, 4)
    for shapes in ({"y": {0: torch.export.Dim.AUTO}}, ({0: torch.export.Dim.AUTO}, {1: None})):
        run = export(TwoInputs(), (x,), dynamic_shapes=shapes, draft="never")
        assert run.error is not None and run.error.phase == "arguments", run.error
        assert run.error.tag == "dynamic_shapes_mismatch"
        assert "{'x': {0: None, 1: None}} (x is 3 x 4)" in run.error.hint
        assert '--dynamic "x:0=name[min,max]"' in run.error.hint
        if isinstance(shapes, dict):
            assert (
                run.error.message
                == "dynamic_shapes names 'y', which is not an argument of TwoInputs.forward (its inputs: x)"
            )
    # arguments export refused refuse its draft too: no draft run, no note about one
    run = export(TwoInputs(), (x,), dynamic_shapes={"y": {0: torch.export.Dim.AUTO}})
    assert run.error is not None and run.error.phase == "arguments" and "draft" not in run.timings
    assert not [f for f in run.findings if f.kind == "draft_failure"]
    assert capfd.readouterr().err == ""


def test_dynamic_specs_of_the_magic_and_the_command_line():
    from jupyter_tracejit.core.export.options import DynamicSpecError, parse_dynamic

    shapes = parse_dynamic(["x:0", "x:1=seq[2,64]", "mask:1=seq"])
    assert shapes["x"][0] is torch.export.Dim.AUTO
    assert shapes["x"][1] is shapes["mask"][1] and shapes["x"][1].__name__ == "seq"
    assert (shapes["x"][1].min, shapes["x"][1].max) == (2, 64)
    run = export(
        TwoInputs(), (torch.ones(3, 8), torch.ones(3, 8)), dynamic_shapes=parse_dynamic(["x:1=seq[2,64]", "mask:1=seq"])
    )
    assert run.error is None and run.export is not None and [s.name for s in run.export.symbols]
    for bad, words in (
        ("x0", "is not of the form"),
        ("x:0=b[64,2]", "min > max"),
        ("x:a", "is not of the form"),
    ):
        try:
            parse_dynamic([bad])
        except DynamicSpecError as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"{bad!r} parsed")
    try:
        parse_dynamic(["x:0=b", "x:0=c"])
    except DynamicSpecError as e:
        assert "given twice" in str(e)


def test_recorded_dynamic_shapes_write_every_bound():
    batch = torch.export.Dim("batch", min=2, max=64)
    run = export(MLP(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: batch}}, draft="never")
    assert run.error is None, run.error
    assert run.options["dynamic_shapes"] == "{'x': {0: Dim('batch', min=2, max=64)}}"  # torch's repr drops min=2
    auto = export(MLP(), (torch.randn(3, 8),), dynamic_shapes=({0: torch.export.Dim.AUTO},), draft="never")
    assert auto.options["dynamic_shapes"] == "({0: Dim.AUTO},)"


def test_tj_export_and_compare_are_the_packages_api():
    import jupyter_tracejit as tj

    model, x = MLP(), torch.randn(3, 8)
    traced, exported = tj.trace(model, (x,)), tj.export(model, (x,))
    assert exported.backend == "export" and exported.request is not None
    comparison = tj.compare(traced, exported)
    assert comparison is exported.compared and comparison.comparison.coverage == 1.0
    try:
        tj.compare(exported, traced)
    except ValueError as e:
        assert "a trace run and an export run, in that order" in str(e)
    else:
        raise AssertionError("compare took its runs the wrong way round")


def test_the_badge_speaks_of_the_export_and_of_what_was_checked():
    static = export(MLP(), (torch.randn(2, 8),))
    assert static.ok and static.check is not None and not static.check.cases
    assert static.verdict.reasons == [
        "nothing says the export is wrong; nothing to check (no check_inputs, no dynamic ranges)"
    ]
    assert static.summary().endswith("nothing to check")
    # Dim.AUTO specialises the loop's count silently; a check input of another size then fails export's guard
    auto = export(LoopOverRows(), (torch.randn(3, 4),), dynamic_shapes="auto", check_inputs=[(torch.randn(5, 4),)])
    assert auto.verdict.label == "check failed"
    assert auto.verdict.reasons[0] == "the export check failed: 1 input set raised"
    assert "x.size()[0] became the constant 3" in auto.verdict.reasons[1]


def test_compare_trace_traces_the_same_inputs_keyword_ones_included():
    x, mask = torch.randn(3, 4), torch.ones(3, 4)
    for args, kwargs in (((x,), {"mask": mask}), ((), {"x": x, "mask": mask})):
        run = export(TwoInputs(), args, kwargs, compare_trace=True)
        assert run.error is None and run.compared is not None, run.findings
        # the trace took the mask too: its graph multiplies by it, as the export's does
        assert run.compared.comparison.coverage == 1.0 and not run.compared.comparison.lines
        assert len(run.compared.trace.inputs) == len(run.graph.inputs) + 1  # + the module (self)


class ExtraKeywords(nn.Module):
    def forward(self, x, **extra):
        return x * extra["mask"]


def test_auto_marks_the_dims_of_keyword_inputs_too():
    x, mask, x5, mask5 = torch.randn(3, 4), torch.ones(3, 4), torch.randn(5, 4), torch.ones(5, 4)
    auto = {0: torch.export.Dim.AUTO}
    assert auto_dynamic_shapes((x,), [((x5,), {"mask": mask5})], {"mask": mask}, TwoInputs()) == {
        "x": auto,
        "mask": auto,
    }
    assert auto_dynamic_shapes((x,), [((x5,), {"mask": mask5})], {"mask": mask}, ExtraKeywords()) == {
        "x": auto,
        "extra": {"mask": auto},
    }
    # by keyword only, and mixed: each exported with a dynamic batch that the check input set takes (they were left
    # static: "auto" by position named no keyword input, or did not match the inputs at all). (torch 2.13 cannot
    # export **kwargs with dynamic shapes: "Must provide a tree_name", whatever their structure)
    for args, kwargs, check in (
        ((), {"x": x, "mask": mask}, {"x": x5, "mask": mask5}),
        ((x,), {"mask": mask}, ((x5,), {"mask": mask5})),
    ):
        run = export(TwoInputs(), args, kwargs, dynamic_shapes="auto", check_inputs=[check])
        assert run.error is None and run.check is not None and run.check.ok, (run.error, run.summary())
        assert run.export is not None and [s.sources for s in run.export.symbols if s.kind == "backed"], run.export


class Flagged(nn.Module):
    def forward(self, x, double: bool = False):
        return x * 2 if double else x + 1


def test_compare_trace_binds_python_values_given_by_keyword():
    model, x = Flagged(), torch.randn(3)
    # torch.jit.trace takes tensors only: it failed "Got bool" (a Hugging Face model's use_cache=False, say)
    run = export(model, (x,), {"double": True}, compare_trace=True)
    assert run.compared is not None, run.findings
    assert [n.kind for n in run.compared.trace.nodes if n.role == "op"] == ["aten::mul"]  # the branch export took
    assert run.compared.comparison.coverage == 1.0 and "forward" not in vars(model)  # the module's forward is back
    function = export(lambda x, double=False: x * 2 if double else x + 1, (x,), {"double": True}, compare_trace=True)
    assert function.compared is not None and function.compared.comparison.coverage == 1.0, function.findings


class MixedOutput(nn.Module):
    def forward(self, x):
        return {"y": x + 1, "n": 3}  # the tracer prints the whole value it cannot type: every element of y


def test_a_side_that_failed_is_named_in_a_short_note_with_its_own_hint():
    # the note gave the first line only, and a generic hint: the trace's own says what to change
    x = torch.randn(300)
    run = export(MixedOutput(), (x,), compare_trace=True)
    assert run.error is None and run.compared is None
    (note,) = [f for f in run.findings if f.kind == "compare_trace"]
    trace_error = tj.trace(MixedOutput(), (x,), strict=False).error
    assert trace_error is not None and trace_error.hint and len(trace_error.message) > 1000
    assert note.message.startswith("the trace recorded no graph (") and len(note.message) < 300, note.message
    assert note.hint.endswith(f"The trace's hint: {trace_error.hint}")


class KeywordsOnly(nn.Module):
    def forward(self, **kw):
        return kw["x"] * 2 + kw["y"].sum()


class Named(nn.Module):
    """The wrapper the **kwargs hint describes."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x, y):
        return self.model(x=x, y=y)


def test_dynamic_shapes_for_inputs_taken_through_kwargs_say_what_works(capfd):
    """torch 2.13 refuses dynamic_shapes on a **kwargs forward whatever its structure (an AssertionError inside its
    own code for the nested one); the run says so and the wrapper its hint describes exports with the Dim."""
    inputs = {"x": torch.randn(4, 3), "y": torch.randn(4, 3)}
    batch = torch.export.Dim("batch", min=2, max=16)
    flat = export(KeywordsOnly(), (), inputs, dynamic_shapes={"x": {0: batch}})
    if flat.error is not None:  # torch 2.13 wants them nested (2.14 takes the flat form)
        assert flat.error.tag == "dynamic_shapes_mismatch", flat.error
        assert flat.error.message == (
            "dynamic_shapes names 'x', which KeywordsOnly.forward takes through **kw: torch wants it nested under "
            "'kw', with every input named"
        )
        assert "{'kw': {'x': {0: None, 1: None}, 'y': {0: None, 1: None}}} (kw['x'] is 4 x 3" in flat.error.hint
        # --dynamic NAME:DIM cannot reach them: no example of it ('kw:0' was one, and torch refused it)
        assert "--dynamic" not in flat.error.hint, flat.error.hint
    for spec in ({"kw": {"x": {0: batch}, "y": None}}, "auto"):
        run = export(KeywordsOnly(), (), inputs, dynamic_shapes=spec, check_inputs=[{**inputs, "x": torch.randn(6, 3)}])
        if run.error is None:  # a torch that takes them (2.14)
            assert run.export is not None and len(run.export.symbols) == 1
            continue
        assert run.error.tag == "dynamic_shapes_kwargs" and run.error.phase == "arguments", run.error
        assert run.error.message.startswith(
            "dynamic_shapes cannot reach inputs KeywordsOnly.forward takes through **kw (x, y): torch"
        )
        assert "\n" in run.error.message  # torch's own words kept under the first line
        assert "`def forward(self, x, y): return self.model(x=x, y=y)`" in run.error.hint
        assert "dynamic_shapes={'x': {0: Dim('name', min=..., max=...)}, 'y': None}" in run.error.hint
    fixed = export(Named(KeywordsOnly()), (), inputs, dynamic_shapes={"x": {0: batch}, "y": None})
    assert fixed.error is None and fixed.export is not None and len(fixed.export.symbols) == 1, fixed.error
    assert capfd.readouterr().err == ""


class Spread(nn.Module):
    def forward(self, *xs):
        return xs[0] + xs[1]


def test_the_structure_shown_for_a_star_args_forward_is_nested():
    x = torch.ones(3, 4)
    run = export(Spread(), (x, x), dynamic_shapes={"x": {0: torch.export.Dim.AUTO}}, draft="never")
    assert run.error is not None and run.error.tag == "dynamic_shapes_mismatch", run.error
    assert "{'xs': ({0: None, 1: None}, {0: None, 1: None})} (xs[0] is 3 x 4, xs[1] is 3 x 4)" in run.error.hint


class Noisy(nn.Module):
    """Draws random numbers (a dropout in train mode, torch.rand) and warns from another thread on every run."""

    runs = 0

    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        Noisy.runs += 1
        other = threading.Thread(target=lambda: warnings.warn("from another thread", stacklevel=1))
        other.start()
        other.join()
        return self.drop(x) + torch.rand(x.shape)


@pytest.mark.parametrize(
    "options",
    [{"check_inputs": [(torch.randn(2, 4),)]}, {"draft": "always"}, {"compare_trace": True}],
    ids=["check_inputs", "draft", "compare_trace"],
)
def test_export_leaves_the_users_rng_where_torch_export_leaves_it(options):
    x = torch.randn(3, 4)
    torch.manual_seed(123)
    torch.export.export(Noisy().train(), (x,))
    after_torch = torch.rand(1)
    torch.manual_seed(123)
    run = export(Noisy().train(), (x,), **options)
    assert run.error is None, run.error
    assert torch.equal(torch.rand(1), after_torch)


def test_other_threads_warnings_are_shown_while_the_check_runs_the_model():
    """The check drops its own runs' warnings without a process-wide "ignore" (which lost other threads')."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Noisy.runs = 0
        run = export(Noisy().eval(), (torch.randn(3, 4),), check_inputs=[(torch.randn(2, 4),)])
    assert run.error is None and run.check is not None and run.check.cases, run.error
    assert Noisy.runs >= 2
    assert sum(str(w.message) == "from another thread" for w in seen) == Noisy.runs
