"""torch_trace is torch.jit.trace / trace_module with the check left to the core: for the same arguments it
returns what torch returns (graph text equal), runs the user's code once, and makes a re-trace the way
torch's _check_trace makes it (inputs not stored, a fresh compilation unit for modules)."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import pytest
import torch
import torch.nn as nn

from jupyter_tracejit.core.torchscript.calls import trace_call
from jupyter_tracejit.core.values import demangle


def torch_trace(*args: Any, **kwargs: Any) -> Any:
    """Make the call trace_call describes, as the session does (from its own frame)."""
    fn, fn_args, fn_kwargs = trace_call(*args, **kwargs)
    return fn(*fn_args, **fn_kwargs)


@pytest.fixture(autouse=True)
def quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def scaled(x, mask):
    return x * mask + 1


def in_place(x):
    y = x.clone()
    y.add_(1)
    return y


# Not tests.models.LinearWithEncode: encode takes two inputs (x, scale), to trace a method with positional and
# keyword inputs as torch does.
class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))

    def encode(self, x, scale):
        return self.fc(x) * scale


def ours(target: Any, inputs: Any, **kwargs: Any) -> Any:
    settings = {"methods": False, "is_kwarg": False, "strict": True, "force_outplace": False, **kwargs}
    return torch_trace(target, inputs, **settings)


x, m = torch.rand(2, 3), torch.rand(2, 3)


def test_a_function_traces_as_torch_traces_it() -> None:
    traced = ours(scaled, (x, m))
    by_torch = torch.jit.trace(scaled, (x, m), check_trace=False)
    assert type(traced) is type(by_torch)
    assert str(traced.graph) == str(by_torch.graph)
    assert torch.equal(traced(x, m), scaled(x, m))


def test_keyword_inputs_trace_as_torch_traces_them() -> None:
    traced = ours(scaled, {"mask": m, "x": x}, is_kwarg=True)
    by_torch = torch.jit.trace(scaled, example_kwarg_inputs={"mask": m, "x": x}, check_trace=False)
    assert str(traced.graph) == str(by_torch.graph)


def test_methods_trace_as_torch_traces_them() -> None:
    model = Encoder()
    inputs = {"forward": (x,), "encode": (x, m)}
    traced = ours(model, inputs, methods=True)
    by_torch = torch.jit.trace_module(model, inputs, check_trace=False)
    for method in ("forward", "encode"):
        ours_text = str(traced._c._get_method(method).graph)
        torch_text = str(by_torch._c._get_method(method).graph)
        assert demangle(ours_text) == demangle(torch_text)  # each trace of a class gets a new mangled name
    kw = ours(model, {"encode": {"x": x, "scale": m}}, methods=True, is_kwarg=True)
    kw_torch = torch.jit.trace_module(
        model, {"encode": {"x": x, "scale": m}}, example_inputs_is_kwarg=True, check_trace=False
    )
    assert demangle(str(kw.encode.graph)) == demangle(str(kw_torch.encode.graph))


def test_strict_and_force_outplace_are_torchs() -> None:
    with pytest.raises(RuntimeError, match="Encountering a dict at the output"):
        ours(lambda v: {"y": v}, (x,))
    assert ours(lambda v: {"y": v}, (x,), strict=False)(x)["y"].shape == x.shape
    plain = [n.kind() for n in ours(in_place, (x,)).graph.nodes()]
    outplace = [n.kind() for n in ours(in_place, (x,), force_outplace=True).graph.nodes()]
    assert "aten::add_" in plain and "aten::add_" not in outplace and "aten::add" in outplace
    by_torch = torch.jit.trace(in_place, (x,), check_trace=False, _force_outplace=True)
    assert str(ours(in_place, (x,), force_outplace=True).graph) == str(by_torch.graph)


def test_the_users_code_runs_once_the_check_is_left_to_the_core() -> None:
    calls = []

    def counted(v):
        calls.append(1)
        return v * 2

    ours(counted, (x,))
    assert len(calls) == 1
    torch.jit.trace(counted, (x,))  # torch's own check runs it twice more
    assert len(calls) == 4


class Spy:
    """Records the keywords torch.jit.trace / trace_module were called with, and calls them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        for name in ("trace", "trace_module"):
            real = getattr(torch.jit, name)
            monkeypatch.setattr(torch.jit, name, self._wrap(name, real))

    def _wrap(self, name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, kwargs))
            return real(*args, **kwargs)

        return call


