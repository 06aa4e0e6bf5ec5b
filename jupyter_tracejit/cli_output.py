"""What every ``tracejit`` subcommand does with its output: print the report to a reader that may go away, and
refuse output paths that would overwrite what the run read or each other."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .cli_target import UsageError
from .core.files import same_file, source_overwritten


class Stdout:
    """Prints the report until its reader goes away (``tracejit ... | head -1``): the rest is then dropped quietly,
    as other shell tools do, and the run still writes its files."""

    def __init__(self) -> None:
        self.gone = False

    def __call__(self, text: str) -> None:
        if self.gone:
            return
        try:
            print(text, flush=True)  # flushed: a closed pipe is noticed here, not at exit
        except BrokenPipeError:
            self.gone = True
            try:  # what is still buffered (and Python's flush at exit) goes nowhere instead of raising again
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass


def check_outputs(outputs: list[tuple[str, Path]], inputs: list[str]) -> None:
    """Refuse an output path that would overwrite a file the run read (the traced file, a source file of its
    stacks) or another output of this command: compared as resolved paths."""
    for i, (option, path) in enumerate(outputs):
        for other_option, other in outputs[:i]:
            if same_file(path, other):
                raise UsageError(f"{other_option} and {option} both name {path}: give each output its own file")
        source = source_overwritten(path, inputs)
        if source is not None:
            instead = path.with_suffix(_SUFFIXES[option])
            raise UsageError(
                f"{option} {path} would overwrite {source}, a source file of this run: write the output to "
                f"another file" + (f", e.g. {option} {instead}" if instead != path else "")
            )


#: the usual suffix of each output, for the suggestion when an output names a source file
_SUFFIXES = {"-o": ".html", "--json": ".json", "--dot": ".dot"}


__all__ = ["Stdout", "check_outputs"]
