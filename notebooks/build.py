"""Write the tutorial notebooks from their readable sources and execute them, saving the outputs.

Each ``notebooks/src/NN-name.py`` is a notebook in the "percent" format:

- ``# %% [markdown]`` starts a markdown cell; its lines are written as comments (``# text``);
- ``# %%`` starts a code cell (IPython magics such as ``%trace`` are allowed: the file is never imported);
- ``# %% [solution]`` starts a code cell holding an exercise's solution, saved collapsed (JupyterLab shows a
  "..." bar; GitHub shows it as an ordinary cell).

Usage (from the repository root, in the project's environment)::

    python notebooks/build.py                 # rebuild and execute every notebook, write notebooks/NN-name.ipynb
    python notebooks/build.py 03 06           # only the notebooks whose names start with these prefixes
    python notebooks/build.py --check         # execute every source, fail if a cell errors or a saved notebook
                                              # is stale (other sources, or other outputs once volatile bits
                                              # such as timings, addresses and widget ids are set aside)

Notebooks run with ``HF_HUB_OFFLINE=1`` (nothing is ever downloaded) in a scratch directory, so files they write
(``save_html``) do not land in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from jupyter_tracejit.widgets import RUN_MIME, run_from_mime

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
CELL_TIMEOUT_S = 300
KERNEL_METADATA = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}

_MARKER = re.compile(r"^# %%(?: \[(markdown|solution)\])?\s*$")


def sources() -> list[Path]:
    return sorted(SOURCES.glob("[0-9][0-9]-*.py"))


def saved_path(source: Path) -> Path:
    return HERE / f"{source.stem}.ipynb"


def _markdown(lines: list[str]) -> str:
    text = []
    for line in lines:
        if line.rstrip() in ("#", ""):
            text.append("")
        elif line.startswith("# "):
            text.append(line[2:])
        else:
            raise ValueError(f"a markdown line must start with '# ': {line!r}")
    return "\n".join(text).strip("\n")


def read_source(source: Path) -> nbformat.NotebookNode:
    """The notebook a source describes, without outputs."""
    cells = []
    kind: str | None = None
    lines: list[str] = []

    def flush() -> None:
        if kind is None:
            if any(line.strip() for line in lines):
                raise ValueError(f"{source.name}: text before the first '# %%' marker")
            return
        if kind == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(_markdown(lines)))
            return
        cell = nbformat.v4.new_code_cell("\n".join(lines).strip("\n"))
        if kind == "solution":
            cell.metadata["jupyter"] = {"source_hidden": True}
            cell.metadata["tags"] = ["solution"]
        cells.append(cell)

    for line in source.read_text(encoding="utf-8").splitlines():
        marker = _MARKER.match(line)
        if marker:
            flush()
            kind, lines = marker.group(1) or "code", []
        else:
            lines.append(line)
    flush()
    nb = nbformat.v4.new_notebook(cells=cells, metadata=json.loads(json.dumps(KERNEL_METADATA)))
    # stable cell ids, so a rebuild with the same sources writes the same file
    for i, cell in enumerate(nb.cells):
        cell.id = f"{source.stem[:2]}-{i:02d}"
    return nb


def execute(nb: nbformat.NotebookNode, workdir: Path) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel started in ``workdir``; the first error stops it (and raises)."""
    os.environ["HF_HUB_OFFLINE"] = "1"  # the kernel inherits it: transformers never reaches for the hub
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
        # the explorer is saved as its run (RUN_MIME + text/html); the widget state would only double the file
        store_widget_state=False,
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


# -- structural comparison --------------------------------------------------------------------------------

_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    # torch's own warnings name its files under the environment's site-packages, wherever that is (first: the
    # environment may itself live under /tmp, as a CI checkout's does)
    (re.compile(r"[^\s'\"]*/site-packages/"), "…/site-packages/"),
    (re.compile(r"/tmp/[^\s'\"]*"), "/tmp/…"),
    (re.compile(r"\b\d+(\.\d+)?\s?(s|ms|µs)\b"), "… s"),
    (re.compile(r"___torch_mangle_\d+"), "___torch_mangle_…"),
    # long decimals (differences, random values) may differ in the last digits on another CPU's vector units
    (re.compile(r"\d+\.\d{5,}(e[-+]?\d+)?"), "…"),
]


def _normalized(text: Any) -> str:
    if isinstance(text, list):
        text = "".join(text)
    text = str(text)
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def _run_digest(run: dict[str, Any]) -> dict[str, Any]:
    """What a saved explorer says, without its timings, ids and paths."""
    return {
        "summary": _normalized(run.get("summary", "")),
        "verdict": [
            run.get("verdict", {}).get("label"),
            [_normalized(r) for r in run.get("verdict", {}).get("reasons", [])],
        ],
        "graphs": {name: len(g.get("nodes", [])) for name, g in run.get("graphs", {}).items()},
        "warnings": sorted((w.get("category"), w.get("line"), w.get("count")) for w in run.get("warnings", [])),
    }


