"""Nothing in a model file runs unless the user says the file is trusted: the checks made before torch reads a file,
and the guard around torch's loader while it does.

A saved model holds more than tensors: torch's loaders unpickle members (``pickle.loads`` of a ``.pt2``'s
``opaque_obj_*`` constants, ``torch._C._pickle_load_obj`` of its ``custom_obj_*``, ``torch.load`` of ``use_pickle``
entries, legacy weights and the sample inputs), turn the program's shape expressions into sympy with
``sympy.sympify`` (which evaluates Python), load an AOTInductor package's compiled library, and run a TorchScript
archive's ``__setstate__`` methods. Each of these can run code named by the file. So, unless the file is trusted:

1. :func:`directory_problem` reads the zip directory only: one top-level folder (the one torch reads), no name
   twice, a total unpacked size under a cap, no member that inflates more than :data:`MAX_RATIO` times (a zip
   bomb is refused before anything is inflated);
2. :func:`scan_archive` reads the archive's own configs and pickles, never unpickling: it lists each pickle's
   ``GLOBAL`` / ``STACK_GLOBAL`` opcodes (:func:`pickle_globals`) and allows only torch's tensor-rebuild functions,
   storage and dtype names, plain containers and (in a TorchScript archive) the archive's own TorchScript classes;
   it refuses opaque and custom objects, compiled code, and any shape expression that is not plain arithmetic on
   symbols (:func:`expression_problem`); it lists the TorchScript code that a load would run (``__setstate__``);
3. :func:`guarded_loaders` wraps the load itself: every unpickling entry point torch's loaders use (``pickle.loads``
   / ``load`` / ``Unpickler``, ``torch._C._pickle_load_obj``, the AOTInductor loader) refuses, ``torch.load``
   reads tensors only, ``sympy.sympify`` accepts plain expressions only, so a loader of a future torch that
   unpickles something new fails closed instead of running it.

A refusal is one :class:`~..errors.TraceError` (phase ``load``; tag ``untrusted_pickle``, ``untrusted_code``,
``zip_bomb``, ``too_large``, ``not_a_file`` or ``corrupt_archive``) that says what the file holds, where, and how
to open it if it is trusted. Torch-free but for :func:`guarded_loaders` (which imports torch when it is entered).
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import TraceError
from .directory import (
    DEFAULT_MAX_SIZE,
    MAX_RATIO,
    TRUSTED_HINT,
    UntrustedLoad,
    directory_problem,
    max_size_hint,
    size_text,
)
from .expressions import _expressions, expression_problem
from .layout import ArchiveLayout, load_error, open_regular
from .pickles import PickleProblem, _check_pickle, _check_torch_save, allowed_global, pickle_globals


# -- the archive's contents ----------------------------------------------------------------------------------------
@dataclass
class Scan:
    """What :func:`scan_archive` found in a file it lets torch read."""

    #: the TorchScript code a load runs (``Evil.__setstate__ (code/__torch__.py)``), one entry per method
    runs_at_load: list[str] = field(default_factory=list)


_SETSTATE = re.compile(r"^class\s+(\w+)|__setstate__", re.MULTILINE)
_PATH_NAME = re.compile(r"[\w.-]+")


def scan_archive(path: str, layout: ArchiveLayout) -> Scan | TraceError:
    """Read the archive's configs, pickles and code, never unpickling nor evaluating: a refusal, or what torch
    will run at load (see the module's docstring). ``layout`` is what :func:`~.layout.inspect_file` read."""
    try:
        with open_regular(path) as f, zipfile.ZipFile(f) as z:
            if layout.kind == "export":
                return _scan_exported(path, layout, z)
            return _scan_torchscript(path, layout, z)
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, KeyError) as exc:
        return load_error(
            path,
            "corrupt_archive",
            f"{path} could not be read ({type(exc).__name__}: {exc}): the file was cut short or damaged.",
            "Copy or download the file again, or save the model again.",
        )


def _scan_torchscript(path: str, layout: ArchiveLayout, z: zipfile.ZipFile) -> Scan | TraceError:
    found = Scan()
    start = f"{layout.prefix}/"
    for info in z.infolist():
        name = info.filename
        member = name[len(start) :] if name.startswith(start) else name
        # code/*.debug_pkl (source ranges) are not read here: torch's C++ unpickler reads them for text only, and
        # genops over them would cost more than the load (285 ms for a 12-layer BERT); a damaged one is caught when
        # torch reads it (load.py loads the archive again without them)
        if name.endswith(".pkl"):
            problem = _check_pickle(path, member, z.read(info), True, "torch.jit.load")
            if problem is not None:
                return problem
        elif name.endswith(".py"):
            text = z.read(info).decode("utf-8", errors="replace")
            if "__setstate__" in text:
                found.runs_at_load.extend(_setstate_methods(text, member))
    return found


