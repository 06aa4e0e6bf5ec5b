"""The probe's cases (:mod:`.probe`): which inputs to derive from the example, and how. Value variants keep every
shape and replace the values; size variants resize the dims that look dynamic (or those the caller names) by one,
one at a time and all together. Each case is a recipe (:class:`CaseSpec`) the probe builds when it runs it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ..derived import has_tensor, is_float, map_tensors, random_like, resized
from ..inputs import tensor_type_str

# ---------------------------------------------------------------------------------------------
# deriving inputs


def _shuffled(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    n = t.numel()
    if n <= 1:
        return t.detach().clone()
    perm = torch.randperm(n, generator=g)
    if bool((perm == torch.arange(n)).all()):
        perm = perm.roll(1)
    return t.detach().reshape(-1)[perm.to(t.device)].reshape(t.shape).clone()


def _negated(t: torch.Tensor, g: torch.Generator) -> torch.Tensor:
    if is_float(t):
        return -t.detach()
    if t.dtype == torch.bool:
        return ~t.detach()
    return random_like(t, t.shape, g)


_VALUE_VARIANTS: tuple[tuple[str, str], ...] = (
    (
        "values:randn",
        "same shapes, values drawn from randn with the example's mean/std "
        "(integer inputs random in the example's range, bool inputs random)",
    ),
    (
        "values:negated",
        "same shapes, floating inputs negated (integer inputs random in the example's range, bool inputs inverted)",
    ),
    ("values:shuffled", "same shapes, the elements of every input randomly permuted (moves an argmax)"),
)


# ---------------------------------------------------------------------------------------------
# choosing dims


def top_level(inputs: tuple[Any, ...] | dict[str, Any]) -> list[tuple[str, int | str, Any]]:
    """(label, key, value) per top-level input: ``("arg0", 0, x)`` or ``("mask", "mask", m)``."""
    if isinstance(inputs, dict):
        return [(str(k), k, v) for k, v in inputs.items()]
    return [(f"arg{i}", i, v) for i, v in enumerate(inputs)]


def _param_sizes(modules: Sequence[torch.nn.Module]) -> set[int]:
    sizes: set[int] = set()
    for m in modules:
        for t in (*m.parameters(), *m.buffers()):
            sizes.update(int(s) for s in t.shape)
    return sizes


def _heuristic_dims(t: torch.Tensor, param_sizes: set[int] | None) -> list[int]:
    if t.dim() == 0:
        return []
    chosen = [0]
    if t.dim() >= 2 and param_sizes is not None:
        chosen += [d for d in range(1, t.dim()) if int(t.shape[d]) not in param_sizes]
    return chosen


def _validate_dims(
    dims: Mapping[int | str, Sequence[int]], inputs: tuple[Any, ...] | dict[str, Any]
) -> dict[str, list[int]]:
    """Explicit ``dims`` as ``label -> sorted non-negative dims``; ValueError naming what is wrong."""
    entries = top_level(inputs)
    by_label = {label: value for label, _, value in entries}
    kwarg = isinstance(inputs, dict)
    out: dict[str, list[int]] = {}
    for key, wanted in dims.items():
        if kwarg:
            if not isinstance(key, str) or key not in by_label:
                names = ", ".join(repr(k) for k in by_label) or "none"
                raise ValueError(f"dims: {key!r} is not a keyword input; the keyword inputs are {names}")
            label = key
        else:
            index: int | None = None
            if isinstance(key, int) and not isinstance(key, bool):
                index = key
            elif isinstance(key, str) and key.startswith("arg") and key[3:].isdigit():
                index = int(key[3:])
            if index is None or not 0 <= index < len(entries):
                valid = f"0..{len(entries) - 1}" if entries else "none (no inputs)"
                raise ValueError(f"dims: input {key!r} does not exist; valid positional input indices are {valid}")
            label = f"arg{index}"
        value = by_label[label]
        if not isinstance(value, torch.Tensor):
            raise ValueError(
                f"dims: input {label} is a {type(value).__name__}, not a tensor; only tensors can be resized"
            )
        ndim = value.dim()
        if isinstance(wanted, int) and not isinstance(wanted, bool):
            wanted = [wanted]
        norm: list[int] = []
        for d in wanted:
            if isinstance(d, bool) or not isinstance(d, int) or not -ndim <= d < ndim:
                valid = f"0..{ndim - 1} (or -{ndim}..-1)" if ndim else "none (it is 0-dimensional)"
                raise ValueError(
                    f"dims: input {label} ({tensor_type_str(value)}) has no dim {d!r}; valid dims are {valid}"
                )
            nd = d % ndim
            if nd not in norm:
                norm.append(nd)
        out[label] = sorted(norm)
    return out


def choose_dims(
    inputs: tuple[Any, ...] | dict[str, Any],
    dims: Mapping[int | str, Sequence[int]] | None,
    module: torch.nn.Module | None,
) -> dict[str, list[int]]:
    """The dims to resize, ``label -> dims``: ``dims`` checked (ValueError naming what is wrong), or without it the
    dims that look dynamic, told apart by ``module``'s parameter sizes."""
    if dims is not None:
        return _validate_dims(dims, inputs)
    param_sizes = _param_sizes([module]) if module is not None else None
    chosen: dict[str, list[int]] = {}
    for label, _, value in top_level(inputs):
        if isinstance(value, torch.Tensor):
            ds = _heuristic_dims(value, param_sizes)
            if ds:
                chosen[label] = ds
    return chosen


