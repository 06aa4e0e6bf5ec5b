"""The models of a migration (``tracejit migrate LIST ...``), read from the lists a user keeps beside their code.

Two forms, one :class:`Entry` per model:

- a TOML (or JSON) file of ``[[models]]`` tables, each naming a ``target = "FILE.py:NAME"`` (as ``tracejit export``
  takes it, relative to the list's folder) and its ``inputs`` (a Python expression evaluated in that file's
  namespace with ``torch`` available), optionally ``name``, ``dynamic`` (``--dynamic`` specs), ``check_inputs``
  (an expression), ``strict``, ``mode`` (``"eval"`` / ``"train"``), ``no_grad``, ``draft``, ``seed``; a
  ``[defaults]`` table applies to every model. Each target is imported when its row runs (one model in memory at
  a time).
- a Python file (``models.py``, or ``models.py:NAME``) whose ``MIGRATE`` (or ``NAME``) is a list of dicts with the
  same keys, where ``model`` (a module or function; or ``build``, a function of no arguments returning it) and
  ``inputs`` are live objects, ``check_inputs`` a list of input sets and ``dynamic_shapes`` torch's own form may
  replace ``dynamic``.

Everything is checked before any model runs: an unknown key, a missing target file, a ``--dynamic`` spec that does
not parse or two models of one name are usage errors naming the list, the entry and the fix. What fails once a
model runs (its file does not import, its inputs do not evaluate) is that model's row, not the whole report.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..cli_target import UsageError, load_file, resolve_name, split_target

#: what every entry may say, in both forms (with the Python form's live keys below)
OPTION_KEYS = ("name", "dynamic", "check_inputs", "strict", "mode", "no_grad", "draft", "seed")
#: the TOML / JSON form's keys
FILE_KEYS = ("target", "inputs", *OPTION_KEYS)
#: the Python form's keys: the model (or a function building it) and its inputs as objects
PYTHON_KEYS = ("model", "build", "inputs", "dynamic_shapes", *OPTION_KEYS)
#: the variable a Python list file defines unless ``FILE.py:NAME`` names another
DEFAULT_LIST_NAME = "MIGRATE"
MODES = ("as_is", "eval", "train")

TOML_EXAMPLE = """[[models]]
target = "models/net.py:Net"
inputs = "torch.randn(4, 8)"
dynamic = ["x:0=batch[2,64]"]"""


@dataclass
class Loaded:
    """What an entry exports: the model, its inputs and check inputs, and the file it came from (if any)."""

    model: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any] | None
    check_inputs: list[Any] | None
    file: str = ""
    line: int = 0


@dataclass
class Entry:
    """One model of a migration list."""

    name: str
    #: where it is listed, in words: ``models.toml, models[3]`` or ``models.py:MIGRATE[3]``
    where: str
    #: the model's target as the report shows it: ``models/net.py:Net``, or the Python list's entry
    target: str
    #: imports / builds the model and evaluates its inputs (when its row runs); raises :class:`UsageError`
    load: Callable[[], Loaded]
    #: ``--dynamic`` specs as written (the report shows them); or torch's own dynamic_shapes (``shapes``)
    dynamic: list[str] = field(default_factory=list)
    shapes: Any = None
    strict: bool = False
    mode: str = "as_is"
    no_grad: bool = False
    draft: str | None = None
    seed: int = 0

    def export_options(self) -> dict[str, Any]:
        """``tj.export``'s keyword options for this entry (the dims parsed from ``dynamic``)."""
        from ..core.export.options import parse_dynamic

        shapes = parse_dynamic(self.dynamic) if self.dynamic else self.shapes
        options: dict[str, Any] = {
            "dynamic_shapes": shapes,
            "strict": self.strict,
            "module_mode": self.mode,
            "no_grad": self.no_grad,
        }
        if self.draft is not None:
            options["draft"] = self.draft
        return options