def _setstate_methods(code: str, member: str) -> list[str]:
    """``Evil.__setstate__ (code/__torch__.py)`` for each ``__setstate__`` of a TorchScript code file (any other
    mention of the name counts too: the load may call it)."""
    found: list[str] = []
    current = "?"
    for match in _SETSTATE.finditer(code):
        if match.group(1):
            current = match.group(1)
            continue
        entry = f"{current}.__setstate__ ({member})"
        if entry not in found:
            found.append(entry)
    return found


def _scan_exported(path: str, layout: ArchiveLayout, z: zipfile.ZipFile) -> Scan | TraceError:
    start = f"{layout.prefix}/"
    names = set(z.namelist())
    compiled = [n for n in names if n.startswith(f"{start}data/aotinductor/")]
    if compiled:
        return load_error(
            path,
            "untrusted_code",
            f"{path} was not loaded: it holds an AOTInductor package ({compiled[0][len(start) :]}"
            f"{f' and {len(compiled) - 1} more' if len(compiled) > 1 else ''}), compiled native code that "
            "torch.export.load loads and so runs.",
            TRUSTED_HINT,
        )
    # torch reads every member under models/ as a program named by its path less the last five characters
    models = sorted(n for n in names if n.startswith(f"{start}models/"))
    for model_file in models:
        model = model_file[len(f"{start}models/") : -len(".json")]
        for kind, what in (("weights", "weight"), ("constants", "constant")):
            folder = f"{start}data/{kind}/"
            legacy = f"{folder}{model}.pt"
            if legacy in names:
                problem = _check_torch_save(path, legacy[len(start) :], z.read(legacy))
                if problem is not None:
                    return problem
            config_file = f"{folder}{model}_{kind}_config.json"
            if config_file in names:
                problem = _check_payload_config(path, z, start, folder, config_file, what)
                if problem is not None:
                    return problem
        sample_inputs = f"{start}data/sample_inputs/{model}.pt"
        if sample_inputs in names:
            problem = _check_torch_save(path, sample_inputs[len(start) :], z.read(sample_inputs))
            if problem is not None:
                return problem
        try:
            program = json.loads(z.read(model_file))
        except (ValueError, RecursionError):
            continue  # torch's loader says the JSON is damaged, with its position
        for text in _expressions(program):
            problem_text = expression_problem(text)
            if problem_text is not None:
                return load_error(
                    path,
                    "untrusted_code",
                    f"{path} was not loaded: a shape expression of its program ({model_file[len(start) :]}) is "
                    f"not plain arithmetic ({problem_text}): {text[:120]!r}. torch.export.load evaluates these "
                    "texts as Python (sympy.sympify), which would run it.",
                    TRUSTED_HINT,
                )
    return Scan()


def _check_payload_config(
    path: str, z: zipfile.ZipFile, start: str, folder: str, config_file: str, what: str
) -> TraceError | None:
    """A ``.pt2``'s weights or constants config: no opaque or custom object, no odd path, every pickled entry a
    ``torch.save`` of tensors."""
    try:
        config = json.loads(z.read(config_file)).get("config", {})
        entries = [(str(fqn), dict(meta)) for fqn, meta in config.items()]
    except (ValueError, RecursionError, AttributeError, TypeError):
        return None  # torch's loader says the config is damaged
    for fqn, meta in entries:
        path_name = str(meta.get("path_name", ""))
        member = f"{folder}{path_name}"[len(start) :]
        if path_name.startswith(("opaque_obj_", "custom_obj_")):
            how = "pickle.loads" if path_name.startswith("opaque") else "torch._C._pickle_load_obj"
            kind = "a pickled Python object" if path_name.startswith("opaque") else "a pickled TorchScript object"
            return load_error(
                path,
                "untrusted_pickle",
                f"{path} was not loaded: its {what} {fqn!r} is {kind} ({member}), which torch.export.load "
                f"unpickles with {how}; unpickling runs whatever code the pickle names.",
                TRUSTED_HINT,
            )
        if not _PATH_NAME.fullmatch(path_name) or path_name.startswith("."):
            return load_error(
                path,
                "corrupt_archive",
                f"{path} was not loaded: its {what} {fqn!r} points at {path_name[:80]!r}, not a member of its folder.",
                "torch.export.save never writes such a file: save the program again.",
            )
        if meta.get("use_pickle"):
            full = f"{folder}{path_name}"
            if full in z.namelist():
                problem = _check_torch_save(path, member, z.read(full))
                if problem is not None:
                    return problem
    return None


def admit(
    path: str,
    layout: ArchiveLayout,
    *,
    trusted: bool,
    max_size: int,
    raise_limit: Callable[[int], str] = max_size_hint,
) -> Scan | TraceError:
    """Whether torch may read the file: its zip directory (always: a bomb is a bomb, trusted or not), then, unless
    ``trusted``, its contents (:func:`scan_archive`)."""
    problem = directory_problem(path, layout.infos, max_size, raise_limit)
    if problem is not None:
        return problem
    return Scan() if trusted else scan_archive(path, layout)