# ---------------------------------------------------------------------------------------------
# the cases


@dataclass
class CaseSpec:
    """One case: its name and description, how to build its inputs, and the dims it varies."""

    name: str
    description: str
    build: Callable[[], tuple[Any, ...] | dict[str, Any]]
    varied: list[tuple[str, int]] = field(default_factory=list)  # (label, dim)


def _replace_top(
    inputs: tuple[Any, ...] | dict[str, Any], replacements: Mapping[str, Any]
) -> tuple[Any, ...] | dict[str, Any]:
    if isinstance(inputs, dict):
        return {k: replacements.get(str(k), v) for k, v in inputs.items()}
    return tuple(replacements.get(f"arg{i}", v) for i, v in enumerate(inputs))


def plan_cases(
    inputs: tuple[Any, ...] | dict[str, Any],
    chosen: dict[str, list[int]],
    g: torch.Generator,
) -> list[CaseSpec]:
    """The cases for ``inputs``: the value variants (when a tensor is among them), then the size variants of the
    ``chosen`` dims (all together, then each one larger, each one smaller), random values drawn from ``g``."""
    specs: list[CaseSpec] = []
    if has_tensor(inputs):
        transforms: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
            "values:randn": lambda t: random_like(t, t.shape, g),
            "values:negated": lambda t: _negated(t, g),
            "values:shuffled": lambda t: _shuffled(t, g),
        }
        for name, description in _VALUE_VARIANTS:
            fn = transforms[name]
            specs.append(CaseSpec(name, description, functools.partial(map_tensors, inputs, fn)))

    tensors = {label: v for label, _, v in top_level(inputs) if isinstance(v, torch.Tensor)}
    pairs = [(label, d) for label, ds in chosen.items() for d in ds]

    def resize(changes: Mapping[str, Mapping[int, int]]) -> Callable[[], tuple[Any, ...] | dict[str, Any]]:
        def build() -> tuple[Any, ...] | dict[str, Any]:
            repl: dict[str, Any] = {}
            for label, by_dim in changes.items():
                t = tensors[label]
                shape = [int(s) for s in t.shape]
                for d, size in by_dim.items():
                    shape[d] = size
                repl[label] = resized(t, shape, g)
            return _replace_top(inputs, repl)

        return build

    if len(pairs) >= 2:
        changes: dict[str, dict[int, int]] = {}
        for label, d in pairs:
            changes.setdefault(label, {})[d] = int(tensors[label].shape[d]) + 1
        desc = "; ".join(
            f"{label} dim {d}: {int(tensors[label].shape[d])} -> {int(tensors[label].shape[d]) + 1}"
            for label, d in pairs
        )
        specs.append(
            CaseSpec(
                "size:all+1",
                f"every varied dim one larger together ({desc}); example values kept, new entries random",
                resize(changes),
                list(pairs),
            )
        )
    for sign in (+1, -1):
        for label, d in pairs:
            size = int(tensors[label].shape[d])
            new = size + 1 if sign > 0 else max(1, size - 1)
            if new == size or (sign < 0 and new == size + 1):
                continue
            suffix = "+1" if sign > 0 else "-1"
            kept = "example values kept, new entries random" if sign > 0 else "example values truncated"
            specs.append(
                CaseSpec(
                    f"size:{label}.dim{d}{suffix}",
                    f"{label} dim {d}: {size} -> {new}, other inputs unchanged; {kept}",
                    resize({label: {d: new}}),
                    [(label, d)],
                )
            )
    return specs
