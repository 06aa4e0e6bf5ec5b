"""``tracejit migrate LIST... [-o report.html] [--json report.json] [--baseline report.json]``: the command line of
a migration (see :mod:`jupyter_tracejit.migrate`). Exit 0, 1 when a model regressed against ``--baseline``, 2 on a
usage error (a list, an entry or an output that is wrong: nothing runs)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..cli_target import UsageError

DESCRIPTION = (
    "Export every model of the lists with torch.export, a trace of the same model beside each (--compare-trace), "
    "and report in one table: ok, refused at which line, the dims specialised, the export check's verdict, how "
    "many of the trace's ops the export matched, and the timings. -o writes the table as one offline HTML page, "
    "each model's name opening its explorer (pages written beside it, in REPORT_files/). A LIST is a .toml or "
    '.json file of [[models]] (target = "FILE.py:NAME", inputs = "EXPR", dynamic = [SPEC, ...], '
    "check_inputs, strict, mode, no_grad, draft, seed, name) or a .py file defining MIGRATE, a list of dicts "
    "(model or build, inputs, the same options; FILE.py:NAME for another variable). Exit status: 0, 1 when a model "
    "regressed against --baseline, 2 usage error."
)


def add_parser(sub: Any) -> None:
    """The ``migrate`` subcommand of ``tracejit``."""
    m = sub.add_parser(
        "migrate", help="export many models (a trace beside each) and report them in one table", description=DESCRIPTION
    )
    m.add_argument("lists", nargs="+", metavar="LIST", help="models.toml, models.json, models.py or models.py:NAME")
    m.add_argument("-o", "--output", type=Path, metavar="HTML", help="write the report as an offline HTML page here")
    m.add_argument("--json", type=Path, metavar="FILE", help="write the report's JSON here (a later --baseline)")
    m.add_argument(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="a report written earlier with --json: exit 1 when a model regressed against it (a worse status, a "
        "dim newly specialised, fewer of the trace's ops matched)",
    )
    m.add_argument(
        "--coverage-drop",
        type=float,
        default=1.0,
        metavar="POINTS",
        help="with --baseline: how many percentage points the trace ops matched may fall before it is a "
        "regression (default 1)",
    )
    m.add_argument("--only", action="append", default=[], metavar="NAME", help="run only this model (repeatable)")
    m.add_argument(
        "--draft",
        metavar="WHEN",
        help="tj.export's draft option for every model (a model's own draft otherwise): draft_export's report on a "
        "refusal costs time",
    )


def _pages_folder(output: Path) -> Path:
    return output.with_name(f"{output.stem}_files")


def page_names(names: list[str]) -> list[str]:
    """A file name per model: its name made safe for a file (``[A-Za-z0-9_.-]``), unique."""
    used: set[str] = set()
    found = []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "model"
        candidate, n = base, 1
        while candidate.lower() in used:
            n += 1
            candidate = f"{base}-{n}"
        used.add(candidate.lower())
        found.append(f"{candidate}.html")
    return found


def _read_baseline(path: Path) -> Any:
    from .report import MigrationReport

    if not path.is_file():
        raise UsageError(f"--baseline {path}: no such file (write one with tracejit migrate ... --json {path})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"--baseline {path} cannot be read as JSON: {exc}") from None
    try:
        return MigrationReport.read(data, f"--baseline {path}")
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _check_options(args: argparse.Namespace) -> None:
    from ..cli_output import check_outputs
    from ..core.export.options import DRAFT_CHOICES

    if args.draft is not None and args.draft not in DRAFT_CHOICES:
        raise UsageError(f"--draft must be one of {', '.join(DRAFT_CHOICES)}, not {args.draft!r}")
    if not args.coverage_drop >= 0:
        raise UsageError(f"--coverage-drop is a number of percentage points >= 0, not {args.coverage_drop}")
    outputs = [(flag, path) for flag, path in (("-o", args.output), ("--json", args.json)) if path is not None]
    for _, out in outputs:
        if not out.parent.is_dir():
            raise UsageError(f"cannot write {out}: no such directory {out.parent}")
    if args.output is not None and args.output.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"-o {args.output}: the report is an HTML page; name it REPORT.html")
    sources = [spec.rsplit(":", 1)[0] if spec.rsplit(":", 1)[0].endswith(".py") else spec for spec in args.lists]
    # (--json may name the --baseline it replaces: compare, then keep the new report as the next baseline)
    check_outputs(outputs, sources)


def main(args: argparse.Namespace) -> int:
    from ..cli_output import Stdout
    from ..core.files import write_files
    from ..render.migration import format_table, render_migration_html
    from .listing import read_lists
    from .report import compare
    from .runner import run_all

    _check_options(args)
    baseline = _read_baseline(args.baseline) if args.baseline is not None else None
    entries = read_lists(args.lists)
    if args.only:
        missing = sorted(set(args.only) - {e.name for e in entries})
        if missing:
            known = ", ".join(e.name for e in entries)
            raise UsageError(f"--only {missing[0]}: no model of that name in the lists (they are: {known})")
        entries = [e for e in entries if e.name in args.only]
    say = Stdout()
    progress = sys.stderr.isatty()

    def on_result(i: int, outcome: Any) -> None:
        if progress:
            m = outcome.result
            print(f"[{i + 1}/{len(entries)}] {m.name}: {m.status_words} ({m.timings.get('total', 0):.1f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip

    report, pages = run_all(entries, pages=args.output is not None, draft=args.draft, on_result=on_result)
    contents: dict[Path, str] = {}
    if args.output is not None:
        folder = _pages_folder(args.output)
        for result, page, file_name in zip(report.models, pages, page_names([m.name for m in report.models]),
                                           strict=True):  # fmt: skip
            if page is not None:
                contents[folder / file_name] = page
                result.page = f"{folder.name}/{file_name}"
    changes = compare(report, baseline, args.coverage_drop / 100) if baseline is not None else []
    say(format_table(report, changes, str(args.baseline or "")))
    if args.output is not None:
        contents[args.output] = render_migration_html(report, changes, str(args.baseline or ""))
        _pages_folder(args.output).mkdir(exist_ok=True)
    if args.json is not None:
        contents[args.json] = json.dumps(report.to_json(), allow_nan=False, indent=1)
    write_files(contents)
    if args.output is not None:
        say(f"wrote {args.output} (and {len(pages)} explorer pages in {_pages_folder(args.output)}/)")
    if args.json is not None:
        say(f"wrote {args.json}")
    return 1 if any(c.kind == "regressed" for c in changes) else 0


__all__ = ["add_parser", "main", "page_names"]
