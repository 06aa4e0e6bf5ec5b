"""What an export session was given, checked against the forward before torch sees it, and torch's refusals of
``dynamic_shapes`` said in the inputs' terms: the structure ``dynamic_shapes`` needs for these inputs, a dim an
input does not have, inputs the forward cannot take, inputs that come through ``**kwargs``."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ..errors import TraceError, argument_error
from ..words import plural
from .dims import GivenShapes


class GivenInputs:
    """The inputs half of :class:`~.session.ExportSession`: its model, example inputs and ``dynamic_shapes``."""

    exported: torch.nn.Module
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    dynamic_shapes: Any

    def _dim_out_of_range(self) -> TraceError | None:
        """dynamic_shapes marking a dim a tensor input does not have (``{'x': {2: Dim(...)}}`` for a 2-dim ``x``):
        torch fails on it with a bare ``IndexError``. Checked where the structure lines up with the inputs (by
        argument name, or a tuple by position); anything else is left to torch."""
        shapes = self.dynamic_shapes
        bound = self._bound_inputs()
        if isinstance(shapes, dict):
            pairs = [(name, bound.get(name), spec) for name, spec in shapes.items()]
        elif isinstance(shapes, (tuple, list)) and len(shapes) == len(bound):
            pairs = [(name, value, spec) for (name, value), spec in zip(bound.items(), shapes, strict=True)]
        else:
            return None
        for name, value, spec in pairs:
            if not isinstance(value, torch.Tensor) or not isinstance(spec, dict):
                continue
            bad = [d for d in spec if isinstance(d, int) and not -value.dim() <= d < value.dim()]
            if bad:
                sizes = " x ".join(str(n) for n in value.shape) or "a 0-dim tensor"
                return argument_error(
                    f"dynamic_shapes marks dim {', '.join(map(str, bad))} of {name}, which has "
                    f"{plural(value.dim(), 'dim')} ({sizes})",
                    f"Number the dims of {name} from 0 to {value.dim() - 1}: for these inputs, "
                    f"{self.expected_dynamic_shapes()}.",
                    tag="dynamic_shapes_mismatch",
                )
        return None

    def _inputs_mismatch(self) -> TraceError | None:
        """Example inputs the forward cannot take (three for a forward of one): torch's ``TypeError`` raised inside
        its export would read as the model's own failure."""
        try:
            signature = inspect.signature(self.exported.forward)
        except (TypeError, ValueError, AttributeError):
            return None
        try:
            signature.bind(*self.args, **self.kwargs)
        except TypeError as e:
            forward = f"{type(self.exported).__name__}.forward"
            takes = [
                p.name
                for p in signature.parameters.values()
                if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
            ]
            given = plural(len(self.args), "positional input") + (
                f" and {plural(len(self.kwargs), 'keyword input')} ({', '.join(self.kwargs)})" if self.kwargs else ""
            )
            return argument_error(
                f"{forward} takes {', '.join(takes) or 'no inputs'}, but the example inputs are {given}: {e}",
                f"Give one example input per argument of {forward}: ({', '.join(takes)}{',' if len(takes) == 1 else ''}"
                ") as the inputs, or by keyword (kwargs=...).",
                tag="inputs_mismatch",
            )
        return None

    def given_shapes(self) -> GivenShapes:
        """The ``dynamic_shapes`` given, read per input dim (:class:`~.dims.GivenShapes`)."""
        return GivenShapes(self.dynamic_shapes, list(self._bound_inputs()))

    def _bound_inputs(self) -> dict[str, Any]:
        """The inputs by the forward's argument names, as torch binds them (``arg0``... where that fails)."""
        try:
            return dict(inspect.signature(self.exported.forward).bind(*self.args, **self.kwargs).arguments)
        except (TypeError, ValueError):
            return {f"arg{i}": a for i, a in enumerate(self.args)} | dict(self.kwargs)

    def expected_dynamic_shapes(self) -> str:
        """The structure ``dynamic_shapes`` must have for these inputs, a ``None`` per size (``{'x': {0: None,
        1: None}}``, by the forward's argument names), then each tensor's sizes (``x is 3 x 4``)."""
        bound = self._bound_inputs()

        sizes: list[str] = []

        def shape_of(value: Any, name: str) -> str:
            # a **kwargs argument binds a dict and *args a tuple: torch wants their structure, nested
            if isinstance(value, dict):
                return "{" + ", ".join(f"{k!r}: {shape_of(v, f'{name}[{k!r}]')}" for k, v in value.items()) + "}"
            if isinstance(value, tuple):
                inner = [shape_of(v, f"{name}[{i}]") for i, v in enumerate(value)]
                return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
            if isinstance(value, torch.Tensor):
                sizes.append(f"{name} is {' x '.join(str(n) for n in value.shape) or 'a 0-dim tensor'}")
                return "{" + ", ".join(f"{d}: None" for d in range(value.dim())) + "}" if value.dim() else "None"
            return "None"

        structure = "{" + ", ".join(f"{name!r}: {shape_of(v, name)}" for name, v in bound.items()) + "}"
        return structure + (f" ({', '.join(sizes)})" if sizes else "")

    def _var_keyword(self, bound: dict[str, Any]) -> str:
        """The name of the forward's ``**kwargs`` argument when these inputs (``bound``: :meth:`_bound_inputs`) fill
        it; ``""`` when none does."""
        try:
            parameters = inspect.signature(self.exported.forward).parameters.values()
        except (TypeError, ValueError):
            return ""
        name = next((p.name for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD), "")
        return name if name and bound.get(name) else ""

    def _var_keyword_error(self, error: TraceError) -> None:
        """dynamic_shapes for a forward whose inputs come through ``**kwargs``, nested as torch documents it: torch
        2.13 fails there ("Must provide a tree_name", an assertion inside its own code; 2.14 exports). What works on
        every version is a forward that names the inputs."""
        bound = self._bound_inputs()
        name = self._var_keyword(bound)
        given = list(bound[name])
        forward = f"{type(self.exported).__name__}.forward"
        error.phase, error.tag = "arguments", "dynamic_shapes_kwargs"
        error.message = (
            f"dynamic_shapes cannot reach inputs {forward} takes through **{name} ({', '.join(given)}): torch "
            f"{torch.__version__} refused it\n{error.message}"  # torch's own words kept below the first line
        )
        named_shapes = ", ".join(
            f"{k!r}: " + ("{0: Dim('name', min=..., max=...)}" if i == 0 else "None") for i, k in enumerate(given)
        )
        error.hint = (
            f"torch.export applies dynamic_shapes to a forward's named arguments, not to what **{name} collects. Wrap "
            f"the model in a small nn.Module whose forward names them, `def forward(self, {', '.join(given)}): return "
            f"self.model({', '.join(f'{k}={k}' for k in given)})`, and export that with "
            f"dynamic_shapes={{{named_shapes}}} (each input named; a Dim where a size varies); or leave "
            "dynamic_shapes out (a static export)."
        )

    def _arguments_error(self, error: TraceError) -> None:
        """torch refused ``dynamic_shapes`` for not matching the inputs: an argument error naming what does not
        match where it can (a name the forward does not take) and showing the structure it needs."""
        error.phase, error.tag = "arguments", "dynamic_shapes_mismatch"
        bound = self._bound_inputs()
        names = list(bound)
        if isinstance(self.dynamic_shapes, dict):
            unknown = [k for k in self.dynamic_shapes if k not in names]
            var_keyword = self._var_keyword(bound)
            collected = [k for k in unknown if var_keyword and k in bound[var_keyword]]
            try:
                parameters = set(inspect.signature(self.exported.forward).parameters)
            except (TypeError, ValueError):
                parameters = set()
            # an argument the forward takes but these inputs leave out is not "not an argument"
            not_given = [k for k in unknown if k in parameters]
            forward = f"{type(self.exported).__name__}.forward"
            if collected:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, collected))}, which {forward} takes through "
                    f"**{var_keyword}: torch wants {'it' if len(collected) == 1 else 'them'} nested under "
                    f"{var_keyword!r}, with every input named"
                )
            elif not_given:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, not_given))}, which {forward} takes but these inputs "
                    f"do not give (its inputs: {', '.join(names) or 'none'}): give "
                    f"{'it an example input' if len(not_given) == 1 else 'them example inputs'} (kwargs=...) or "
                    f"leave {'it' if len(not_given) == 1 else 'them'} out of dynamic_shapes"
                )
            elif unknown:
                error.message = (
                    f"dynamic_shapes names {', '.join(map(repr, unknown))}, which "
                    f"{'is not an argument' if len(unknown) == 1 else 'are not arguments'} of "
                    f"{forward} (its inputs: {', '.join(names) or 'none'})"
                )
        # --dynamic NAME:DIM names a tensor argument: no example when the tensors come in a **kwargs or a container
        tensor = next((name for name, value in bound.items() if isinstance(value, torch.Tensor)), None)
        flag = f' (in %export and on the command line: --dynamic "{tensor}:0=name[min,max]")' if tensor else ""
        error.hint = (
            "dynamic_shapes must follow the inputs, by argument name (or as a tuple by position). For these inputs: "
            f"{self.expected_dynamic_shapes()}; put torch.export.Dim('name', min=..., max=...) or Dim.AUTO "
            f"where a size may vary{flag}."
        )


__all__ = ["GivenInputs"]
