"""Mutations and checks shared by the fuzz tests and the long fuzz run (bench/fuzz.py)."""

from __future__ import annotations

import random
from collections import Counter

from amplint.config import CliOverrides, build_settings
from amplint.engine import Linter, decode
from amplint.fixer import apply_edits
from amplint.rules import all_rules

_LINTER: Linter | None = None


def linter() -> Linter:
    global _LINTER
    if _LINTER is None:
        _LINTER = Linter(build_settings([], CliOverrides(isolated=True, select=["ALL"]), all_rules()))
    return _LINTER


def lint(text: str, name: str = "fuzz.py"):
    """Lint a source text; raises if amplint raised or reported an internal error."""
    result = linter().check_bytes(text.encode("utf-8", "surrogatepass"), name, explicit=True, force=True)
    assert not result.errors, result.errors
    return result


LINE_MUTATIONS = ("delete", "swap", "indent", "dedent", "duplicate", "delete_block")


def mutate(text: str, rng: random.Random, kinds: tuple[str, ...] = LINE_MUTATIONS) -> str:
    """One line-level change of ``text``, of a kind drawn from ``kinds`` (``wrap_if`` puts a
    line under ``if flag:``)."""
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    kind = rng.choice(list(kinds))
    i = rng.randrange(len(lines))
    if kind == "delete":
        del lines[i]
    elif kind == "swap" and len(lines) > 1:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "indent":
        lines[i] = "    " + lines[i]
    elif kind == "dedent" and lines[i].startswith("    "):
        lines[i] = lines[i][4:]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    elif kind == "delete_block":
        del lines[i : i + rng.randint(2, 6)]
    elif kind == "wrap_if":
        body = lines[i]
        pad = body[: len(body) - len(body.lstrip())]
        lines[i] = f"{pad}if flag:\n    {body}"
    return "".join(lines)


def check_fixes(text: str, name: str = "fuzz.py") -> int:
    """Each fix alone: the result parses, its finding is gone, the other findings are unchanged,
    and fixing the whole file twice is a no-op the second time. Returns the fixes checked."""
    from amplint.fixer import fix_source

    first = lint(text, name)
    if any(d.code == "AMP000" for d in first.diagnostics):
        return 0
    checked = 0
    for d in first.diagnostics:
        if d.fix is None:
            continue
        fixed = apply_edits(text, list(d.fix.edits))
        after = lint(fixed, name)
        assert not any(x.code == "AMP000" for x in after.diagnostics), (d, fixed)
        # findings at the fixed one's location, or whose related location it is (their cause),
        # may go with it
        caused = [x for x in first.diagnostics if x is not d and (x.location == d.location or any(
            r.location == d.location for r in x.related) or any(r.location == x.location for r in d.related))]
        before = Counter((x.code, x.message) for x in first.diagnostics if x not in caused)
        before[(d.code, d.message)] -= 1
        # a finding at the fixed location may quote the code the fix rewrote
        # (``loss.backward()`` -> ``scaler.scale(loss).backward()`` in AMP105's message)
        here = {x.code for x in caused if x.location == d.location}
        now = Counter((x.code, x.message) for x in after.diagnostics
                      if not (x.location == d.location and x.code in here))
        # every other finding stays; the caused ones may stay or go
        allowed = before + Counter((x.code, x.message) for x in caused)
        assert not (+before - now) and not (now - allowed), (d.code, d.message, before, now)
        checked += 1
    src = decode(text.encode())
    once, _r, _n = fix_source(linter(), src, name, first, unsafe=True)
    again, _r2, n2 = fix_source(linter(), decode(once.encode()), name, lint(once, name), unsafe=True)
    assert again == once and n2 == 0
    return checked
