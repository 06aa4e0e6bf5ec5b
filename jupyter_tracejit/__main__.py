"""``python -m jupyter_tracejit demo``: trace the bundled example and print what was found."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jupyter_tracejit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="trace a bundled example model and print the report")
    demo.add_argument("--json", type=Path, help="also write the run's JSON here")
    demo.add_argument("--dot", type=Path, help="also write the graph's DOT source here")
    demo.add_argument("--no-probe", action="store_true", help="skip the generalization probe")
    args = parser.parse_args(argv)

    from .core.text_report import format_run
    from .demo import demo_run

    run = demo_run(probe=not args.no_probe)
    print(format_run(run))
    if args.json:
        args.json.write_text(json.dumps(run.to_json(), allow_nan=False))
        print(f"wrote {args.json}")
    if args.dot:
        args.dot.write_text(run.to_dot())
        print(f"wrote {args.dot}")
    return 0 if run.ok else 1


if __name__ == "__main__":
    sys.exit(main())
