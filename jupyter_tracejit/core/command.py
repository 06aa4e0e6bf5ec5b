"""What the command line and the magics hand a back end, and the words each back end gives them.

The ``tracejit`` subcommands and the ``%trace`` / ``%export`` magics are one mechanism each, built from the
registry's rows: a back end declares its words (:class:`CommandWords`: the subcommand's help, the magic's help and
examples, how torch takes inputs) and one function, ``capture(call: CaptureCall) -> Capture``, that turns a call
typed by the user (``model(x, mask=m)`` in a notebook, ``FILE.py:NAME --inputs ...`` in a terminal) into its
capture. What the user got wrong in the call is a :class:`CallProblem` (one line and an example of correct use),
which the magic and the CLI report their own way. Torch-free and IPython-free.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .options import Flag


class CallProblem(Exception):
    """What is wrong with the call the user typed: one line, and a correct use (None: the plainest)."""

    def __init__(self, problem: str, example: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.example = example


@dataclass
class CaptureCall:
    """A call to capture: the callee and its inputs, evaluated, and the options given for it."""

    callee: Any
    args: list[Any]
    kwargs: dict[str, Any]
    #: the back end's options given (its table's names), the rest at their defaults
    options: dict[str, Any] = field(default_factory=dict)
    #: the options given as Python (``check_inputs``, ``calls``), evaluated: each a list of input sets
    expressions: dict[str, Any] = field(default_factory=dict)
    #: how each of those was written, for messages
    texts: dict[str, str] = field(default_factory=dict)
    #: the back end's own arguments of the magic (``--method``), by name
    extra: dict[str, Any] = field(default_factory=dict)
    #: how the user wrote the callee (``model.encode``), for messages
    callee_text: str = ""
    #: the name the callee was reached by when it is an attribute (``encode`` of ``model.encode``), else ""
    attribute: str = ""

    def expression(self, option: str, read: Callable[[Any, str], Any]) -> Any:
        """An option given as Python (``check_inputs``), its value checked by ``read(value, text)``; None when the
        call does not give it."""
        value = self.expressions.get(option)
        return None if value is None else read(value, self.texts[option])

    def inputs(self) -> tuple[tuple[Any, ...], dict[str, Any] | None, dict[str, Any]]:
        """The positional inputs, the keyword inputs (None for none) and the options, as the API takes them."""
        return tuple(self.args), dict(self.kwargs) or None, dict(self.options)


def check_callable(callee: Any, callee_text: str, verb: str) -> None:
    """:class:`CallProblem` when CALL's callee (written ``callee_text``) cannot be called."""
    if not callable(callee):
        raise CallProblem(
            f"{callee_text!r} is a {type(callee).__name__}, which cannot be called; CALL must call the model or "
            f"function to {verb}"
        )


def check_input_list(value: Any, expr: str, example: str | None) -> list[Any]:
    """``--check-inputs``' value (written ``expr``): a list of input sets, one per check; else a :class:`CallProblem`
    with ``example``."""
    if not isinstance(value, list):
        raise CallProblem(
            f"--check-inputs {expr!r} must evaluate to a list of input sets, one per check, got a "
            f"{type(value).__name__}",
            example,
        )
    return value


@dataclass(frozen=True)
class Capture:
    """What a back end makes of a call: the capture to run, and what the progress line names (``BertModel``)."""

    run: Callable[[], Any]
    name: str


@dataclass(frozen=True)
class CommandWords:
    """A back end's words on the command line and in its magic (the row's ``command``)."""

    #: the subcommand's one line in ``tracejit --help`` and its description
    help: str
    description: str
    #: ``FILE.py:NAME``'s help
    target_help: str
    #: ``--inputs``' help
    inputs_help: str
    #: ``--fail-on-warnings``' help
    fail_on_warnings_help: str
    #: what the kernel is doing, in the progress line (``tracing``)
    doing: str
    #: the magic's help (``%trace?``) and its examples line
    magic_doc: str
    magic_epilog: str
    #: the magic's options' examples, by flag (``--tol``: ``%trace --tol 1e-4 model(x)``), and more by name
    examples: Mapping[str, str]
    #: the example of an "unknown option" message
    option_example: str
    #: how torch takes the example inputs, for a CALL that unpacks them
    inputs_rule: str
    #: whether CALL may pass positional and keyword inputs together
    mixed_inputs: bool
    #: the magic's own arguments beyond the options table (``--method``), passed in :attr:`CaptureCall.extra`
    magic_arguments: tuple[Flag, ...] = ()
    #: ``module:function`` (relative to ``core``): ``capture(call: CaptureCall) -> Capture``
    capture: str = ""


__all__ = ["CallProblem", "Capture", "CaptureCall", "CommandWords", "check_callable", "check_input_list"]
