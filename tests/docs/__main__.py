"""``python -m tests.docs [--check]``: rewrite the generated sections of the docs from the code.

``--check`` rewrites nothing: it lists the stale files and exits 1 if there are any.
"""

import sys

from tests.docs.sections import ROOT, doc_files, rewritten, stale_files


def main(arguments: list[str]) -> int:
    """Rewrite (or, with ``--check``, only list) the doc files whose generated sections are stale."""
    stale = stale_files()
    for path in stale:
        if "--check" not in arguments:
            path.write_text(rewritten(path.read_text()))
        print(f"{'stale' if '--check' in arguments else 'rewrote'}: {path.relative_to(ROOT)}")
    if not stale:
        print(f"up to date: {len(doc_files())} files")
    return 1 if stale and "--check" in arguments else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