def read_lists(specs: list[str]) -> list[Entry]:
    """Every entry of every list on the command line, in order; :class:`UsageError` for a list or entry that is
    wrong, before anything runs."""
    entries: list[Entry] = []
    for spec in specs:
        path, name = _list_path(spec)
        if path.suffix == ".py":
            entries += _python_entries(path, name or DEFAULT_LIST_NAME)
        else:
            entries += _file_entries(path)
    seen: dict[str, str] = {}
    for entry in entries:
        if entry.name in seen:
            raise UsageError(
                f"two models are named {entry.name!r} ({seen[entry.name]} and {entry.where}): the report and "
                '--baseline match models by name; give one of them another name = "..."'
            )
        seen[entry.name] = entry.where
    if not entries:
        raise UsageError(f"{', '.join(specs)} lists no model: add [[models]] tables (or {DEFAULT_LIST_NAME} entries)")
    return entries


def _list_path(spec: str) -> tuple[Path, str | None]:
    head, sep, tail = spec.rpartition(":")
    if sep and head.endswith(".py") and tail.isidentifier():
        path, name = split_target(spec)
    else:
        path, name = Path(spec), None
    if path.suffix not in (".py", ".toml", ".json"):
        raise UsageError(
            f"{spec}: a migration list is a .toml or .json file of [[models]], or a .py file defining "
            f"{DEFAULT_LIST_NAME} (models.py, or models.py:NAME for another variable)"
        )
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    return path, name


# -- TOML / JSON ------------------------------------------------------------------------------------------------
def _file_entries(path: Path) -> list[Entry]:
    try:
        text = path.read_text(encoding="utf-8")
        data: Any = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not valid {path.suffix[1:].upper()}: {exc}") from None
    if isinstance(data, list):
        data = {"models": data}
    if not isinstance(data, dict) or not isinstance(data.get("models"), list):
        raise UsageError(f"{path} has no list of models: write one table per model,\n{TOML_EXAMPLE}")
    unknown = sorted(set(data) - {"models", "defaults"})
    if unknown:
        raise UsageError(f"{path}: unknown top-level key {unknown[0]!r}; a list holds [defaults] and [[models]]")
    defaults = data.get("defaults", {})
    if not isinstance(defaults, dict):
        raise UsageError(f"{path}: [defaults] must be a table of options ({', '.join(OPTION_KEYS[1:])})")
    _known_keys(defaults, OPTION_KEYS[1:], f"{path} [defaults]")
    folder = path.parent
    entries = []
    for i, item in enumerate(data["models"]):
        where = f"{path.name}, models[{i}]"
        if not isinstance(item, dict):
            raise UsageError(f"{where} must be a table (target = ..., inputs = ...), not {type(item).__name__}")
        _known_keys(item, FILE_KEYS, where)
        values = {**defaults, **item}
        target, inputs = _required(values, "target", where), _required(values, "inputs", where)
        file, attribute = split_target(target)
        full = file if file.is_absolute() else folder / file
        if full.suffix != ".py" or not full.is_file():
            raise UsageError(f"{where}: target {target!r}: no such Python file {full}")
        check = _text(values, "check_inputs", where)
        entries.append(
            _entry(values, where, target, attribute.rsplit(".", 1)[-1], _file_loader(full, attribute, inputs, check))
        )
    return entries


def _file_loader(path: Path, name: str, inputs: str, check: str | None) -> Callable[[], Loaded]:
    def load() -> Loaded:
        from ..cli_target import definition_line, evaluate, input_set, input_sets, make_target

        module = load_file(path)
        model = make_target(resolve_name(module, name, path), name)
        import torch

        namespace = {"torch": torch, **vars(module)}
        args, kwargs = input_set(evaluate(inputs, namespace, "inputs"), "inputs")
        sets = input_sets(check, namespace, "check_inputs") if check else None
        return Loaded(model, tuple(args or ()), kwargs, sets, str(path.resolve()), definition_line(path, name))

    return load


