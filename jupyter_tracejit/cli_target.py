"""What ``tracejit <verb> FILE.py:NAME --inputs EXPR`` captures: the file imported as a fresh module (its directory
first on ``sys.path``, like ``python FILE.py`` but without running it as ``__main__``), its attribute ``NAME``
(dotted names reach into classes and objects; an ``nn.Module`` subclass is instantiated with no arguments), and the
Python expressions of the inputs, evaluated in the file's namespace with ``torch`` available. Every problem is a
:class:`UsageError`: one line naming it."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any


class UsageError(Exception):
    """A problem with what the command was asked to do; the message is one line for stderr."""


# -- loading the target ---------------------------------------------------------------------------------------
def split_target(spec: str) -> tuple[Path, str]:
    file, sep, name = spec.rpartition(":")
    if not sep or not file or not name:
        raise UsageError(f"expected FILE.py:NAME, got {spec!r}")
    return Path(file), name


def load_file(path: Path) -> ModuleType:
    """Import ``path`` under a unique module name (registered in ``sys.modules``, its directory on ``sys.path``)."""
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    resolved = path.resolve()
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:10]
    stem = "".join(c if c.isalnum() else "_" for c in resolved.stem)
    name = f"_tracejit_cli_{stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    folder = str(resolved.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        sys.modules.pop(name, None)
        frames = traceback.extract_tb(exc.__traceback__)
        user = [f for f in frames if Path(f.filename).resolve() == resolved]
        line = user[-1].lineno if user else exc.lineno if isinstance(exc, SyntaxError) else None
        where = f" (line {line})" if line else ""
        raise UsageError(
            f"importing {path} failed{where}: {type(exc).__name__}: {exc}".splitlines()[0]
            + "\n"
            + user_traceback(exc).rstrip()
        ) from exc
    return module


def user_traceback(exc: BaseException) -> str:
    """The traceback of an exception raised while importing the user's file, without our frames and importlib's
    (which come first and say nothing about the user's code): a syntax error is its file, line and caret only."""
    here = str(Path(__file__).resolve().parent)
    te = traceback.TracebackException.from_exception(exc)
    te.stack = traceback.StackSummary.from_list(
        [
            f
            for f in te.stack
            if not f.filename.startswith("<frozen importlib") and not str(Path(f.filename).resolve()).startswith(here)
        ]
    )
    return "".join(te.format())


def resolve_name(module: ModuleType, name: str, path: Path) -> Any:
    obj: Any = module
    for part in name.split("."):
        if not part.isidentifier() or not hasattr(obj, part):
            raise UsageError(f"{path} has no attribute {name!r}")
        obj = getattr(obj, part)
    return obj


def make_target(obj: Any, name: str) -> Any:
    """A function, a module instance, or a module class instantiated with no arguments."""
    import torch

    if isinstance(obj, type):
        if not issubclass(obj, torch.nn.Module):
            raise UsageError(f"{name} is a class but not an nn.Module subclass: pass a function or a module")
        try:
            return obj()
        except Exception as exc:
            raise UsageError(
                f"could not instantiate {name}() with no arguments: {type(exc).__name__}: {exc}".splitlines()[0]
                + f" (define a module instance in the file, e.g. model = {name}(...), and trace that)"
            ) from exc
    if not callable(obj):
        raise UsageError(f"{name} is not a function or an nn.Module: it is of type {type(obj).__name__}")
    return obj


def definition_line(path: Path, name: str) -> int:
    """The line of ``FILE.py`` that defines ``NAME`` (its first part): what nodes recorded only inside torch are
    attributed to, as the place the traced model comes from. 0 when not found (e.g. defined by an import)."""
    import ast

    head = name.split(".")[0]
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return 0
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == head:
            return node.lineno
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if any(isinstance(t, ast.Name) and t.id == head for t in targets):
            return node.lineno
    return 0


def evaluate(expr: str, namespace: dict[str, Any], option: str) -> Any:
    try:
        code = compile(expr, f"<{option}>", "eval")
    except SyntaxError as exc:
        raise UsageError(f"{option} {expr!r} is not a Python expression: {exc.msg}") from exc
    try:
        return eval(code, namespace)
    except Exception as exc:
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise UsageError(f"{option} {expr!r} failed: {type(exc).__name__}: {msg}") from exc


def input_set(value: Any, option: str) -> tuple[Any, dict[str, Any] | None]:
    """``(positional inputs, keyword inputs)`` from what an inputs expression gave."""
    import torch

    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise UsageError(f"{option}: a dict of keyword inputs needs string keys")
        return None, value
    if isinstance(value, torch.Tensor):
        return (value,), None
    if isinstance(value, tuple):
        return value, None
    raise UsageError(
        f"{option} must give a tuple of inputs, a single tensor or a dict of keyword inputs, "
        f"not a value of type {type(value).__name__}"
    )


def target_and_inputs(
    path: Path, name: str, seed: int, inputs_expr: str
) -> tuple[Any, Any, dict[str, Any] | None, dict[str, Any]]:
    """Import the file (after ``torch.manual_seed(seed)``), the target, its example inputs (positional, keyword)
    evaluated in its namespace, and that namespace (for the options given as Python)."""
    import torch

    torch.manual_seed(seed)
    module = load_file(path)
    target = make_target(resolve_name(module, name, path), name)
    namespace = {"torch": torch, **vars(module)}
    example, kwargs = input_set(evaluate(inputs_expr, namespace, "--inputs"), "--inputs")
    return target, example, kwargs, namespace


def input_sets(text: str, namespace: dict[str, Any], flag: str) -> list[Any]:
    """An option's input sets (``--check-inputs``), evaluated: each positional inputs, or a dict of keyword
    inputs; a single set is taken as a list of one."""
    value = evaluate(text, namespace, flag)
    sets = value if isinstance(value, list) else [value]
    if not sets:
        raise UsageError(f"{flag} gave an empty list: give at least one input set, or leave it out")
    found = []
    for v in sets:
        pos, kw = input_set(v, flag)
        found.append(kw if kw is not None else pos)
    return found
