"""Generate ``docs/rules/<CODE>.md`` (and an index) from the rule docstrings.

    python -m amplint.docgen          # write
    python -m amplint.docgen --check  # exit 1 if the files differ from the docstrings
"""

from __future__ import annotations

import sys
from pathlib import Path

from .evidence import evidence_line
from .rules import all_rules

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules"


def render_rule(rule) -> str:
    default = "enabled by default" if rule.default_enabled else "off by default; enable it with `--select " + rule.code + "`"
    fix = {"none": "No fix is available.", "sometimes": "A fix is sometimes available.",
           "always": "A fix is always available."}[rule.fix_availability]
    parts = [f"# {rule.name} ({rule.code})", "", f"This rule is {default}. {fix}", "", rule.doc().rstrip(), ""]
    line = evidence_line(rule.code)
    if line:
        parts += ["## Measured evidence", line, ""]
    return "\n".join(parts)


def render_index(rules) -> str:
    lines = ["# amplint rules", "", "| Code | Name | Default | Fix | Summary |", "|---|---|---|---|---|"]
    for r in rules:
        lines.append(
            f"| [{r.code}]({r.code}.md) | `{r.name}` | {'on' if r.default_enabled else 'off'} | {r.fix_availability} | {r.summary()} |"
        )
    return "\n".join(lines) + "\n"


def expected_files() -> dict[Path, str]:
    rules = all_rules()
    files = {DOCS / f"{r.code}.md": render_rule(r) for r in rules}
    files[DOCS / "README.md"] = render_index(rules)
    return files


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    files = expected_files()
    if "--check" in argv:
        stale = [p for p, text in files.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
        extra = [p for p in DOCS.glob("*.md") if p not in files]
        for p in stale + extra:
            print(f"out of date: {p}")
        return 1 if stale or extra else 0
    DOCS.mkdir(parents=True, exist_ok=True)
    for p in DOCS.glob("*.md"):
        if p not in files:
            p.unlink()
    for p, text in files.items():
        p.write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files to {DOCS}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
