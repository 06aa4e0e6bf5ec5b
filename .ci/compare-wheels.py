"""Assert that two wheels hold the same files with the same bytes (the order and timestamps in the zip aside).

    python .ci/compare-wheels.py dist/jupyter_tracejit-X.whl dist/from-sdist/jupyter_tracejit-X.whl

.ci/run builds one wheel from the checkout and one from the sdist with no node on PATH: the sdist must carry every
built front end (the JupyterLab extension, the anywidget module, the report's bundle), or the second wheel lacks
files or the build fails.
"""

from __future__ import annotations

import sys
import zipfile


def contents(path: str) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as wheel:
        return {name: wheel.read(name) for name in wheel.namelist() if not name.endswith("/")}


def main(first: str, second: str) -> int:
    a, b = contents(first), contents(second)
    only_a, only_b = sorted(a.keys() - b.keys()), sorted(b.keys() - a.keys())
    differ = sorted(name for name in a.keys() & b.keys() if a[name] != b[name])
    for label, names in ((f"only in {first}", only_a), (f"only in {second}", only_b), ("different bytes", differ)):
        for name in names:
            print(f"{label}: {name}")
    if only_a or only_b or differ:
        print(f"the wheels differ ({len(only_a)} + {len(only_b)} files in one only, {len(differ)} changed)")
        return 1
    print(f"the wheels are identical: {len(a)} files, {sum(map(len, a.values()))} bytes")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python .ci/compare-wheels.py WHEEL WHEEL")
    sys.exit(main(sys.argv[1], sys.argv[2]))
