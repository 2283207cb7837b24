"""`python -m metriclint.docs [--root ROOT] [--check]`: write the docs site's generated pages
(the home page from README.md, the rules, the facet vocabulary, the code knowledge) under ROOT,
the folder holding mkdocs.yml;
`--check` writes nothing and exits 1 when a page is stale, naming it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from metriclint.checks import RULES
from metriclint.docs import pages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m metriclint.docs", description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the folder holding mkdocs.yml (default: the current one)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    arguments = parser.parse_args(argv)
    root: Path = arguments.root
    missing = [name for name in ("mkdocs.yml", "README.md") if not (root / name).is_file()]
    if missing:
        print(f"python -m metriclint.docs: no {missing[0]} in {root}; run it from the repository root or pass --root", file=sys.stderr)
        return 2
    generated = pages.generated(root, RULES)
    if arguments.check:
        stale = pages.stale(root, generated)
        for path in stale:
            print(f"{path} is stale; run `python -m metriclint.docs`", file=sys.stderr)
        return 1 if stale else 0
    for path in pages.write(root, generated):
        print(f"wrote {path}" if path in generated else f"removed {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
