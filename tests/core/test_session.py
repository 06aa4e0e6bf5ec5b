"""core/session.py: one plan traced, checked and probed; the user's code runs as often as under torch, timings
are recorded, and grad mode and module flags come back on every exit path."""

from __future__ import annotations

import torch
import torch.nn as nn

import jupyter_tracejit as tj
from jupyter_tracejit.core.session import CODE_MAX_SUBMODULES, attribute_to_caller, method_code, stamp


class Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        self.calls += 1
        return self.fc(x)


def test_the_python_code_runs_as_often_as_under_torch():
    for check_sets, expected in ((None, 3), ([], 1), ([(torch.rand(2),)] * 2, 5)):
        model = Counting()
        options = {"check_inputs": check_sets} if check_sets is not None else {}
        if check_sets == []:
            options = {"check_trace": False}
        run = tj.trace(model, (torch.rand(2),), **options)
        assert model.calls == run.python_runs == expected


def test_timings_of_each_phase():
    run = tj.trace(Counting(), (torch.rand(2),), probe=True)
    assert {"trace", "extract", "check", "probe", "total"} <= set(run.timings)
    assert all(v >= 0 for v in run.timings.values()) and run.timings["total"] >= run.timings["trace"]


class Fails(nn.Module):
    def forward(self, x):
        assert self.training
        raise ValueError("no")


def test_grad_mode_and_train_flags_come_back_after_success_and_failure():
    for model, mode in ((Counting().eval(), "train"), (Fails().eval(), "train"), (Counting().train(), "eval")):
        was_training = model.training
        with torch.no_grad():
            run = tj.trace(model, (torch.rand(2),), module_mode=mode, no_grad=False)
            assert not torch.is_grad_enabled()
        assert model.training == was_training
        assert run.options["module_mode"] == mode
    assert torch.is_grad_enabled()


def test_stamp_method_code_and_caller_attribution():
    run = stamp(tj.TraceRun(target=tj.core.Target(name="f", kind="function"), options={}), 0.0)
    assert run.run_id and run.created.endswith("+00:00") and run.timings["total"] > 0
    traced = tj.trace(Counting(), (torch.rand(2),)).traced
    assert "fc" in method_code(traced, Counting())
    big = nn.Sequential(*[nn.Identity() for _ in range(CODE_MAX_SUBMODULES + 1)])
    assert method_code(traced, big).startswith("# .code not captured")
    from jupyter_tracejit.core.from_torchscript import canonical_inlined, extract_graph

    relu = torch.jit.trace(nn.Sequential(nn.ReLU()), (torch.rand(2),), check_trace=False)
    graph = extract_graph(canonical_inlined(relu.graph)).graph
    located = [n for n in graph.nodes if n.source]
    assert located and all(n.source.user_frame.internal for n in located)  # torch's own frames only
    caller = tj.core.Frame(file="cell.py", line=4, func="<module>")
    attribute_to_caller(graph, caller)
    assert all(n.source.user_frame == caller and n.source.stack[0].internal for n in located)
