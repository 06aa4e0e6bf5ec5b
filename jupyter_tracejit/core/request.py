"""What the APIs of the back ends that take a model and its inputs (``tj.export``, ``tj.compile``) share: the
request a run keeps to run again with other options, the run of a request that misuses the API, and the checks of
the model and its inputs (each back end naming itself in the wording)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from .caller import calls_from
from .capture import stamp
from .errors import TraceError, argument_error, option_error
from .graph import Frame
from .run import TraceRun
from .target import target_of


@dataclass(frozen=True)
class ModelRequest:
    """What a run was asked to do, with the live model and inputs: enough to run again. A back end's request
    names its options class (the default of ``options``) and its API (:meth:`api`)."""

    target: Any
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any] | None = None
    options: Any = None
    #: where the run was asked for; runs made again name the same place
    caller: Frame | None = field(default=None, compare=False)

    def api(self) -> Callable[..., TraceRun]:
        """The back end's API function (``tj.export``, ``tj.compile``), called as ``api(model, args, kwargs, **o)``."""
        raise NotImplementedError

    def run(self, **changes: Any) -> TraceRun:
        """Run again with some options changed (the names of the back end's options), from the same call site."""
        options = self.options.replace(**changes)
        with calls_from(self.caller):
            return self.api()(self.target, self.args, dict(self.kwargs) if self.kwargs else None, **options.as_dict())


def refused_run(request: ModelRequest, backend: str, error: TraceError, started: float) -> TraceRun:
    """The run of a request that misuses the API: its error, nothing run."""
    run = TraceRun(target=target_of(request.target), options=request.options.to_json(), backend=backend, error=error)
    stamp(run, started)
    run.request = request
    return run


def not_a_dict(value: Any, name: str, inputs: str, hint: str, kind: type = Mapping) -> TraceError | None:
    """The error of keyword inputs (``name``) that are not a dict (``kind``: torch.jit.trace wants a real dict), or
    None (nothing given is no error)."""
    if value is None or isinstance(value, kind):
        return None
    return argument_error(f"{name} must be a dict of {inputs}, got {type(value).__name__}", hint)


@dataclass(frozen=True)
class ApiWords:
    """How a back end's argument errors name it: ``"compile"``, ``"torch.compile compiles"``, ``"Compile"``, the
    inputs (``"inputs"``, ``"example inputs"``), its call (``"tj.compile(model, (x,))"``) and the hint when the
    installed torch cannot run it."""

    name: str
    captures: str
    verb: str
    inputs: str
    call: str
    unsupported: str


def model_argument_problem(model: Any, args: Any, kwargs: Any, words: ApiWords) -> TraceError | None:
    """What is wrong with a model and its inputs as ``tj.export`` / ``tj.compile`` take them, or None."""
    if isinstance(model, torch.jit.ScriptModule):
        return argument_error(
            f"the model is TorchScript (torch.jit.script or a trace): {words.captures} Python code, and a "
            "ScriptModule has none",
            f"{words.verb} the original nn.Module (the one you scripted or traced).",
            tag="already_script",
        )
    if not callable(model):
        return argument_error(
            f"{words.name} needs an nn.Module or a function, got {type(model).__name__}",
            f"Pass the model (or a function of tensors) and its {words.inputs}: {words.call}.",
        )
    if not isinstance(args, (tuple, torch.Tensor)):
        return argument_error(
            f"args must be a tuple of {words.inputs}, got {type(args).__name__}",
            "Pass args=(x,) for one input, args=(x, mask) for two; a lone tensor is taken as the one input.",
        )
    return not_a_dict(kwargs, "kwargs", f"keyword {words.inputs}", "Pass kwargs={'attention_mask': mask}.")


def refusal(
    request: ModelRequest, backend: str, support: str | None, args: Any, words: ApiWords, started: float
) -> TraceRun | None:
    """The run of a request the back end refuses before running anything, or None: a torch that cannot run it
    (``support`` says why), then a model or inputs it cannot take (``args`` as given), then its options."""
    problem = (
        argument_error(support, words.unsupported, tag="torch_too_old")
        if support is not None
        else model_argument_problem(request.target, args, request.kwargs, words)
        or option_error(request.options.first_problem())
    )
    return None if problem is None else refused_run(request, backend, problem, started)


__all__ = ["ApiWords", "ModelRequest", "model_argument_problem", "not_a_dict", "refusal", "refused_run"]