# -- Python -----------------------------------------------------------------------------------------------------
def _python_entries(path: Path, name: str) -> list[Entry]:
    module = load_file(path)
    if not hasattr(module, name):
        raise UsageError(
            f"{path} defines no {name}: a Python migration list is a list of dicts, "
            f'{name} = [{{"model": Net(), "inputs": (torch.randn(4, 8),), "dynamic": ["x:0=batch[2,64]"]}}]'
        )
    items = getattr(module, name)
    if not isinstance(items, (list, tuple)):
        raise UsageError(f"{path}:{name} must be a list of dicts (one per model), not {type(items).__name__}")
    entries = []
    for i, item in enumerate(items):
        where = f"{path.name}:{name}[{i}]"
        if not isinstance(item, Mapping):
            raise UsageError(f"{where} must be a dict (model=..., inputs=...), not {type(item).__name__}")
        _known_keys(item, PYTHON_KEYS, where)
        if ("model" in item) == ("build" in item):
            raise UsageError(f"{where}: give the model as model=... or a function of no arguments as build=..., once")
        if "inputs" not in item:
            raise UsageError(f"{where} has no inputs: add inputs=(torch.randn(4, 8),) (a tuple, a tensor or a dict)")
        if "dynamic" in item and "dynamic_shapes" in item:
            raise UsageError(f"{where}: give dynamic (--dynamic specs) or dynamic_shapes (torch's form), not both")
        made = item.get("model", item.get("build"))
        label = getattr(made, "__name__", type(made).__name__)
        entry = _entry(item, where, f"{path.name}:{name}[{i}]", label, _python_loader(item, path, where))
        entry.shapes = item.get("dynamic_shapes")
        entries.append(entry)
    return entries


def _python_loader(item: Mapping[str, Any], path: Path, where: str) -> Callable[[], Loaded]:
    def load() -> Loaded:
        from ..cli_target import input_set, make_target

        if "build" in item:
            try:
                model = item["build"]()
            except Exception as exc:
                raise UsageError(f"{where}: build() failed: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
        else:
            model = item["model"]
        model = make_target(model, where)
        args, kwargs = input_set(item["inputs"], f"{where} inputs")
        check = item.get("check_inputs")
        sets = None if check is None else list(check) if isinstance(check, (list, tuple)) else [check]
        return Loaded(model, tuple(args or ()), kwargs, sets, str(path.resolve()))

    return load


# -- shared -----------------------------------------------------------------------------------------------------
def _known_keys(item: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in item:
        if key not in allowed:
            raise UsageError(f"{where}: unknown key {key!r}; the keys are: {', '.join(allowed)}")


def _text(values: Mapping[str, Any], key: str, where: str) -> str | None:
    return None if values.get(key) is None else _required(values, key, where)


def _required(values: Mapping[str, Any], key: str, where: str) -> str:
    value = values.get(key)
    if not isinstance(value, str) or not value.strip():
        example = {"target": '"models/net.py:Net"', "inputs": '"torch.randn(4, 8)"'}.get(key, '"..."')
        raise UsageError(f"{where}: {key} must be a string ({key} = {example}), got {value!r}")
    return value


def _entry(values: Mapping[str, Any], where: str, target: str, default_name: str, load: Callable[[], Loaded]) -> Entry:
    from ..core.export.options import DRAFT_CHOICES, DynamicSpecError, parse_dynamic

    name = values.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{where}: name must be a non-empty string, got {name!r}")
    dynamic = values.get("dynamic", [])
    if isinstance(dynamic, str):
        dynamic = [dynamic]
    if not isinstance(dynamic, list) or not all(isinstance(d, str) for d in dynamic):
        raise UsageError(f'{where}: dynamic must be a list of --dynamic specs, e.g. ["x:0=batch[2,64]"]')
    try:
        parse_dynamic(dynamic)
    except DynamicSpecError as exc:
        raise UsageError(f"{where}: {exc}") from None
    for key in ("strict", "no_grad"):
        if not isinstance(values.get(key, False), bool):
            raise UsageError(f"{where}: {key} must be true or false, got {values[key]!r}")
    mode, draft, seed = values.get("mode", "as_is"), values.get("draft"), values.get("seed", 0)
    if mode not in MODES:
        raise UsageError(f"{where}: mode must be one of {', '.join(map(repr, MODES))}, got {mode!r}")
    if draft is not None and draft not in DRAFT_CHOICES:
        raise UsageError(f"{where}: draft must be one of {', '.join(map(repr, DRAFT_CHOICES))}, got {draft!r}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise UsageError(f"{where}: seed must be an integer, got {seed!r}")
    return Entry(
        name=name.strip(),
        where=where,
        target=target,
        load=load,
        dynamic=list(dynamic),
        strict=bool(values.get("strict", False)),
        mode=mode,
        no_grad=bool(values.get("no_grad", False)),
        draft=draft,
        seed=seed,
    )


__all__ = ["DEFAULT_LIST_NAME", "Entry", "Loaded", "read_lists"]
