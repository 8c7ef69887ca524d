"""``--fix``, ``--diff`` and ``--add-noqa``: apply edits, prove the result, write atomically.

A fix is accepted only when the edited file still parses and re-linting it shows the fixed
finding gone; fixes are applied in rounds (a second pass changes nothing). Files are written with
the write protocol of :mod:`amplint.safeio` (identity checked before the replacement, owner,
group, mode and extended attributes kept), in their encoding, BOM and line endings.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from . import faults, safeio

from .config import Settings
from .diagnostics import Diagnostic, Edit, Location
from .engine import FileResult, Linter, Source, decode
from .lines import split_lines

MAX_ROUNDS = 8


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in split_lines(text, keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _offset(starts: list[int], text: str, loc: Location) -> int:
    if loc.row - 1 >= len(starts) - 1:
        return len(text)
    return min(starts[loc.row - 1] + loc.column - 1, starts[loc.row])


def apply_edits(text: str, edits: list[Edit]) -> str:
    starts = _offsets(text)
    spans = sorted(((_offset(starts, text, e.location), _offset(starts, text, e.end_location), e.content) for e in edits),
                   reverse=True)
    out = text
    for start, end, content in spans:
        out = out[:start] + content + out[end:]
    return out


def _spans(text: str, d: Diagnostic) -> list[tuple[int, int]]:
    starts = _offsets(text)
    return [(_offset(starts, text, e.location), _offset(starts, text, e.end_location)) for e in d.fix.edits]  # type: ignore[union-attr]


def _overlaps(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    for s1, e1 in a:
        for s2, e2 in b:
            if s1 < e2 and s2 < e1:
                return True
            if s1 == s2 and (s1 == e1 or s2 == e2):  # two insertions at one point: order unclear
                return True
    return False


def applicable(d: Diagnostic, unsafe: bool) -> bool:
    return d.fix is not None and (d.fix.applicability == "safe" or unsafe)


def _relint(linter: Linter, text: str, name: str, source: Source) -> FileResult:
    return linter.check_source(Source(text, source.encoding, source.newline, source.bom), name)


def _is_syntax_error(result: FileResult) -> bool:
    return any(d.code == "AMP000" for d in result.diagnostics)


def fix_source(linter: Linter, source: Source, name: str, first: FileResult, unsafe: bool,
               keep=None) -> tuple[str, FileResult, int]:
    """Apply fixes in rounds; returns (text, final result, number of fixes applied). ``keep``
    (a predicate on a diagnostic and the text it was found in) leaves out the fixes it refuses
    (a notebook: a fix whose edits leave the finding's cell)."""
    text = source.text
    result = first
    applied = 0
    rejected: set[tuple] = set()
    for _round in range(MAX_ROUNDS):
        chosen: list[Diagnostic] = []
        taken: list[tuple[int, int]] = []
        for d in result.diagnostics:
            if not applicable(d, unsafe) or _key(d) in rejected or (keep is not None and not keep(d, text)):
                continue
            spans = _spans(text, d)
            if _overlaps(spans, taken):
                continue
            chosen.append(d)
            taken.extend(spans)
        if not chosen:
            break
        candidate = apply_edits(text, [e for d in chosen for e in d.fix.edits])  # type: ignore[union-attr]
        new = _relint(linter, candidate, name, source)
        if _is_syntax_error(new) or _resurfaced(chosen, result, new):
            # find the culprits one by one; keep the fixes that are sound on their own
            good = []
            for d in chosen:
                one = apply_edits(text, list(d.fix.edits))  # type: ignore[union-attr]
                r = _relint(linter, one, name, source)
                if _is_syntax_error(r) or _resurfaced([d], result, r):
                    rejected.add(_key(d))
                else:
                    good.append(d)
            if not good:
                continue
            candidate = apply_edits(text, [e for d in good for e in d.fix.edits])  # type: ignore[union-attr]
            new = _relint(linter, candidate, name, source)
            if _is_syntax_error(new):
                rejected.update(_key(d) for d in good)
                continue
            chosen = good
        text = candidate
        result = new
        applied += len(chosen)
    return text, result, applied


def _key(d: Diagnostic) -> tuple:
    return (d.code, d.message, tuple((e.content) for e in d.fix.edits) if d.fix else ())


def _resurfaced(fixed: list[Diagnostic], before: FileResult, after: FileResult) -> bool:
    """A fix must remove its own finding: for each (code, message), the findings left must be
    fewer than before by at least the number of fixes applied (rows shift, so count)."""
    from collections import Counter

    b = Counter((d.code, d.message) for d in before.diagnostics)
    a = Counter((d.code, d.message) for d in after.diagnostics)
    f = Counter((d.code, d.message) for d in fixed)
    return any(a[k] > b[k] - n for k, n in f.items())


def add_noqa_source(linter: Linter, source: Source, name: str, first: FileResult) -> tuple[str, int]:
    lines = split_lines(source.text, keepends=True)
    by_row: dict[int, set[str]] = {}
    for d in first.diagnostics:
        if d.code == "AMP000" or d.noqa_row is None or d.cell is not None:
            continue
        by_row.setdefault(d.noqa_row, set()).add(d.code)
    if not by_row:
        return source.text, 0
    from .noqa import LINE_NOQA

    added = 0
    new_lines = list(lines)
    for row, codes in sorted(by_row.items()):
        if row - 1 >= len(new_lines):
            continue
        line = new_lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        if body.rstrip().endswith("\\"):
            continue  # a comment after a line continuation would break the line
        m = LINE_NOQA.search(body)
        if m is not None and m.group("codes") is None:
            continue  # a blanket noqa already covers it
        if m is not None:
            existing = [c.strip() for c in m.group("codes").replace(",", " ").split()]
            merged = existing + sorted(c for c in codes if c not in existing)
            body = body[: m.start()] + "# noqa: " + ", ".join(merged) + body[m.end():]
        else:
            body = body.rstrip() + "  # noqa: " + ", ".join(sorted(codes))
        candidate = new_lines[:row - 1] + [body + (ending or "")] + new_lines[row:]
        text = "".join(candidate)
        check = _relint(linter, text, name, source)
        if _is_syntax_error(check) or any(d.noqa_row == row and d.code in codes for d in check.diagnostics):
            continue  # the line end is inside a string, or the comment does not reach the finding
        new_lines = candidate
        added += len(codes)
    return "".join(new_lines), added


def encode_source(text: str, source: Source) -> bytes:
    """``text`` in the encoding (and BOM) the original file had."""
    data = text.encode(source.encoding, errors="surrogateescape") if source.encoding != "utf-8-sig" else text.encode("utf-8-sig")
    if source.bom and source.encoding == "utf-8":
        data = b"\xef\xbb\xbf" + data
    return data


def write_atomic(path: Path, text: str, source: Source) -> None:
    """Write ``text`` over ``path`` with the ``--fix`` write protocol (:mod:`amplint.safeio`),
    checking that the file is still what it is now. Raises ``OSError`` or
    :class:`amplint.safeio.FileChanged`."""
    snap = safeio.read_snapshot(path)
    safeio.replace_file(snap, encode_source(text, source))


def fix_paths(paths: list[str], settings, *, unsafe: bool = False, diff: bool = False,
              add_noqa: bool = False, jobs: int | None = None, use_cache: bool = True) -> list[FileResult]:
    """``--fix`` / ``--diff`` / ``--add-noqa`` over files and folders, through the runner's
    worker pool and cache: a file whose cached result has nothing to fix is not even read. Each
    file is written with the write protocol of :mod:`amplint.safeio`, in whichever process
    fixes it."""
    from .runner import FixMode, run

    return run(paths, settings, jobs=jobs, use_cache=use_cache, mode=FixMode(unsafe=unsafe, diff=diff, add_noqa=add_noqa))


def _left_alone(linter: Linter, c, why: str) -> FileResult:
    """The file changed (or went away) while its fixes were computed: nothing was written."""
    if why == "deleted":
        return FileResult(c.name, warnings=[f"{c.name}: deleted while amplint was fixing it: not re-created"])
    result = linter.check_path(c.path, c.explicit)
    result.warnings.append(f"{c.name}: changed while amplint was fixing it (saved by an editor?): left as it is; "
                           "run amplint --fix again")
    return result


def _fix_one(linter: Linter, c, *, unsafe: bool, diff: bool, add_noqa: bool, record: list | None = None) -> FileResult:
    """Fix (diff, noqa) one file. ``record``: gets ``(bytes, identity, time)`` of the file as the
    returned result describes it (as read, or as written), for the cache; nothing when that is
    not known (a notebook, a file that changed meanwhile, an error)."""
    import time

    from .engine import oversize_result

    name = c.name
    limit = linter.settings.max_file_size
    if not c.contained:
        result = linter.check_path(c.path, c.explicit)
        result.warnings.append(f"{name}: not fixed: it resolves to {c.resolved}, outside the project root "
                               f"({linter.settings.root}) and the directory it was named in")
        return result
    read_ns = time.time_ns()
    try:
        snap = safeio.read_snapshot(c.path, limit)
    except safeio.FileTooLarge as e:
        return oversize_result(name, e.size, limit)
    except safeio.FileChanged:
        return _left_alone(linter, c, "changed")
    except OSError:
        return linter.check_path(c.path, c.explicit)
    faults.pause("fix:read", name)
    if c.path.suffix == ".ipynb":
        from .notebook import fix_notebook

        return fix_notebook(linter, c, snap, unsafe=unsafe, diff=diff, add_noqa=add_noqa)
    as_read = (snap.data, [snap.size, snap.mtime_ns, snap.ctime_ns, snap.ino], read_ns)
    first = linter.check_bytes(snap.data, name, explicit=c.explicit)
    if first.source is None or not first.analysed or _is_syntax_error(first):
        if record is not None:
            record.append(as_read)
        return first
    source = first.source
    if add_noqa:
        text, n = add_noqa_source(linter, source, name, first)
        result = _relint(linter, text, name, source) if n else first
    else:
        text, result, n = fix_source(linter, source, name, first, unsafe)
    result.source = source
    result.fixes_applied = n
    if text != source.text:
        result.fixed_text = text
        if not diff:
            data = encode_source(text, source)
            try:
                safeio.replace_file(snap, data)
            except safeio.FileChanged as e:
                return _left_alone(linter, c, e.reason)
            except OSError as e:
                first.errors.append(f"{name}: cannot write the fixes: {e.strerror or e}")
                first.fixes_applied = 0
                return first
            if record is not None:
                written_ns = time.time_ns()
                try:
                    st = os.stat(snap.path)
                except OSError:
                    pass
                else:
                    record.append((data, [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino], written_ns))
            return result
    elif diff:
        result.fixed_text = None
    if diff:
        result.diagnostics = first.diagnostics
    if record is not None:
        record.append(as_read)
    return result


def render_diff(results: list[FileResult]) -> str:
    out = []
    for r in results:
        if r.fixed_text is None or r.source is None:
            continue
        # lines as `diff` and `patch` read them: ended by "\n" only (a file with "\r" endings is
        # one line to them), and a last line without one marked as such
        a = _lf_lines(r.source.text)
        b = _lf_lines(r.fixed_text)
        from .printable import quote_name

        for line in difflib.unified_diff(a, b, fromfile=quote_name(r.path), tofile=quote_name(r.path)):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lf_lines(text: str) -> list[str]:
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def fix_text(source: str, filename: str = "<stdin>", *, settings: Settings | None = None, unsafe: bool = False) -> str:
    """Public helper: the fixed version of ``source`` (unchanged when nothing applies)."""
    from .engine import default_settings

    linter = Linter(settings or default_settings())
    src = decode(source.encode("utf-8"))
    first = linter.check_source(src, filename)
    text, _result, _n = fix_source(linter, src, filename, first, unsafe)
    return text
