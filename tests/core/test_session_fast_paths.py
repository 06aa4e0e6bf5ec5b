"""What the session skips to stay cheap, and that skipping it changes nothing a user sees.

- torch's "nondeterministic nodes" warning scans the top level of the traced graph; the session scans only when
  the extracted graph has a random op or the traced graph has calls that hide nodes;
- a target's line is read with ``inspect.findsource`` (what ``getsourcelines`` reports, without tokenizing);
- an error's location and traceback come from one ``TracebackException``;
- with the check off, a trace without calls is extracted from torch's graph itself, not a canonical copy.
"""

from __future__ import annotations

import functools
import inspect
import traceback
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F

import jupyter_tracejit as tj
from jupyter_tracejit.core.errors import error_from_exception, user_location
from jupyter_tracejit.core.target import target_of
from jupyter_tracejit.core.torchscript.canonical import canonical_inlined, has_calls
from jupyter_tracejit.core.torchscript.extract import extract_graph

from .oracle import torch_verdict


@torch.jit.script
def scripted_dropout(x: torch.Tensor) -> torch.Tensor:
    return F.dropout(x, 0.5, True) * 2


def random_inside_a_call(x):
    return scripted_dropout(x) + 1


def random_at_the_top(x):
    return scripted_dropout(x) + torch.rand_like(x)


def plain(x):
    return torch.sin(x) * 2


class Wrapper(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) + F.dropout(x, 0.5, True)


def nondeterministic_messages(messages: list[str]) -> list[str]:
    return [m for m in messages if m.startswith("Trace had nondeterministic nodes")]


def test_torchs_nondeterministic_warning_only_for_random_ops_at_the_top_level():
    for fn in (random_inside_a_call, random_at_the_top, plain):
        run = tj.trace(fn, (torch.rand(20),))
        theirs = nondeterministic_messages(torch_verdict(fn, (torch.rand(20),)).messages)
        ours = [w.message for w in run.warnings_of("nondeterministic")]
        assert ours == theirs, fn.__name__
    # the random op inside the scripted call is extracted, yet torch does not see it at the top level
    run = tj.trace(random_inside_a_call, (torch.rand(20),))
    assert any(n.nondeterministic for n in run.graph.nodes) and not run.warnings_of("nondeterministic")


def test_a_module_hides_its_submodules_random_ops_behind_calls_as_in_torch():
    model = Wrapper().train()
    run = tj.trace(model, (torch.rand(20),))
    theirs = nondeterministic_messages(torch_verdict(model, (torch.rand(20),)).messages)
    assert [w.message for w in run.warnings_of("nondeterministic")] == theirs
    assert len(theirs) == 1 and theirs[0].count("aten::dropout") == 1  # forward's own, not self.drop's


def decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


@decorate
def decorated(x):
    return x


class CallableObject:
    def __call__(self, x):
        return x


def test_target_lines_are_what_getsourcelines_reports():
    lambdas = (lambda x: x, lambda y: y)  # two on one line: the line of the second is where both start
    for obj in (plain, decorated, Wrapper(), Wrapper().forward, lambdas[1], nn.Linear(2, 2), CallableObject(), print):
        target = target_of(obj)
        fn = type(obj).forward if isinstance(obj, nn.Module) else obj
        try:
            expected = (inspect.getsourcefile(fn) or "", inspect.getsourcelines(fn)[1])
        except (TypeError, OSError):
            expected = ("", 0)
        assert (target.file, target.line) == expected, obj


def raise_inside_torch(module: nn.Module, x: torch.Tensor):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.jit.trace(module.encode, (x,))
        except AttributeError as e:
            return e
    raise AssertionError("torch accepted a bound method")


class WithEncode(nn.Module):
    def forward(self, x):
        return x

    def encode(self, x):
        return x * 2


def chained_error():
    try:
        1 / 0  # noqa: B018 - the error is the point
    except ZeroDivisionError as e:
        raise ValueError("wrapped") from e


def test_error_location_and_traceback_as_traceback_formats_them():
    errors: list[BaseException] = [raise_inside_torch(WithEncode(), torch.rand(2))]
    try:
        chained_error()
    except ValueError as e:
        errors.append(e)
    for exc in errors:
        error = error_from_exception(exc)
        assert error.traceback == "".join(traceback.format_exception(exc))
        assert (error.file, error.line, error.code) == user_location(exc)
    assert errors[1].__cause__ is not None and "ZeroDivisionError" in error_from_exception(errors[1]).traceback


def _call_free_functions():
    weights = torch.randn(4, 4)

    def chain(x):
        for _ in range(30):
            x = torch.sin(x) + 1
        return x

    def containers(x, y):
        a = x * 2
        b, c = a.chunk(2)
        if x.sum() > 0:  # a frozen branch
            b = b + y[0]
        return [b, c], {"k": a.view(-1), "n": a.size(0)}

    def constants_and_views(x):
        v = x.view(2, 2)
        v.add_(torch.tensor([1.0, 2.0]))
        return (x @ weights[:1, :1]).relu(), torch.zeros(2, dtype=torch.int64), x.shape[0] * 3

    return [
        (chain, (torch.randn(3),)),
        (containers, (torch.randn(4), torch.randn(2))),
        (constants_and_views, (torch.randn(4, 1),)),
    ]


def test_without_the_check_a_call_free_trace_extracts_as_its_canonical_copy():
    """No canonical copy is made when nothing needs one; the graph (value numbers included) is the one the check
    path extracts from the copy, and the run is the same apart from the check."""
    for fn, inputs in _call_free_functions():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ts_graph = torch.jit.trace(fn, inputs, check_trace=False, strict=False).graph
        assert not has_calls(ts_graph)
        own = extract_graph(ts_graph, number_unnamed=True).graph.to_json()
        assert own == extract_graph(canonical_inlined(ts_graph)).graph.to_json()
        off = tj.trace(fn, inputs, check_trace=False, strict=False)
        on = tj.trace(fn, inputs, strict=False)
        assert off.graphs["forward"].to_json() == on.graphs["forward"].to_json(), fn.__name__


def test_the_bound_method_misuse_is_torchs_error_with_the_hint():
    run = tj.trace(WithEncode().encode, (torch.rand(2),))
    assert run.error is not None and run.error.tag == "bound_method" and run.error.type == "AttributeError"
    assert "trace_module" in run.error.message and run.error.traceback.startswith("Traceback")
