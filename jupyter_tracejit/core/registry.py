"""The back-end registry: the one place a capture back end declares itself, as Model Explorer's adapters do.

A back end is a package of ``core/`` (``torchscript/``, ``export/``) whose ``backend.py`` holds one
:class:`Backend` row: its name (``run.backend``), the words the reports and the explorer use for it, its public
functions, its options table, the type of its records, the saved files it reads back, and the explorer tabs it
adds. Everything else asks this module: the run (words, records), the package's API (``tj.<function>``), the CLI
subcommands and magics, the widget's options bar, and the run schema's ``x-backends`` table, which the front end
reads as generated constants (``python -m jupyter_tracejit.core.registry`` writes it; ``--check`` fails when it is
stale). Adding a back end is adding its package and its name to :data:`PACKAGES`.

Torch-free: rows name modules and attributes by text, imported on first use, so a saved run opens without torch.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .backend_row import Backend, SavedFile, attribute

#: the back ends' packages under ``core/``, in the order they are listed (help, the explorer's words)
PACKAGES = ("torchscript", "export", "compile")
#: where a run came from: a capture made in this process, or a saved file read back (``tj.load``)
SOURCES = ("capture", "file")


@functools.cache
def backends() -> tuple[Backend, ...]:
    """Every declared back end, in :data:`PACKAGES` order."""
    return tuple(importlib.import_module(f".{p}.backend", __package__).BACKEND for p in PACKAGES)


def names() -> tuple[str, ...]:
    """``run.backend`` values, in order."""
    return tuple(b.name for b in backends())


def backend(name: str) -> Backend:
    """The back end named ``name``; ``ValueError`` naming the known ones for another."""
    for b in backends():
        if b.name == name:
            return b
    raise ValueError(f"unknown capture back end {name!r}; known: {', '.join(names())}")


def by_records(attribute: str) -> Backend | None:
    """The back end whose records a run shows as ``run.<attribute>`` (``export``), or None."""
    return next((b for b in backends() if b.records and b.records == attribute), None)


def saved_file(layout: str) -> tuple[Backend, SavedFile] | None:
    """The back end that reads files of ``layout`` (``torchscript``, ``export``), with the file's row."""
    for b in backends():
        for f in b.files:
            if f.layout == layout:
                return b, f
    return None


def loader(layout: str) -> Callable[..., Any] | None:
    """The function that reads a file of ``layout`` into a run (imports its back end and torch)."""
    found = saved_file(layout)
    return None if found is None else attribute(found[1].loader)


def api_functions() -> dict[str, tuple[str, str]]:
    """``tj.<name>`` -> (module relative to ``jupyter_tracejit.core``, attribute) for every back end's API."""
    return {name: (module, name) for b in backends() for module, _, name in (spec.partition(":") for spec in b.api)}


def api(name: str) -> Callable[..., Any]:
    """The public function ``tj.<name>`` of whichever back end declares it (imports that back end): how one back
    end uses another's capture without importing it (an export's ``compare_trace`` traces the same model)."""
    found = api_functions().get(name)
    if found is None:
        raise ValueError(f"no back end declares the function {name!r}; declared: {', '.join(api_functions())}")
    module, attribute_name = found
    return attribute(f"{module}:{attribute_name}")


def commands() -> tuple[Backend, ...]:
    """The back ends with a ``tracejit`` subcommand and a magic (named by their verb), in order."""
    return tuple(b for b in backends() if b.command is not None)


def capture_function(b: Backend) -> Callable[..., Any]:
    """The back end's ``capture(call) -> Capture`` (:mod:`.command`; imports the back end and torch)."""
    if b.command is None:
        raise ValueError(f"the back end {b.name!r} declares no command")
    return attribute(b.command.capture)


# -- the run schema ------------------------------------------------------------------------------------------------

SCHEMA_PATH = Path(__file__).with_name("run.schema.json")
#: a definition block of the schema's hand-laid-out text: ``    "Name": {`` ... ``    },`` (4 spaces in)
_DEFINITION = re.compile(r'^    "(?P<name>\w+)": (?:\{\n(?:(?:      .*|    )\n)*?    \}|\{ .*\}),?\n', re.M)
#: the ``backend`` property's line, and the lines of the properties its rows decide
_PROPERTY_LINE = r'^    "{name}": \{{.*\}},?\n'


