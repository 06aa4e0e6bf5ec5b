"""The export back end behind the capture seam: ``ExportSession`` runs ``torch.export.export`` as a guest (module
state, grad mode and torch's logging left as found), turns the program into a run, and records failures as the
run's error at the user's line, with nothing printed to stderr."""

from __future__ import annotations

import logging
import time
from typing import Any

import pytest
import torch
import torch.nn as nn

import tests.models
from jupyter_tracejit.core.capture import Backend, drive
from jupyter_tracejit.core.export.failures import message_frame
from jupyter_tracejit.core.export.options import export_support_problem
from jupyter_tracejit.core.export.session import ExportSession
from jupyter_tracejit.core.graph import Frame
from jupyter_tracejit.core.registry import names
from jupyter_tracejit.core.run import TraceRun
from jupyter_tracejit.core.torch_logs import EXPORT_LOGGERS, captured_torch_logs
from jupyter_tracejit.core.validate import check_run
from tests.models import LOOP_LINE, MLP, TAGGER_LINE, LoopOverRows, Tagger

#: the export back end needs torch.export with Dim.AUTO (the floor torch of the matrix, 2.4, lacks it)
pytestmark = pytest.mark.skipif(export_support_problem() is not None, reason=str(export_support_problem()))

THIS_FILE = __file__
CALLER = Frame(file=THIS_FILE, line=1, func="<module>", code="")


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.head = nn.Linear(8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.bn(self.conv(x)))
        return self.head(h.mean(dim=(2, 3)))


class Branch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:  # BRANCH LINE
            return x + 1
        return x - 1


def line_of(marker: str) -> int:
    with open(THIS_FILE) as f:
        return next(i for i, text in enumerate(f, 1) if text.rstrip().endswith(f"# {marker}"))


def logging_state() -> list[tuple[str, list[logging.Handler], int, bool, int, bool]]:
    state = []
    for name in (*EXPORT_LOGGERS, "torch._export.non_strict_utils", "torch._guards"):
        logger = logging.getLogger(name)
        state.append(
            (name, list(logger.handlers), id(logger.handlers), logger.propagate, logger.level, logger.disabled)
        )
    return state


def export(target: Any, args: Any, **options: Any) -> tuple[TraceRun, ExportSession]:
    session = ExportSession(target, args, caller=CALLER, **options)
    return drive(session.steps(time.perf_counter())), session


def module_state(module: nn.Module) -> tuple[dict[str, torch.Tensor], list[bool]]:
    return {k: v.clone() for k, v in module.state_dict().items()}, [m.training for m in module.modules()]


def assert_same_state(before: tuple[dict[str, torch.Tensor], list[bool]], module: nn.Module) -> None:
    tensors, flags = before
    after_tensors, after_flags = module_state(module)
    assert after_flags == flags
    assert tensors.keys() == after_tensors.keys()
    for k, v in tensors.items():
        assert torch.equal(v, after_tensors[k]), k


def assert_round_trips(run: TraceRun) -> None:
    data = run.to_json()
    check_run(data)  # raises when the run does not match run.schema.json
    again = TraceRun.from_json(data)
    assert again.to_json() == data


def test_the_session_is_a_backend_and_its_name_a_known_backend() -> None:
    session: Backend = ExportSession(MLP(), (torch.randn(2, 16),))
    assert session.name == "export" and "export" in names()


def test_an_mlp_exports_into_a_valid_run(capfd: pytest.CaptureFixture[str]) -> None:
    model = MLP()
    before = module_state(model)
    grad = torch.is_grad_enabled()
    run, session = export(model, torch.randn(2, 16))  # a lone tensor is the one argument
    assert run.error is None and run.ok, run.error
    assert run.backend == "export" and run.target.name == "MLP" and run.target.kind == "module"
    assert isinstance(run.traced, torch.export.ExportedProgram)
    graph = run.graphs["forward"]
    graph.lint()
    kinds = {n.kind for n in graph.nodes}
    assert "aten::linear.default" in kinds and "aten::relu.default" in kinds
    assert run.inputs == {"forward": ["Float(2, 16)"]}
    assert run.timings["export"] > 0 and "total" in run.timings
    assert run.argument_names and run.parameters["fc1.weight"] == "Float(32, 16)"
    assert run.run_id and run.torch_version == torch.__version__
    assert_round_trips(run)
    assert_same_state(before, model)
    assert torch.is_grad_enabled() == grad
    assert capfd.readouterr().err == ""
    assert isinstance(session.log, str)


def test_a_convnet_with_batchnorm_in_train_mode_is_left_as_found() -> None:
    model = ConvNet().train()
    before = module_state(model)
    run, _ = export(model, (torch.randn(2, 3, 8, 8),), module_mode="as_is", no_grad=True)
    assert run.error is None and run.ok, run.error
    run.graphs["forward"].lint()
    assert any(n.kind.startswith("aten::batch_norm") or "batch_norm" in n.kind for n in run.graphs["forward"].nodes)
    assert_round_trips(run)
    assert_same_state(before, model)  # BatchNorm's running stats and num_batches_tracked too
    assert model.training and model.bn.training
    assert torch.is_grad_enabled()