def _output_digest(output: dict[str, Any]) -> Any:
    kind = output.get("output_type")
    if kind == "stream":
        return [kind, output.get("name"), _normalized(output.get("text", ""))]
    if kind == "error":
        return [kind, output.get("ename"), _normalized(output.get("evalue", ""))]
    data = output.get("data", {})
    digest: dict[str, Any] = {"mime": sorted(data)}
    if RUN_MIME in data:
        digest["run"] = _run_digest(run_from_mime(data[RUN_MIME]))
    elif WIDGET_VIEW not in data:
        for key in ("text/plain", "text/markdown"):
            if key in data:
                digest[key] = _normalized(data[key])
    return [kind, digest]


def _outputs_digest(outputs: list[dict[str, Any]]) -> list[Any]:
    """A cell's outputs: rich outputs in order, then everything written to each stream joined. The kernel splits
    prints into chunks as it likes, and stdout and stderr interleave differently from run to run."""
    streams: dict[str, str] = {}
    rich = []
    for output in outputs:
        if output.get("output_type") == "stream":
            text = output.get("text", "")
            streams[output.get("name", "")] = streams.get(output.get("name", ""), "") + "".join(text)
        else:
            rich.append(_output_digest(output))
    return rich + [["stream", name, _normalized(text)] for name, text in sorted(streams.items())]


def digest(nb: nbformat.NotebookNode) -> list[Any]:
    """A notebook's content with volatile bits set aside: cell kinds, sources and what each output says."""
    cells = []
    for cell in nb.cells:
        entry: list[Any] = [cell.cell_type, cell.source]
        if cell.cell_type == "code":
            entry.append(_outputs_digest(cell.get("outputs", [])))
        cells.append(entry)
    return cells


def differences(saved: nbformat.NotebookNode, fresh: nbformat.NotebookNode) -> list[str]:
    """Where a saved notebook disagrees with a fresh execution of its source, one line each."""
    a, b = digest(saved), digest(fresh)
    problems = []
    if len(a) != len(b):
        problems.append(f"{len(a)} cells saved, {len(b)} in the source")
    for i, (old, new) in enumerate(zip(a, b, strict=False)):
        if old[:2] != new[:2]:
            problems.append(f"cell {i}: its source changed")
        elif old != new:
            problems.append(
                f"cell {i}: its outputs changed: saved {json.dumps(old[2])[:300]} / now {json.dumps(new[2])[:300]}"
            )
    return problems


def errors(nb: nbformat.NotebookNode) -> list[str]:
    return [
        f"cell {i}: {o.get('ename')}: {o.get('evalue')}"
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]


def build(source: Path, workdir: Path) -> nbformat.NotebookNode:
    """Execute a source's notebook; raises nbclient's CellExecutionError when a cell fails."""
    return execute(read_source(source), workdir)


def check(source: Path, workdir: Path) -> list[str]:
    """Problems of the saved notebook of ``source``: missing, failing to execute, or stale."""
    path = saved_path(source)
    if not path.exists():
        return [f"{path.name} is missing: run python notebooks/build.py {source.stem[:2]}"]
    saved = nbformat.read(path, as_version=4)
    quick = [p for p in differences(saved, read_source(source)) if "source changed" in p or "cells saved" in p]
    if quick:
        return [f"{path.name} is stale (rebuild it): {p}" for p in quick]
    try:
        fresh = build(source, workdir)
    except Exception as e:  # a failing cell: nbclient's error names the cell and the traceback
        return [f"{path.name} does not execute: {e}"]
    return [f"{path.name} is stale (rebuild it): {p}" for p in differences(saved, fresh)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("prefixes", nargs="*", help="only the notebooks whose names start with these")
    parser.add_argument("--check", action="store_true", help="execute and compare with the saved notebooks")
    args = parser.parse_args(argv)
    chosen = [s for s in sources() if not args.prefixes or s.name.startswith(tuple(args.prefixes))]
    if not chosen:
        parser.error(f"no source in {SOURCES} matches {args.prefixes}")
    failed = False
    for source in chosen:
        with tempfile.TemporaryDirectory(prefix="tutorial-") as scratch:
            if args.check:
                problems = check(source, Path(scratch))
                for problem in problems:
                    print(problem, file=sys.stderr)
                failed |= bool(problems)
                print(f"{source.stem}: {'FAILED' if problems else 'ok'}")
            else:
                nb = build(source, Path(scratch))
                nbformat.write(nb, saved_path(source))
                print(f"wrote {saved_path(source).relative_to(HERE.parent)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
