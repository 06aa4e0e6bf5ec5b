"""Pickles read without unpickling them: the globals each names (``GLOBAL`` / ``STACK_GLOBAL`` opcodes, listed by
:mod:`pickletools`), allowed only when they are torch's tensor-rebuild functions, storage and dtype names, plain
containers or (in a TorchScript archive) the archive's own TorchScript classes (:func:`allowed_global`). Torch-free;
part of the guard (:mod:`.guard`)."""

from __future__ import annotations

import io
import pickletools
import re
import zipfile
from typing import Any

from ..errors import TraceError
from .directory import DEFAULT_MAX_SIZE, TRUSTED_HINT, directory_problem, max_size_hint
from .layout import MAX_MEMBERS, load_error, member_count

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