# -- the load itself ----------------------------------------------------------------------------------------------
@contextlib.contextmanager
def guarded_loaders(map_location: Any) -> Iterator[list[str]]:
    """The block in which torch reads an untrusted file: yields the list of what was refused (a loader that catches
    :class:`UntrustedLoad` and goes on still leaves its entry there). In the block, from the loading thread or from
    torch's modules in any thread: ``pickle.loads`` / ``load`` / ``Unpickler`` (and their pure-Python twins),
    ``torch._C._pickle_load_obj`` and the AOTInductor loader refuse; ``torch.load`` reads tensors only
    (``weights_only=True``, onto ``map_location`` unless the caller named one); ``sympy.sympify`` accepts only
    plain expressions (:func:`expression_problem`). Under :data:`~..capture.CAPTURE_LOCK`; all is put back after."""
    import pickle

    import sympy  # type: ignore[import-untyped]
    import torch
    import torch.serialization

    from ..capture import CAPTURE_LOCK

    refused: list[str] = []
    loading = threading.get_ident()

    def applies() -> bool:
        if threading.get_ident() == loading:
            return True
        caller = str(sys._getframe(2).f_globals.get("__name__", ""))
        return caller == "torch" or caller.startswith("torch.")

    def refuse(what: str) -> None:
        refused.append(what)
        raise UntrustedLoad(f"refused: {what} would run code from an untrusted file")

    def refusing(real: Callable[..., Any], what: str) -> Callable[..., Any]:
        @functools.wraps(real)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if applies():
                refuse(what)
            return real(*args, **kwargs)

        return guarded

    class GuardedUnpickler(pickle.Unpickler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if applies():
                refuse("pickle.Unpickler")
            super().__init__(*args, **kwargs)

    real_load = torch.load

    @functools.wraps(real_load)
    def tensors_only(f: Any, map_location_: Any = None, *args: Any, **kwargs: Any) -> Any:
        if applies():
            kwargs["weights_only"] = True
            kwargs.pop("pickle_module", None)  # a pickle module and weights_only=True exclude each other
            map_location_ = map_location_ if map_location_ is not None else map_location
        return real_load(f, map_location_, *args, **kwargs)

    real_sympify = sympy.sympify

    @functools.wraps(real_sympify)
    def plain_sympify(a: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(a, str) and applies():
            problem = expression_problem(a)
            if problem is not None:
                refuse(f"sympy.sympify of {a[:80]!r} ({problem})")
        return real_sympify(a, *args, **kwargs)

    patches: list[tuple[Any, str, Any]] = [
        (pickle, "loads", refusing(pickle.loads, "pickle.loads")),
        (pickle, "load", refusing(pickle.load, "pickle.load")),
        (pickle, "_loads", refusing(pickle._loads, "pickle._loads")),  # type: ignore[attr-defined]
        (pickle, "_load", refusing(pickle._load, "pickle._load")),  # type: ignore[attr-defined]
        (pickle, "Unpickler", GuardedUnpickler),
        (pickle, "_Unpickler", GuardedUnpickler),
        (torch, "load", tensors_only),
        (torch.serialization, "load", tensors_only),
        (sympy, "sympify", plain_sympify),
    ]
    if hasattr(torch._C, "_pickle_load_obj"):
        patches.append((torch._C, "_pickle_load_obj", refusing(torch._C._pickle_load_obj, "torch._C._pickle_load_obj")))
    package = sys.modules.get("torch.export.pt2_archive._package")
    if package is None:
        with contextlib.suppress(ImportError):
            import torch.export.pt2_archive._package as package
    if package is not None and hasattr(package, "_load_aoti"):
        patches.append((package, "_load_aoti", refusing(package._load_aoti, "the AOTInductor loader")))
    with CAPTURE_LOCK:
        saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
        try:
            for owner, name, value in patches:
                setattr(owner, name, value)
            yield refused
        finally:
            for owner, name, value in saved:
                setattr(owner, name, value)


def refused_load(path: str, refused: list[str], loader: str) -> TraceError:
    """The run's error when :func:`guarded_loaders` refused what ``loader`` reached for (the pre-scan found nothing:
    a torch that unpickles something new, or a file built to slip past the scan)."""
    what = refused[0]
    tag = "untrusted_code" if "sympify" in what or "AOTInductor" in what else "untrusted_pickle"
    return load_error(
        path,
        tag,
        f"{path} was not loaded: {loader} reached for {what}, which would run code from the file, and was stopped "
        "there.",
        TRUSTED_HINT,
    )


__all__ = [
    "DEFAULT_MAX_SIZE",
    "MAX_RATIO",
    "TRUSTED_HINT",
    "PickleProblem",
    "Scan",
    "UntrustedLoad",
    "admit",
    "allowed_global",
    "directory_problem",
    "expression_problem",
    "guarded_loaders",
    "max_size_hint",
    "open_regular",
    "pickle_globals",
    "refused_load",
    "scan_archive",
    "size_text",
]