def schema_table() -> dict[str, Any]:
    """``x-backends``: name -> row, as the schema carries it (what the front end reads)."""
    return {b.name: b.to_json() for b in backends()}


def _fragment(b: Backend) -> str:
    """The back end's ``schema.json`` (its records' and options' definitions), as text."""
    return (Path(__file__).parent / b.package / "schema.json").read_text(encoding="utf-8")


def _definitions_of(text: str) -> list[tuple[str, str]]:
    """``(name, block text without its trailing comma)`` of each definition of a schema's text."""
    return [(m.group("name"), m.group(0).rstrip().rstrip(",")) for m in _DEFINITION.finditer(text)]


def _owned(block: str) -> bool:
    return '"x-backend": ' in block


def _property(name: str, description: str, schema: dict[str, Any]) -> str:
    return f'    "{name}": ' + json.dumps({"description": description, **schema}, ensure_ascii=False)[:-1] + " },\n"


def write_schema(text: str) -> str:
    """``run.schema.json``'s text with what the rows decide written from them: the ``backend`` enum and its
    ``x-backends`` table, the ``records`` and ``options`` alternatives, and each back end's definitions (from its
    ``schema.json``, marked ``x-backend``); the rest of the hand-laid-out file as it is."""
    rows = backends()
    definitions_at = text.index('  "definitions": {\n')
    head, body = text[:definitions_at], text[definitions_at:]
    kept = [block for _, block in _definitions_of(body) if not _owned(block)]
    owned: list[str] = []
    records: list[dict[str, Any]] = []
    options: list[dict[str, Any]] = []
    for b in rows:
        for name, block in _definitions_of(_fragment(b)):
            first, _, rest = block.partition("\n")
            owned.append(f'{first}\n      "x-backend": {json.dumps(b.name)},\n{rest}' if rest else block)
            if name == b.records_schema:
                records.append({"$ref": f"#/definitions/{name}"})
            if name == b.options_schema:
                options.append({"$ref": f"#/definitions/{name}"})
    body = '  "definitions": {\n' + ",\n".join(kept + owned) + "\n  }\n}\n"
    properties: dict[str, tuple[str, dict[str, Any]]] = {
        "backend": (
            "the back end that captured the run (core/registry.py; each row's words in x-backends)",
            {"enum": list(names()), "x-backends": schema_table()},
        ),
        "records": (
            "what the run's back end recorded beyond its graph, of the type its registry row names (an export's "
            "ExportReport); null when it records nothing more",
            {"oneOf": [*records, {"type": "null"}]},
        ),
        "options": (
            "the options the run was made with, as its back end records them, or what a saved file was read with "
            "(RecordedArchiveOptions)",
            {"oneOf": [*options, {"$ref": "#/definitions/RecordedArchiveOptions"}]},
        ),
    }
    for name, (description, schema) in properties.items():
        found = re.search(_PROPERTY_LINE.format(name=name), head, flags=re.M)
        if found is None:
            raise ValueError(f"run.schema.json: no one-line {name!r} property to write")
        head = head[: found.start()] + _property(name, description, schema) + head[found.end() :]
    return head + body


def write_generated(text: str) -> str:
    """``run.schema.json``'s text with every part written from a table: the warning categories
    (:mod:`.categories`) and the back ends (their rows and definitions)."""
    from .categories import write_schema as write_categories

    return write_schema(write_categories(text))


def main(argv: list[str]) -> int:
    """``python -m jupyter_tracejit.core.registry [--check]``: write the run schema's generated parts, or (``--check``)
    fail when they are stale."""
    text = SCHEMA_PATH.read_text(encoding="utf-8")
    written = write_generated(text)
    if "--check" in argv:
        if written != text:
            print(f"{SCHEMA_PATH.name} is stale: run python -m jupyter_tracejit.core.registry", file=sys.stderr)
            return 1
        return 0
    SCHEMA_PATH.write_text(written, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