def test_a_re_trace_is_made_as_torchs_check_makes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    ours(scaled, (x, m), for_check=True)
    ours(Encoder(), {"forward": (x,)}, methods=True, for_check=True)
    ours(scaled, (x, m))
    (fn_name, fn_kwargs), (mod_name, mod_kwargs), (plain_name, plain_kwargs) = spy.calls
    assert fn_name == "trace" and fn_kwargs["_store_inputs"] is False and "_compilation_unit" not in fn_kwargs
    assert mod_name == "trace_module" and mod_kwargs["_store_inputs"] is False
    assert isinstance(mod_kwargs["_compilation_unit"], torch._C.CompilationUnit)
    assert plain_name == "trace" and "_store_inputs" not in plain_kwargs
    assert all(kwargs["check_trace"] is False for _, kwargs in spy.calls)


def test_a_re_trace_has_the_graph_torchs_check_compares() -> None:
    model = Encoder()
    retrace = ours(model, {"forward": (x,)}, methods=True, for_check=True)
    by_torch = torch.jit.trace_module(
        model, {"forward": (x,)}, check_trace=False, _store_inputs=False, _compilation_unit=torch._C.CompilationUnit()
    )
    assert demangle(str(retrace.graph)) == demangle(str(by_torch.graph))
    fn = ours(scaled, (x, m), for_check=True)
    assert str(fn.graph) == str(torch.jit.trace(scaled, (x, m), check_trace=False, _store_inputs=False).graph)


def _global_functions() -> int:
    return len(torch.jit._state._python_cu.get_functions())


def test_a_traces_types_live_in_its_own_compilation_unit_and_go_with_the_run() -> None:
    import gc
    import io
    import weakref

    import jupyter_tracejit as tj
    from jupyter_tracejit.core.torchscript.calls import own_compilation_unit

    model = nn.Sequential(Encoder(), nn.ReLU(), Encoder()).eval()
    before = _global_functions()
    with own_compilation_unit():
        unit = torch.jit._state._python_cu
        traced = torch.jit.trace(model, (x,))
    assert torch.jit._state._python_cu is not unit  # put back
    # the types, with their methods, went to the trace's own unit: torch's global one is as it was
    assert _global_functions() == before and len(unit.get_functions()) > 0
    # and the module is a full ScriptModule: it runs, prints, saves and loads
    assert torch.allclose(traced(x), model(x))
    assert "aten::linear" in str(traced.inlined_graph) and "def forward" in traced.code
    buffer = io.BytesIO()
    torch.jit.save(traced, buffer)
    buffer.seek(0)
    assert torch.allclose(torch.jit.load(buffer)(x), model(x))

    # a run (trace and check) leaves nothing in the global unit, and its unit goes when the run goes
    run = tj.trace(model, (x,), check_inputs=[(torch.rand(4, 3),)])
    assert run.ok and _global_functions() == before
    unit_ref = weakref.ref(run.traced)
    del run, traced, unit
    gc.collect()
    assert unit_ref() is None and _global_functions() == before


def test_the_unit_is_put_back_when_the_trace_raises() -> None:
    from jupyter_tracejit.core.torchscript.calls import own_compilation_unit

    saved = torch.jit._state._python_cu
    with pytest.raises(RuntimeError), own_compilation_unit():
        raise RuntimeError("the user's code failed")
    assert torch.jit._state._python_cu is saved
