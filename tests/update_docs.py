"""Rewrite a docs page's console blocks with what their commands print now.

    python tests/update_docs.py docs/commands/describe.md [more pages…]

Runs the page's session exactly as tests/quality/test_docs.py does and, for each command whose
output no longer matches, replaces the shown lines with the printed ones (standard error
first, then standard output; the session's folders shown as /tmp/…). Commands that still
match keep their lines as written. Read the diff before committing it: a changed output
is either a stale page or a regression.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from quality.test_docs import DOCS, FENCE, Session, parse_page  # noqa: E402


def update(path: Path) -> int:
    page = parse_page(path)
    text = path.read_text(encoding="utf-8")
    changed = 0
    with tempfile.TemporaryDirectory() as folder:
        session = Session(page, Path(folder) / "s")
        if session.failed or session.skipped:
            raise SystemExit(f"{path}: {session.failed or session.skipped}")
        pieces, last = [], 0
        for fence, block in zip(FENCE.finditer(text), page.blocks, strict=True):
            pieces.append(text[last: fence.start("body")])
            last = fence.end("body")
            if block.not_run:
                pieces.append(fence.group("body"))
                continue
            for command in block.before:
                session.run(command)
            indent = fence.group("indent")
            lines: list[str] = []
            for command, shown in block.commands:
                lines.append(f"$ {command}")
                if session.check(command, shown, ordered=not block.unordered) is None:
                    lines.extend(shown)
                    continue
                changed += 1
                done = session.last
                # a printed line that matches a shown one (times and ages aside) keeps the shown text
                kept: dict[str, list[str]] = {}
                for line in shown:
                    kept.setdefault(session.normal(line), []).append(line)
                for line in done.stderr.splitlines() + done.stdout.splitlines():
                    same = kept.get(session.normal(line))
                    lines.append(same.pop(0) if same else session.shown(line))
            pieces.append("".join(f"{indent}{line}\n" if line else "\n" for line in lines))
        pieces.append(text[last:])
    path.write_text("".join(pieces), encoding="utf-8")
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        target = Path(name).resolve()
        print(f"{target.relative_to(DOCS.parent)}: {update(target)} commands rewritten")