def test_module_mode_eval_is_for_the_export_only() -> None:
    model = ConvNet().train()
    run, _ = export(model, (torch.randn(2, 3, 8, 8),), module_mode="eval")
    assert run.error is None, run.error
    assert model.training and model.bn.training


def test_every_node_has_a_user_line() -> None:
    run, _ = export(nn.Sequential(nn.Linear(4, 4), nn.ReLU()), (torch.randn(1, 4),))
    assert run.error is None, run.error
    ops = [n for n in run.graphs["forward"].nodes if n.role == "op"]
    assert ops and all(n.source is not None and not n.source.user_frame.internal for n in ops)
    assert any(n.source is not None and n.source.file == THIS_FILE for n in ops)  # the caller's line


def scaled(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * 2 + y


def test_a_plain_function_is_exported_as_a_module_named_after_it() -> None:
    n = torch.export.Dim("n")  # keyed by the function's argument names: the wrapper keeps its signature
    run, _ = export(scaled, (torch.randn(3), torch.randn(3)), dynamic_shapes={"x": {0: n}, "y": {0: n}})
    assert run.error is None and run.ok, run.error
    assert run.target.name == "scaled" and run.target.kind == "function" and run.target.file == THIS_FILE
    assert run.graphs["forward"].inputs and len(run.graphs["forward"].inputs) == 2
    assert run.options["dynamic_shapes"] and run.parameters == {}
    assert_round_trips(run)


@pytest.mark.parametrize("strict", [False, True])
def test_a_data_dependent_branch_is_the_runs_error_at_the_if_line(
    strict: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    before = logging_state()
    run, session = export(Branch(), (torch.randn(3),), strict=strict)
    assert capfd.readouterr().err == ""
    assert logging_state() == before
    error = run.error
    assert error is not None and not run.ok
    assert error.phase == "export" and error.tag == "data_dependent" and "torch.cond" in error.hint
    assert error.type == ("Unsupported" if strict else "GuardOnDataDependentSymNode")
    assert (error.file, error.line) == (THIS_FILE, line_of("BRANCH LINE")), error
    assert "if x.sum() > 0" in error.code
    assert run.graphs == {} and run.traced is None
    assert run.verdict.label == "failed"
    assert_round_trips(run)
    assert session.log or strict  # non-strict logs "Unable to find user code"


@pytest.mark.parametrize("strict", [False, True])
def test_a_loop_over_a_dynamic_dim_is_the_runs_error(strict: bool, capfd: pytest.CaptureFixture[str]) -> None:
    before = logging_state()
    n = torch.export.Dim("n", min=2, max=8)
    run, session = export(
        LoopOverRows(), (torch.randn(3),), dynamic_shapes={"x": {0: n}}, strict=strict, draft="on_failure"
    )  # tj.export's default draft
    assert capfd.readouterr().err == ""
    assert logging_state() == before
    error = run.error
    assert error is not None and error.phase == "export" and error.type == "UserError"
    assert "Constraints violated" in error.message and error.tag == "constraint_violation"
    # strict quotes the user's frame; non-strict names no line, and the draft's specialisation of the dim does
    assert (error.file, error.line) == (tests.models.__file__, LOOP_LINE), error
    assert "x.size()[0] became the constant 3 on this line" in error.hint
    assert "Error while creating guard" in session.log or not strict
    assert_round_trips(run)


class BadView(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(5, 7)  # BAD VIEW LINE


@pytest.mark.parametrize("strict", [False, True])
def test_a_shape_error_in_the_model_is_at_its_line(strict: bool, capfd: pytest.CaptureFixture[str]) -> None:
    # strict mode's TorchRuntimeError ("when making fake tensor call") quotes no frame and its traceback is dynamo's
    # then the caller's: the model's line is only in the real_stack dynamo attaches to it
    run, _ = export(BadView(), (torch.randn(3, 4),), strict=strict, draft="never")
    assert capfd.readouterr().err == ""
    error = run.error
    assert error is not None and error.tag == "shape_mismatch"
    assert (error.file, error.line) == (THIS_FILE, line_of("BAD VIEW LINE")), error
    assert error.code.startswith("return x.view(5, 7)")


class FourRows(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.shape[0], 4, -1)  # VIEW LINE


@pytest.mark.parametrize("strict", [False, True])
def test_a_range_only_some_of_whose_sizes_the_code_takes_is_not_called_a_constant(
    strict: bool, capfd: pytest.CaptureFixture[str]
) -> None:
    n = torch.export.Dim("n", min=2, max=64)
    run, _ = export(FourRows(), (torch.randn(2, 8),), dynamic_shapes={"x": {1: n}}, strict=strict, draft="on_failure")
    error = run.error
    assert error is not None and error.tag == "constraint_violation" and "Not all values of n" in error.message
    # it said the dim "was turned into a constant by the code", at the call
    assert "turned into a constant" not in error.hint and "only some sizes" in error.hint
    assert (error.file, error.line) == (THIS_FILE, line_of("VIEW LINE")), error
    # non-strict names no line: the draft's guard does, saying which size its symbol is (strict quotes the frame)
    assert strict or ("export needs" in error.hint and "is x.size()[1]" in error.hint)
    refused, _ = export(FourRows(), (torch.randn(2, 8),), dynamic_shapes={"x": {1: n}}, draft="never")
    assert refused.error is not None and "only some sizes" in refused.error.hint
    assert capfd.readouterr().err == ""
    assert_round_trips(run)


def test_a_dim_specialised_inside_torch_is_shown_where_the_code_calls_it() -> None:
    seq = torch.export.Dim("seq", min=2, max=64)
    run, _ = export(Tagger().eval(), (torch.randn(2, 7, 4),), dynamic_shapes={"x": {1: seq}}, draft="never")
    if run.error is None:
        pytest.skip("this torch exports nn.LSTM with a dynamic length")
    error = run.error
    assert error.tag == "constraint_violation", error
    # torch's line is in nn.LSTM's code: the error is at the user's line that called it, without a draft, and says
    # whose line fixed the length
    assert (error.file, error.line) == (tests.models.__file__, TAGGER_LINE), error
    assert error.hint.startswith("x.size()[1] became the constant 7 in torch.nn's code (torch/nn/modules/rnn.py:")
    assert "nn.LSTM fixes the sequence length under export" in error.hint


def test_without_a_draft_a_refused_dim_is_still_at_its_line() -> None:
    n = torch.export.Dim("n", min=2, max=8)
    run, _ = export(LoopOverRows(), (torch.randn(3),), dynamic_shapes={"x": {0: n}}, draft="never")
    error = run.error
    assert error is not None and error.tag == "constraint_violation"
    assert (error.file, error.line) == (tests.models.__file__, LOOP_LINE), error
    assert "x.size()[0] became the constant 3 on this line" in error.hint
    assert run.export is not None and run.export.draft_offer is None and run.export.draft is None  # never: none


def test_an_interrupt_is_raised_after_everything_is_put_back() -> None:
    class Interrupted(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = nn.BatchNorm1d(3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.bn(x)
            raise KeyboardInterrupt

    model = Interrupted().train()
    before, logs = module_state(model), logging_state()
    with pytest.raises(KeyboardInterrupt):
        export(model, (torch.randn(4, 3),), module_mode="eval", no_grad=True)
    assert_same_state(before, model)
    assert logging_state() == logs and torch.is_grad_enabled()


def test_the_log_capture_restores_loggers_exactly_even_on_error() -> None:
    before = logging_state()
    with pytest.raises(RuntimeError), captured_torch_logs() as logs:
        logging.getLogger("torch._dynamo").warning("hello %s", "there")
        logging.getLogger("torch._dynamo.convert_frame").error("child")
        raise RuntimeError
    assert logging_state() == before
    assert logs.lines == ["W torch._dynamo: hello there", "E torch._dynamo.convert_frame: child"]


def test_message_frames_skip_torch_and_generated_code() -> None:
    torch_file = torch.__file__
    message = (
        f'from user code:\n   File "{torch_file}", line 232, in forward\n'
        f'  File "{THIS_FILE}", line 7, in forward\n  File "<eval_with_key>.3", line 5, in forward\n'
    )
    assert message_frame(message) == (THIS_FILE, 7)
    assert message_frame("no frames here") is None


class Box:
    """An output class torch's pytree does not know."""

    def __init__(self, value: torch.Tensor) -> None:
        self.value = value


class KeyValueCache(Box):
    """A past key/values object, as transformers' DynamicCache: a class named ``*Cache``."""


class ReturnsBox(nn.Module):
    def __init__(self, box: type[Box] = Box) -> None:
        super().__init__()
        self.box = box

    def forward(self, x: torch.Tensor) -> Box:
        return self.box(x * 2)


@pytest.mark.parametrize("strict", [False, True])
def test_an_output_export_cannot_flatten_is_named_with_its_fix(strict: bool, capfd: pytest.CaptureFixture[str]) -> None:
    run, _ = export(ReturnsBox(), (torch.randn(3),), strict=strict, draft="never")
    error = run.error
    assert error is not None and error.phase == "export" and error.tag == "output_type", error
    assert "register_pytree_node" in error.hint
    # torch's "<string>" lambda that flattens the outputs is no line of the user's: the call is
    assert (error.file, error.line) == (CALLER.file, CALLER.line), error
    cache, _ = export(ReturnsBox(KeyValueCache), (torch.randn(3),), strict=strict, draft="never")
    assert cache.error is not None and "use_cache=False" in cache.error.hint
    assert capfd.readouterr().err == ""
    assert_round_trips(run)
