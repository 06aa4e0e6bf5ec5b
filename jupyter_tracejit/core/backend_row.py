"""A back end's row in the registry (:mod:`.registry`): the :class:`Backend` each back end's ``backend.py`` declares,
and the :class:`SavedFile` kinds it reads back. Torch-free: modules and attributes are named by text, imported on
first use."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from .command import CommandWords


def attribute(spec: str, package: str = "jupyter_tracejit.core") -> Any:
    """``module:attribute`` (the module relative to ``package``), imported."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module, package), name)


@dataclass(frozen=True)
class SavedFile:
    """A kind of file a back end reads back without running anything (``tj.load``)."""

    #: what :func:`~.archive.layout.inspect_file` calls the file's layout (``torchscript``, ``export``)
    layout: str
    #: the explorer's header label of a run read from such a file (``saved TorchScript``)
    label: str
    #: the file, in words (``a TorchScript archive``)
    what: str
    #: what the run holds, in words (``archive``)
    noun: str
    #: the file browser's file type: its name, display name and extensions
    file_type: str
    file_type_label: str
    extensions: tuple[str, ...]
    #: ``module:function`` (relative to ``core``) that reads one: ``(path, layout, *, map_location) -> TraceRun``
    loader: str


@dataclass(frozen=True)
class Backend:
    """One capture back end, declared once (its package's ``backend.py``)."""

    #: ``run.backend``
    name: str
    #: its package under ``core/``
    package: str
    #: the explorer's header label (``torch.jit.trace``)
    label: str
    #: the torch call that captures (``torch.jit.trace``; the header's "captured by ...")
    captured_by: str
    #: what a run holds, as a noun (``trace``), the verb, its past participle and the failure's words
    noun: str
    verb: str
    past: str
    failure: str
    #: the check's name in words (``torch's check``)
    check_name: str
    #: the functions it adds to the package's API (``tj.trace``), each ``module:function`` (relative to ``core``)
    api: tuple[str, ...]
    #: ``module:attribute`` (relative to ``core``) of its :class:`~.options.OptionTable`
    options: str
    #: the option setting that turned a run's check off, as the user wrote it (``check_trace=False``); "" where
    #: the check's name says it (``the export check was off``)
    check_off: str = ""
    #: the attribute its records have on a run (``run.export``) and their torch-free ``module:Class``; "" for none
    records: str = ""
    records_type: str = ""
    #: its definitions in the run schema (its ``schema.json``) of its records and of its recorded options
    records_schema: str = ""
    options_schema: str = ""
    #: the explorer tabs it adds (beyond the ones every run has)
    tabs: tuple[str, ...] = ()
    #: the saved files it reads back
    files: tuple[SavedFile, ...] = ()
    #: its ``tracejit`` subcommand and its magic (both named :attr:`verb`): their words and how a call is captured
    command: CommandWords | None = None
    #: what its runs can do later, ``(name, module:function)`` (relative to ``core``): ``run.draft()`` for an export,
    #: and the explorer's dims editor (``dims``: its state for a run; ``with_dims``: the options of a re-capture)
    actions: tuple[tuple[str, str], ...] = ()

    def has_action(self, name: str) -> bool:
        """Whether its runs can do ``run.<name>()`` (without importing the back end)."""
        return name in dict(self.actions)

    def action(self, name: str) -> Any:
        """The function behind ``run.<name>()`` for its runs (imports the back end), or None when it has none."""
        spec = dict(self.actions).get(name)
        return attribute(spec) if spec else None

    def table(self) -> Any:
        """Its options table (imports the back end, and torch)."""
        return attribute(self.options)

    def records_class(self) -> Any:
        """The class of its records (torch-free), or None."""
        return attribute(self.records_type) if self.records_type else None

    def to_json(self) -> dict[str, Any]:
        """Its row in the run schema's ``x-backends`` table: what the front end needs (words, tabs, the options bar's
        options, files). Imports the back end's options table (and torch): the registry's writer runs with both."""
        return {
            "label": self.label,
            "captured_by": self.captured_by,
            "noun": self.noun,
            "verb": self.verb,
            "past": self.past,
            "failure": self.failure,
            "doing": self.command.doing if self.command is not None else "",
            "check_name": self.check_name,
            "check_off": self.check_off,
            "records": self.records,
            "tabs": list(self.tabs),
            "options": self.table().bar_rows(),
            "files": [
                {
                    "layout": f.layout,
                    "label": f.label,
                    "what": f.what,
                    "noun": f.noun,
                    "file_type": f.file_type,
                    "file_type_label": f.file_type_label,
                    "extensions": list(f.extensions),
                }
                for f in self.files
            ],
        }


__all__ = ["Backend", "SavedFile", "attribute"]
