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

import ast
import contextlib
import functools
import io
import json
import pickletools
import re
import sys
import threading
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import TraceError
from .layout import MAX_MEMBERS, ArchiveLayout, load_error, member_count, open_regular

#: the largest total unpacked size (bytes, from the zip directory) ``tj.load`` reads unless told more
DEFAULT_MAX_SIZE = 8 * 2**30
#: a member that inflates more than this many times is a zip bomb (torch stores tensors uncompressed, and its
#: compressed code and debug members inflate about 3 to 10 times)
MAX_RATIO = 100
#: members smaller than this (unpacked) are not judged by their ratio: a small member cannot hurt
RATIO_FLOOR = 2**20
#: the longest shape expression read (torch writes a few hundred characters at most)
MAX_EXPRESSION = 10_000

#: how to open a trusted file, as every refusal says it
TRUSTED_HINT = (
    "If you trust where the file comes from (you saved it yourself), open it in a notebook with tj.load(path, "
    "trusted=True), or with --trusted on tracejit view and tracejit diff: torch then reads it as it would, running "
    "what it holds."
)


class UntrustedLoad(Exception):
    """Raised inside :func:`guarded_loaders` when torch's loader reaches an entry point that would run code from
    the file (and recorded there: a loader that catches it still fails)."""


def size_text(size: int) -> str:
    """``2 GiB``, ``1.5 MiB``, ``312 bytes``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"


# -- the zip directory -------------------------------------------------------------------------------------------
def directory_problem(
    path: str, infos: list[zipfile.ZipInfo], max_size: int, raise_limit: Callable[[int], str]
) -> TraceError | None:
    """What is wrong with a zip directory before any member is read: a name twice or members in more than one
    top-level folder (torch reads the folder of the first member; a reader of another folder could be shown one
    file and torch load another), a total unpacked size over ``max_size`` (``raise_limit(size)`` says how to allow
    it), a member inflating more than :data:`MAX_RATIO` times."""
    names = [i.filename for i in infos]
    twice = sorted({n for n in names if names.count(n) > 1}) if len(set(names)) != len(names) else []
    if twice:
        return load_error(
            path,
            "corrupt_archive",
            f"{path} names {twice[0]} twice in its zip directory: readers disagree on which one is the member, "
            "so it is not read.",
            "torch.jit.save and torch.export.save never write such a file: save the model again.",
        )
    folders = sorted({n.split("/", 1)[0] if "/" in n else "" for n in names})
    if len(folders) > 1:
        shown = ", ".join(f or "(the top level)" for f in folders[:4])
        return load_error(
            path,
            "corrupt_archive",
            f"{path} has members in more than one top-level folder ({shown}); torch.jit.save and torch.export.save "
            "write one, and torch reads only the first member's folder, so it is not read.",
            "Save the model again with torch, or open the zip and keep the one saved model in it.",
        )
    total = sum(i.file_size for i in infos)
    if total > max_size:
        return load_error(
            path,
            "too_large",
            f"{path} unpacks to {size_text(total)} ({total} bytes, from its zip directory), over the limit of "
            f"{size_text(max_size)} ({max_size} bytes): loading it would take at least that much memory.",
            raise_limit(total),
        )
    for info in infos:
        if info.file_size > RATIO_FLOOR and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            ratio = info.file_size // max(info.compress_size, 1)
            return load_error(
                path,
                "zip_bomb",
                f"{path} is a zip bomb: its member {info.filename} inflates {ratio} times, from "
                f"{size_text(info.compress_size)} to {size_text(info.file_size)} (torch stores tensors "
                "uncompressed). Nothing was inflated.",
                "If you compressed a saved model yourself, unzip it and save it again with torch.jit.save or "
                "torch.export.save, which write it as torch reads it.",
            )
    return None


def max_size_hint(size: int) -> str:
    """How ``tj.load`` reads a file over its size limit."""
    return (
        f"If the file is what you expect and the memory is there, raise the limit: tj.load(path, max_size={size}) "
        f"(jupyter_tracejit.core.archive.guard.DEFAULT_MAX_SIZE is {size_text(DEFAULT_MAX_SIZE)})."
    )


# -- pickles, read without unpickling ---------------------------------------------------------------------------
#: what a saved tensor's pickle may name (torch's weights-only unpickler allows these): its rebuild functions,
#: storage and tensor classes, dtypes, quantization schemes, plain containers
_TENSOR_GLOBALS = frozenset(
    {
        "collections.OrderedDict",
        "collections.Counter",
        "builtins.set",
        "builtins.frozenset",
        "builtins.complex",
        "builtins.bytearray",
        "builtins.slice",
        "_codecs.encode",  # bytes, pickled with protocol 2
        "torch.Size",
        "torch.Tensor",
        "torch.device",
        "torch.nn.parameter.Parameter",
        "torch.serialization._get_layout",
        "torch._tensor._rebuild_from_type_v2",
        "torch.storage.TypedStorage",
        "torch.storage.UntypedStorage",
    }
)
_TENSOR_PATTERNS = (
    re.compile(r"torch\._utils\._rebuild_(?!device_tensor_from_numpy)\w+"),
    re.compile(r"torch\.(?:cuda\.)?(?:sparse\.)?[A-Z]\w*(?:Storage|Tensor)"),
    re.compile(r"torch\.(?:u?int\d+|float\d+\w*|bfloat16|half|bool|complex\d+|q(?:u)?int\w+|bits\w+|per_\w+)"),
)
#: what a TorchScript archive's pickles name beyond that: its own TorchScript classes (compiled from its code,
#: never imported) and the TorchScript unpickler's list builders
_TORCHSCRIPT_PATTERNS = (
    re.compile(r"__torch__(?:\.\w+)+"),
    re.compile(r"torch\.jit\._pickle\.(?:build_\w+|restore_type_tag)"),
)
_PUSH_STRING = frozenset(
    {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING", "STRING"}
)
_PUT = frozenset({"BINPUT", "LONG_BINPUT", "PUT"})
_GET = frozenset({"BINGET", "LONG_BINGET", "GET"})
_FRAMING = frozenset({"PROTO", "FRAME", "STOP"})


class PickleProblem(ValueError):
    """A pickle that cannot be read without running it (its opcodes do not say what it names)."""


def pickle_globals(data: bytes) -> list[str]:
    """Every global a pickle names (``module.name``), in order, read from its opcodes (``pickletools.genops``):
    nothing is unpickled. ``STACK_GLOBAL`` takes its names from strings pushed just before (or read back from the
    memo); one whose names are not plain strings there, and the extension-registry opcodes (``EXT1``...), raise
    :class:`PickleProblem`; so does a damaged pickle."""
    found: list[str] = []
    recent: list[Any] = []  # what the last opcodes pushed (a string, or None for anything else)
    memo: dict[int, Any] = {}
    try:
        for op, value, _ in pickletools.genops(data):
            name = op.name
            arg: Any = value
            if name in _PUSH_STRING:
                recent.append(arg if isinstance(arg, str) else arg.decode("latin-1"))
            elif name == "MEMOIZE":
                memo[len(memo)] = recent[-1] if recent else None
            elif name in _PUT:
                memo[int(arg)] = recent[-1] if recent else None
            elif name in _GET:
                recent.append(memo.get(int(arg)))
            elif name in ("GLOBAL", "INST"):
                module, _, attribute = str(arg).partition(" ")
                found.append(f"{module}.{attribute}")
                recent.append(None)
            elif name == "STACK_GLOBAL":
                if len(recent) < 2 or not isinstance(recent[-2], str) or not isinstance(recent[-1], str):
                    raise PickleProblem("a STACK_GLOBAL whose module and name are not plain strings")
                found.append(f"{recent[-2]}.{recent[-1]}")
                recent.append(None)
            elif name in ("EXT1", "EXT2", "EXT4"):
                raise PickleProblem(f"an {name} opcode (a global named through the copyreg extension registry)")
            elif name not in _FRAMING:
                recent.append(None)
            if len(recent) > 64:
                del recent[:-8]
    except PickleProblem:
        raise
    except Exception as exc:  # genops raises ValueError and friends on a damaged pickle
        raise PickleProblem(f"damaged: {exc}") from None
    return found


def allowed_global(name: str, torchscript: bool) -> bool:
    """Whether a saved tensor's (``torchscript``: a TorchScript archive's) pickle may name ``name``."""
    if name in _TENSOR_GLOBALS or any(p.fullmatch(name) for p in _TENSOR_PATTERNS):
        return True
    return torchscript and any(p.fullmatch(name) for p in _TORCHSCRIPT_PATTERNS)


def _pickle_refusal(path: str, member: str, problem: str, who: str) -> TraceError:
    return load_error(
        path,
        "untrusted_pickle",
        f"{path} was not loaded: its pickle {member} {problem}. {who} would unpickle it, and unpickling runs "
        "whatever code the pickle names; a saved model's pickles hold only tensors, containers and its own "
        "TorchScript classes, so the file is hostile or corrupt.",
        TRUSTED_HINT,
    )


def _check_pickle(path: str, member: str, data: bytes, torchscript: bool, who: str) -> TraceError | None:
    try:
        names = pickle_globals(data)
    except PickleProblem as problem:
        if str(problem).startswith("damaged"):
            return load_error(
                path,
                "corrupt_archive",
                f"{path} was not loaded: its pickle {member} is {problem}.",
                "Copy or download the file again, or save the model again.",
            )
        return _pickle_refusal(path, member, f"holds {problem}", who)
    bad = [n for n in dict.fromkeys(names) if not allowed_global(n, torchscript)]
    if bad:
        more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
        return _pickle_refusal(path, member, f"names {bad[0]}{more}, which is not part of a saved model", who)
    return None


def _check_torch_save(path: str, member: str, data: bytes) -> TraceError | None:
    """A member that ``torch.load`` reads (a ``torch.save`` zip inside the archive): its own directory, then each
    of its pickles."""
    if data[:4] != b"PK\x03\x04":
        return _pickle_refusal(
            path, member, "is an old-style raw pickle (torch.export.save writes a zip)", "torch.export.load"
        )
    try:
        count = member_count(io.BytesIO(data))
        if count > MAX_MEMBERS:
            return load_error(
                path,
                "zip_bomb",
                f"{path} was not loaded: its member {member} lists {count} members (the limit is {MAX_MEMBERS}).",
                "torch.export.save never writes such a file: save the program again.",
            )
        with zipfile.ZipFile(io.BytesIO(data)) as inner:
            infos = inner.infolist()
            problem = directory_problem(f"{path}:{member}", infos, DEFAULT_MAX_SIZE, max_size_hint)
            if problem is not None:
                problem.file = path
                return problem
            for info in infos:
                if info.filename.endswith(".pkl"):
                    inner_name = f"{member}:{info.filename.split('/', 1)[-1]}"
                    found = _check_pickle(path, inner_name, inner.read(info), False, "torch.export.load")
                    if found is not None:
                        return found
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        return load_error(
            path,
            "corrupt_archive",
            f"{path} was not loaded: its member {member} is a damaged zip ({exc}).",
            "Copy or download the file again, or save the model again.",
        )
    return None


# -- shape expressions (sympy strings), read without evaluating them ------------------------------------------------
#: the functions torch's exported programs write in shape expressions (``sympy.srepr`` of its symbolic shapes):
#: sympy's arithmetic, relations and logic, and torch's own (torch.utils._sympy.functions)
_EXPRESSION_CALLS = frozenset(
    {
        *("Symbol", "Integer", "Float", "Rational", "Add", "Mul", "Pow", "Mod", "Max", "Min", "Abs"),
        *("floor", "ceiling", "sqrt", "Eq", "Ne", "Lt", "Le", "Gt", "Ge", "Equality", "Unequality"),
        *("StrictLessThan", "StrictGreaterThan", "LessThan", "GreaterThan", "And", "Or", "Not", "Xor"),
        *("Piecewise", "ExprCondPair", "ITE", "Tuple", "BooleanTrue", "BooleanFalse", "Half", "One", "Zero"),
        *("NegativeOne", "Infinity", "NegativeInfinity", "NaN", "ComplexInfinity"),
        *("FloorDiv", "ModularIndexing", "Where", "PythonMod", "CleanDiv", "CeilToInt", "FloorToInt", "CeilDiv"),
        *("LShift", "RShift", "PowByNatural", "FloatPow", "FloatTrueDiv", "IntTrueDiv", "TruncToFloat"),
        *("IsNonOverlappingAndDenseIndicator", "TruncToInt", "RoundToInt", "RoundDecimal", "ToFloat", "Identity"),
    }
)
_GENERATED_CALL = re.compile(r"(?:OpaqueUnaryFn|BitwiseFn)_\w+")
_POWERS = frozenset({"Pow", "PowByNatural", "FloatPow"})
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_NUMBER_TEXT = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.BitAnd,
    ast.BitOr,
    ast.BitXor,
    ast.LShift,
    ast.RShift,
    ast.USub,
    ast.UAdd,
    ast.Not,
    ast.Invert,
    ast.And,
    ast.Or,
    ast.Eq,
    ast.NotEq,
    ast.Lt,
    ast.LtE,
    ast.Gt,
    ast.GtE,
)
_STRUCTURE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.Tuple, ast.Load, ast.keyword)


@functools.lru_cache(maxsize=4096)  # a program repeats its expressions: 1,202 checks for 12-layer BERT, most alike
def expression_problem(text: str) -> str | None:
    """Why ``sympy.sympify(text)`` could run code or exhaust the machine, or ``None`` for a plain expression:
    names, numbers, arithmetic, comparisons and calls of the functions torch writes (``Symbol('s77',
    positive=True, integer=True)``, ``FloorDiv(s0, 2)``), no attribute, subscript, lambda or other call, no power
    of a power or with a constant exponent over 64. ``sympify`` evaluates its string as Python."""
    if len(text) > MAX_EXPRESSION:
        return f"it is {len(text)} characters long"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "it is not an expression"
    texts: set[int] = set()  # the string constants passed where a name or a number is written (Symbol('s0'))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func.id if isinstance(node.func, ast.Name) else None
            if func is None or not (func in _EXPRESSION_CALLS or _GENERATED_CALL.fullmatch(func)):
                return f"it calls {ast.unparse(node.func)}"
            for i, arg in enumerate(node.args):
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    symbol = func == "Symbol" and _NAME.fullmatch(arg.value)
                    number = func in ("Float", "Integer", "Rational") and _NUMBER_TEXT.fullmatch(arg.value)
                    if i != 0 or not (symbol or number):
                        return f"it passes the text {arg.value[:40]!r} to {func}"
                    texts.add(id(arg))
            for keyword in node.keywords:
                value = keyword.value
                if keyword.arg is None or not (
                    isinstance(value, ast.Constant) and isinstance(value.value, (bool, int))
                ):
                    return f"it passes {ast.unparse(keyword)} to {func}"
            if func in _POWERS and len(node.args) == 2 and _power_problem(node.args[0], node.args[1]):
                return f"it raises to a power too large to compute ({ast.unparse(node)[:60]})"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            if _power_problem(node.left, node.right):
                return f"it raises to a power too large to compute ({ast.unparse(node)[:60]})"
        elif isinstance(node, ast.Name):
            if not _NAME.fullmatch(node.id):
                return f"it names {node.id}"
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or node.value is None:
                continue
            if isinstance(node.value, int) and abs(node.value) >= 2**64:
                return "it holds an integer of more than 64 bits"
            if isinstance(node.value, str) and id(node) not in texts:
                return f"it holds the text {node.value[:40]!r}"
            if not isinstance(node.value, (int, float, str)):
                return f"it holds {type(node.value).__name__} {node.value!r}"[:80]
        elif not isinstance(node, (*_STRUCTURE, *_OPERATORS, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)):
            return f"it holds {type(node).__name__.lower()} syntax ({ast.unparse(node)[:60]})"
    return None


def _power_problem(base: ast.AST, exponent: ast.AST) -> bool:
    """A power sympy could take long to compute: a constant exponent over 64 (or its number in ``Integer(..)``), or
    a power of a power."""
    if isinstance(exponent, ast.Call) and isinstance(exponent.func, ast.Name) and exponent.func.id == "Integer":
        exponent = exponent.args[0] if exponent.args else exponent
    if isinstance(exponent, ast.UnaryOp):
        exponent = exponent.operand
    if isinstance(exponent, ast.Constant) and isinstance(exponent.value, (int, float)) and abs(exponent.value) > 64:
        return True
    return any(
        (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow))
        or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _POWERS)
        for n in ast.walk(base)
    )


def _expressions(value: Any) -> Iterator[str]:
    """Every ``expr_str`` of a program's JSON (its symbolic ints, floats and bools)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if key == "expr_str" and isinstance(child, str):
                    yield child
                elif isinstance(child, (dict, list)):
                    stack.append(child)
        elif isinstance(item, list):
            stack.extend(child for child in item if isinstance(child, (dict, list)))


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
