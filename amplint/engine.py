"""Lint one file: decode, prefilter, parse once, build the model, run the rules, resolve
positions, apply suppressions.  Also the public ``lint_source`` / ``lint_paths`` API.

LibCST is imported only when a file passes the prefilter.  The parse runs on a thread with a
large stack, behind CPython's own parser: LibCST's native parser can overflow the C stack on
pathologically nested input (a segfault, not an exception), while CPython rejects nesting
beyond about 3,000 levels with a catchable error.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from ._record import Factory, Record
from .config import RuleOptions, Settings
from .diagnostics import Diagnostic, Edit, Fix, Location, Related
from .files import read_regular
from .lines import split_lines
from .prefilter import FileTriggers, Prefilter
from .rules import Finding, FixPlan, Rule, all_rules

SYNTAX_CODE = "AMP000"
SYNTAX_NAME = "syntax-error"
PSEUDO_CODES = (SYNTAX_CODE,)

_STACK_SIZE = 256 * 1024 * 1024
_RECURSION_LIMIT = 12000
# ``a + b + ...`` / ``a.b.c...`` chains longer than this are not handed to LibCST, whose parser
# takes super-linear time on them (2,000 links: 0.8 s; 8,000: minutes, or a crash); real code
# stays far below (the longest chain of the public corpus's AMP files has 12 links)
MAX_CHAIN = 1000
#: a file is analysed when it has at most one syntax node (a constant literal counting as one) per
#: this many bytes of ``max-file-size``: 40,329 nodes under the default 2 MB, about half a megabyte
#: of dense real code (10-15 bytes a node; the largest training module of the corpus has 16,025,
#: its largest AMP file 38,345). The costliest inputs (many small training functions in one file,
#: bench/shapes.py; torch's distributed_test.py) take about 100 us a node, parse and analysis, so
#: the limit keeps every file under 5 s on a slow machine
BYTES_PER_NODE = 52


class Source(Record):
    """A decoded source file, with what is needed to write it back unchanged."""

    __slots__ = _fields = ("text", "encoding", "newline", "bom")
    text: str
    encoding: str
    newline: str
    bom: bool


class FileResult(Record):
    __slots__ = _fields = (
        "path", "diagnostics", "errors", "warnings", "analysed", "source", "fixed_text", "fixes_applied", "deps",
    )
    _defaults = {
        "diagnostics": Factory(list), "errors": Factory(list), "warnings": Factory(list), "analysed": False,
        "source": None, "fixed_text": None, "fixes_applied": 0, "deps": None,
    }
    path: str
    diagnostics: list[Diagnostic]
    errors: list[str]  # internal errors (exit status 2)
    warnings: list[str]
    analysed: bool  # passed the prefilter and was parsed
    source: Source | None
    fixed_text: str | None  # set by --fix / --diff when edits were applied
    fixes_applied: int
    #: ``[path, size, mtime_ns]`` of the other project files the result depends on, as the
    #: versions the analysis read (the result cache checks them); None when not recorded
    deps: list | None

    def to_cache(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.diagnostics:
            out["diagnostics"] = [d.to_json() for d in self.diagnostics]
        if self.warnings:
            out["warnings"] = self.warnings
        if self.analysed:
            out["analysed"] = True
        return out


class DecodeError(Exception):
    def __init__(self, message: str, row: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.row, self.col = row, col


def decode(data: bytes) -> Source:
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        msg = e.msg if hasattr(e, "msg") else str(e)
        if "invalid or missing encoding" in msg:
            encoding = "utf-8"  # no cookie and not UTF-8: say where the bad byte is, below
        else:
            raise DecodeError(f"SyntaxError: {msg}") from None
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as e:
        start = getattr(e, "start", 0)
        row = data.count(b"\n", 0, start) + 1
        col = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise DecodeError(
            f"SyntaxError: the file is not valid {encoding} (byte 0x{data[start]:02x} at offset {start}); "
            "declare its encoding with a coding comment", row, col
        ) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    newline = "\r\n" if "\r\n" in text[:10000] else ("\r" if "\r" in text[:10000] and "\n" not in text[:10000] else "\n")
    return Source(text, encoding, newline, bom)


def big_stack_executor():
    """A one-thread executor whose thread has the analysis stack, reused across calls (the
    language server lints on it: starting a thread with a 256 MB stack per lint costs ~10 ms)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    def mark() -> None:
        threading.current_thread().amplint_big_stack = True  # type: ignore[attr-defined]

    old = threading.stack_size()
    try:
        threading.stack_size(_STACK_SIZE)
        ex = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amplint-analyse", initializer=mark)
        ex.submit(lambda: None).result()  # start the thread while the stack size is set
    finally:
        threading.stack_size(old)
    return ex


#: the cyclic collector's first threshold while linting (CPython's default is 700)
GC_THRESHOLD = 10_000


def tune_gc() -> None:
    """Collect cyclic garbage less often. A LibCST parse and the flow analysis allocate millions
    of objects that live as long as the file's (or the project's) model: with the default
    threshold the collector keeps re-scanning that heap (a quarter of a serial corpus run's CPU:
    60 full passes, 18 s of 74 s). The cyclic garbage is mostly the models of projects a worker
    no longer keeps (:meth:`amplint.project.ModelCache.use_root`); full passes still come, every
    million or so net allocations, and free them."""
    import gc

    if gc.get_threshold()[0] < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


def _run_big_stack(fn: Callable[[], Any]) -> Any:
    import threading

    if getattr(threading.current_thread(), "amplint_big_stack", False):
        return fn()  # already on a thread with the large stack (the language server's)
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = e

    old = threading.stack_size()
    try:
        threading.stack_size(_STACK_SIZE)
        # a daemon: an interrupted run exits without waiting for the analysis to finish
        t = threading.Thread(target=target, name="amplint-analyse", daemon=True)
    finally:
        threading.stack_size(old)
    t.start()
    t.join()
    if "error" in result:
        raise result["error"]
    return result.get("value")


class Linter:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.rules: list[Rule] = [r(settings.options) for r in all_rules() if r.code in settings.enabled]
        names = settings.options.scaler_names
        self.prefilter = Prefilter({t for r in self.rules for t in r.triggers}, names)
        self._screen_map: dict[str, tuple[str, ...]] | None = None
        self._models = None  # models of project modules, shared by the files this linter checks
        #: ``(text, name) -> Module``: the language server's incremental parser (None: parse whole)
        self.module_parser = None
        if sys.getrecursionlimit() < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)

    # what a file that passed the prefilter needs (built on first use: a run whose files all
    # fail the prefilter pays for none of it)

    @property
    def _screens(self) -> dict[str, tuple[str, ...]]:
        if self._screen_map is None:
            self._screen_map = {r.code: _screens_of(r) for r in self.rules}
        return self._screen_map

    # --- one file --------------------------------------------------------------------

    def check_path(self, path: Path, explicit: bool, display: str | None = None) -> FileResult:
        from .safeio import FileTooLarge

        name = display if display is not None else str(path)
        try:
            data = read_regular(path, self.settings.max_file_size)
        except IsADirectoryError:
            return FileResult(name, errors=[f"{name}: is a directory"])
        except FileTooLarge as e:
            return oversize_result(name, e.size, self.settings.max_file_size)
        except OSError as e:
            return FileResult(name, diagnostics=[_io_diagnostic(name, e)])
        if path.suffix == ".ipynb":
            from .notebook import check_notebook

            return check_notebook(self, data, name)
        return self.check_bytes(data, name, explicit=explicit)

    #: the project files the last analysed file's findings read (:meth:`ModelCache.dependencies`)
    last_dependencies: list | None = None

    def check_bytes(self, data: bytes, name: str, explicit: bool = True, force: bool = False) -> FileResult:
        self.last_dependencies = None
        result = FileResult(name)
        reached = False
        if not force and not self.prefilter(data):
            reached = self._reached_by_scaler_code(name, data)
        if not force and not reached and not self.prefilter(data):
            if explicit:
                err = _cpython_syntax_error(data, name)
                if err is not None and not _newer_grammar(data.decode("utf-8", "replace"), err):
                    result.diagnostics.append(err)
            return result
        if len(data) > self.settings.max_file_size:
            return oversize_result(name, len(data), self.settings.max_file_size)
        try:
            source = decode(data)
        except DecodeError as e:
            result.diagnostics.append(_syntax_diag(name, str(e), e.row, e.col))
            return result
        result.source = source
        return self.check_source(source, name, data, result, force=force, reached=reached)

    def _reached_by_scaler_code(self, name: str, data: bytes) -> bool:
        """A file without GradScaler evidence of its own that project code with a scaler imports
        (a helper that clips, a hook, a checkpoint saver): the scaler rules run on it too."""
        from .project import Project, reachable_evidence

        if name.startswith("<") or name.endswith(".ipynb") or not reachable_evidence(data):
            return False
        try:
            path = Path(name).resolve()
            return path.is_file() and Project.for_path(path).reached_by_scaler_code(path)
        except OSError:
            return False

    def check_source(self, source: Source, name: str, data: bytes | None = None,
                     result: FileResult | None = None, force: bool = False, reached: bool = False) -> FileResult:
        result = result if result is not None else FileResult(name, source=source)
        result.analysed = True
        tree, err = _cpython_parse(source.text, name)
        magics = None
        if err is not None:
            from .literals import blank_magics

            magics = blank_magics(source.text)
            tree = _cpython_parse(magics[0], name)[0] if magics is not None else None
            if tree is None:
                if not _newer_grammar(source.text, err):
                    result.diagnostics.append(err)
                    return result
                # syntax of a newer Python than this one (3.12's f-strings, ``type`` aliases):
                # LibCST's grammar reads it, and the file is analysed without the AST screens
                magics = None
            else:
                # a notebook exported as a script: the escape lines are an AMP000, the rest is linted
                result.diagnostics.append(_syntax_diag(
                    name, f"IPython escape line (`!`/`%` shell or magic command) is not Python; {len(magics[1])} such "
                    "line(s) are read as `pass` and the rest is checked", magics[1][0][0], 1))
        raw = data if data is not None else source.text.encode("utf-8", "surrogatepass")
        from .screen import SCREENS, facts

        f = facts(tree, self.settings.options.scaler_names) if tree is not None else None
        if force:
            rules = list(self.rules)
        else:
            present = FileTriggers(raw, self.settings.options.scaler_names)
            if not reached and any(_when_reached(r) and not present.passes(r.triggers) for r in self.rules):
                reached = self._reached_by_scaler_code(name, raw)
            rules = [r for r in self.rules if present.passes(r.triggers) or reached and _when_reached(r)]
            rules = [r for r in rules if f is None or not self._screens[r.code]
                     or any(SCREENS[s](f) for s in self._screens[r.code]) or reached and _when_reached(r)]
            if not rules and UNUSED_NOQA not in self.settings.enabled:
                return result
        node_limit = self.settings.max_file_size // BYTES_PER_NODE
        if f is not None and f.nodes > node_limit:
            # LibCST and the model need about 5-6 KB and up to 105 us per node (bench/shapes.py): past
            # this, a file under the byte limit would still cost over 5 s and 500 MB
            result.warnings.append(
                f"{name}: not analysed: {f.nodes:,} syntax nodes is over the {node_limit:,} that `max-file-size` "
                f"({self.settings.max_file_size / 1024**2:.1f} MB) allows (one per {BYTES_PER_NODE} bytes); raise it in "
                "[tool.amplint]")
            return result
        if f is not None and f.longest_chain > MAX_CHAIN:
            result.diagnostics.append(_syntax_diag(
                name, f"the file holds an expression chain of {f.longest_chain} links (over {MAX_CHAIN}): not analysed", 1, 1))
            return result
        try:
            diags, errors, warnings = _run_big_stack(lambda: self._analyse(source, name, rules, tree, magics))
        except RecursionError:
            diags, errors, warnings = [_syntax_diag(name, "the file is nested too deeply to analyse", 1, 1)], [], []
        except MemoryError:
            diags, errors, warnings = [_syntax_diag(name, "the file is too large to analyse", 1, 1)], [], []
        result.diagnostics.extend(diags)
        result.errors.extend(errors)
        result.warnings.extend(warnings)
        return result

    def forget_models(self) -> None:
        """Drop the models of project modules built so far (files changed on disk)."""
        self._models = None

    def _project_link(self, name: str):
        """The project the file ``name`` belongs to (None for stdin, notebooks and files that do
        not exist on disk): its importers and the modules it calls into are analysed with it."""
        if name.startswith("<") or name.endswith(".ipynb"):
            return None, None
        path = Path(name)
        try:
            if not path.is_file():
                return None, None
            path = path.resolve()
        except OSError:
            return None, None
        from .project import ModelCache, Project, ProjectLink

        if self._models is None:
            opts = self.settings.options
            self._models = ModelCache(opts.scaler_names, opts.eval_patterns)
        project = Project.for_path(path)
        self._models.use_root(project.root)
        return ProjectLink(project, self._models, path), path

    def _analyse(self, source: Source, name: str, rules: list[Rule], tree: ast.Module | None = None, magics=None):
        import libcst as cst

        from .cstparse import parse_around_limits, parse_module
        from .literals import blank_large_literals, fold_identifiers, touches
        from .model import AmpModel

        text, blanked = blank_large_literals(magics[0] if magics is not None else source.text, tree)
        blanked = blanked + (magics[1] if magics is not None else [])
        text, folded = fold_identifiers(text)
        blanked = blanked + folded
        opts: RuleOptions = self.settings.options
        link, path = self._project_link(name)
        # a module another file's analysis already built is reused: one model per module
        model = link.cache.cached(path, source.text) if link is not None else None
        if model is None:
            skipped: list = []
            try:
                try:
                    module = self.module_parser(text, name) if self.module_parser is not None else parse_module(text)
                except cst.ParserSyntaxError:
                    # CPython compiled the file: a limit of LibCST's grammar; the statements it
                    # rejects are read as ``pass`` and the rest is analysed
                    module, skipped = parse_around_limits(text, tree)
            except cst.ParserSyntaxError as e:
                from .cstlimits import explain

                msg, row, col = explain(tree, source.text, max(e.raw_line, 1), e.raw_column + 1, _first_line(e.message))
                return [_syntax_diag(name, msg, row, col)], [], []
            model = AmpModel(module, scaler_names=opts.scaler_names, eval_patterns=opts.eval_patterns, link=link, path=path)
            model.skipped = skipped
            if link is not None:
                link.cache.register(path, model, source.text, link.project.root)
        module = model.module
        limits: list[Diagnostic] = []
        if model.skipped:
            from .cstlimits import explain

            for rows, e in model.skipped:
                msg, row, col = explain(tree, source.text, rows[0], 1, _first_line(e.message), rows)
                limits.append(_syntax_diag(name, msg, row, col))
            blanked = blanked + [rows for rows, _e in model.skipped]
        findings: list[tuple[Rule, Finding]] = []
        errors: list[str] = []
        for rule in rules:
            try:
                for f in rule.check(model):
                    findings.append((rule, f))
            except RecursionError:
                raise
            except Exception as e:  # noqa: BLE001 - one rule's bug must not stop the run
                errors.append(f"{name}: internal error in {rule.code} ({rule.name}): {type(e).__name__}: {e}")
        self.last_dependencies = link.cache.dependencies(model) if link is not None else []
        unused_noqa = UNUSED_NOQA in self.settings.enabled
        given_up = [f"{name}: `{func.name}` is too complex to follow ({why}): the sequencing rules skip it"
                    for func, why in (model._flow.abandoned if model._flow is not None else ())]
        from . import noqa as noqa_mod

        if not findings and not unused_noqa:
            # a malformed directive is reported even where it has nothing to suppress
            bad = noqa_mod.invalid_warnings(noqa_mod.parse(source.text), name) if "noqa" in source.text.lower() else []
            return limits, errors, given_up + bad
        resolver = Resolver(module, source, tree, getattr(model, "stand_ins", None)) if findings else None

        noqa = noqa_mod.parse(source.text)
        ignored = self.settings.ignored_for(Path(name)) if self.settings.per_file_ignores else set()
        out: list[Diagnostic] = []
        seen: set[tuple] = set()
        for rule, f in findings:
            if rule.code in ignored:
                continue
            try:
                diag = resolver.diagnostic(rule, f, name)
            except Exception as e:  # noqa: BLE001
                errors.append(f"{name}: internal error in {rule.code} ({rule.name}): {type(e).__name__}: {e}")
                continue
            if diag.fix is not None and (magics is not None or blanked and any(
                    touches(blanked, e.location.row, e.end_location.row) for e in diag.fix.edits)):
                # computed from a blanked literal, or in a file that is not Python as written (a
                # notebook exported with its escape lines, never rewritten): not offered
                diag = diag._replace(fix=None)
            key = (diag.code, diag.location, diag.message)
            if key in seen:
                continue
            seen.add(key)
            rows = (diag.location.row, resolver.stmt_end_row(f.stmt))
            if noqa.suppresses(diag.code, rows):
                continue
            out.append(diag)
        warnings = given_up + noqa_mod.invalid_warnings(noqa, name) + _noqa_warnings(noqa, name)
        if unused_noqa:
            out.extend(_unused_noqa(noqa, name, self.settings.enabled, source))
        out.extend(limits)
        out.sort(key=Diagnostic.sort_key)
        return out, errors, warnings


UNUSED_NOQA = "AMP900"


def _unused_noqa(noqa, name: str, enabled: frozenset[str], source: Source) -> list[Diagnostic]:
    from . import noqa as noqa_mod
    from .rules.amp900_unused_noqa import UnusedNoqa

    lines = split_lines(source.text, keepends=True)
    out = []
    for d in sorted(list(noqa.lines.values()) + noqa.file_directives, key=lambda d: d.row):
        if d.codes is None:
            continue
        unused = sorted(c for c in d.codes if c.startswith("AMP") and c not in d.used and c != UNUSED_NOQA)
        if not unused:
            continue
        line = lines[d.row - 1] if d.row - 1 < len(lines) else ""
        body = line.rstrip("\r\n")
        start = d.col - 1
        comment = body[start:]
        m = noqa_mod.LINE_NOQA.search(comment) or noqa_mod.FILE_NOQA.search(comment)
        if m is None or m.group("codes") is None:
            continue
        keep = [c for c in re.split(r"[\s,]+", m.group("codes")) if c and c.upper() not in unused]
        loc = Location(d.row, d.col)
        end = Location(d.row, len(body) + 1)
        if keep:
            new_comment = comment[: m.start("codes")] + ", ".join(keep) + comment[m.end("codes"):]
            edit = Edit(new_comment, loc, end)
        else:
            rest = comment[m.end():].strip()
            if rest:  # other text after the directive stays a comment
                edit = Edit(rest if rest.startswith("#") else "# " + rest, loc, end)
            elif body[:start].strip():
                edit = Edit("", Location(d.row, len(body[:start].rstrip()) + 1), end)
            else:  # a comment alone on its line: remove the line
                edit = Edit("", Location(d.row, 1), Location(d.row + 1, 1))
        out.append(Diagnostic(
            UNUSED_NOQA, UnusedNoqa.name, UnusedNoqa.message.format(codes=", ".join(f"`{c}`" for c in unused)),
            name, loc, end, noqa_row=d.row, fix=Fix("safe", UnusedNoqa.fix_title, (edit,)),
        ))
    return out


def _screens_of(rule: Rule) -> tuple[str, ...]:
    """The AST screens a rule runs behind: its own, or those its triggers imply (any may hold)."""
    from .screen import TRIGGER_SCREENS

    if rule.screen is not None:
        return (rule.screen,)
    if rule.triggers and all(t in TRIGGER_SCREENS for t in rule.triggers):
        return tuple(TRIGGER_SCREENS[t] for t in rule.triggers)
    return ()


def _noqa_warnings(noqa, name: str) -> list[str]:
    known = {r.code for r in all_rules()} | set(PSEUDO_CODES)
    warnings = []
    for d in list(noqa.lines.values()) + noqa.file_directives:
        for c in sorted(d.codes or ()):
            if c.startswith("AMP") and c not in known:
                warnings.append(f"{name}:{d.row}: unknown rule code `{c}` in noqa comment")
    return warnings


def _is_block(body) -> bool:
    return type(body).__name__ == "IndentedBlock"


def _align(stmts, body) -> list | None:
    """The CPython statement of each LibCST statement of one body (a line ``a; b`` is several
    CPython statements: its first), None where the counts disagree."""
    import libcst as cst

    out = []
    k = 0
    for stmt in stmts:
        if k >= len(body):
            return None
        out.append(body[k])
        k += len(stmt.body) if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else 1
    return out if k == len(body) else None


@functools.lru_cache(maxsize=None)
def _anchor_types() -> dict:
    """LibCST compound statement -> the CPython statements it is (whose body a position anchor
    may descend into)."""
    import libcst as cst

    table = {
        cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
        cst.ClassDef: (ast.ClassDef,),
        cst.If: (ast.If,),
        cst.For: (ast.For, ast.AsyncFor),
        cst.While: (ast.While,),
        cst.With: (ast.With, ast.AsyncWith),
        cst.Try: (ast.Try,),
    }
    if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
        table[cst.TryStar] = (ast.TryStar,)
    return table


class Resolver:
    """Turns findings (nodes) into diagnostics (rows and columns), and fix plans into edits."""

    def __init__(self, module, source: Source, tree: ast.Module | None = None, stand_ins=None) -> None:
        self.module = module
        #: calls the model made up for statements (``p.grad += c``) -> those statements
        self.stand_ins = stand_ins or {}
        self.source = source
        self.lines = split_lines(source.text, keepends=True)
        self.tree = tree
        self._positions: dict = {}  # node -> (start line, start col, end line, end col), 1-based lines
        self._top: dict[int, object] | None = None  # id(node) -> its anchor statement (see _index)
        self._parent: dict[int, tuple] = {}
        self._done: set[int] = set()
        self._aligned: dict[int, list | None] = {}  # id(CPython body) -> _align of it
        self._full = False

    # LibCST computes positions by generating the code of the whole module, which costs about
    # as much as the parse. Findings are few, so positions are computed for the innermost
    # statement holding the node that a chain of bodies (``def``, ``class``, ``if``, ``for``,
    # ``while``, ``with``, ``try``) leads to from the top level, generated on its own with its
    # block's indentation and placed by CPython's line number of that statement.

    def _index(self) -> dict[int, object]:
        """id(node) -> the innermost anchor statement holding it; anchors map (in ``_parent``)
        to ``(enclosing anchor or None, index in its body or in the module)``."""
        if self._top is None:
            from .model.syntax import child_fields

            anchors = _anchor_types()
            owner: dict[int, object] = {}
            parent: dict[int, tuple] = {}
            stack: list[tuple] = []
            for i, stmt in enumerate(self.module.body):
                parent[id(stmt)] = (None, i)
                stack.append((stmt, stmt))
            while stack:
                n, anchor = stack.pop()
                owner[id(n)] = anchor
                inner = None
                if n is anchor and type(n) in anchors and _is_block(n.body):
                    inner = n.body
                    for j, sub in enumerate(inner.body):
                        parent[id(sub)] = (n, j)
                        stack.append((sub, sub))
                for name in child_fields(type(n)):
                    v = getattr(n, name)
                    if inner is not None and v is inner:
                        owner[id(v)] = anchor
                        stack.extend((x, anchor) for x in (v.header, *v.footer))
                    elif isinstance(v, (list, tuple)):
                        stack.extend((x, anchor) for x in v if hasattr(x, "_codegen_impl"))
                    elif hasattr(v, "_codegen_impl"):
                        stack.append((v, anchor))
            self._top = owner
            self._parent = parent
        return self._top

    def _cpython_of(self, stmt):
        """``(CPython statement, indent tokens)`` of an anchor, None where the trees disagree."""
        chain = [stmt]
        while self._parent[id(chain[-1])][0] is not None:
            chain.append(self._parent[id(chain[-1])][0])
        chain.reverse()
        node = None
        indents: list[str] = []
        stmts, body = self.module.body, self.tree.body if self.tree is not None else None
        for k, s in enumerate(chain):
            if body is None:
                return None
            aligned = self._aligned.get(id(body), False)
            if aligned is False:  # each body is aligned once, not once per finding in it
                aligned = self._aligned[id(body)] = _align(stmts, body)
            if aligned is None:
                return None
            node = aligned[self._parent[id(s)][1]]
            if k + 1 < len(chain):
                if not isinstance(node, _anchor_types().get(type(s), ())):
                    return None
                indents.append(s.body.indent if s.body.indent is not None else self.module.default_indent)
                stmts, body = s.body.body, node.body
        return node, indents

    def _resolve_statement(self, stmt) -> bool:
        from libcst.metadata import PositionProvider
        from libcst.metadata.position_provider import PositionProvidingCodegenState

        if id(stmt) in self._done:
            return True
        hit = self._cpython_of(stmt)
        if hit is None:
            return False
        node, indents = hit
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        offset = first - 1 - len(getattr(stmt, "leading_lines", ()))
        provider = PositionProvider()
        m = self.module
        state = PositionProvidingCodegenState(default_indent=m.default_indent, default_newline=m.default_newline,
                                              provider=provider)
        state.indent_tokens = list(indents)
        stmt._codegen(state)
        for n, r in provider._computed.items():
            self._positions[n] = (r.start.line + offset, r.start.column, r.end.line + offset, r.end.column)
        self._done.add(id(stmt))
        return True

    def _resolve_all(self) -> None:
        from libcst.metadata import MetadataWrapper, PositionProvider

        for n, r in MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider).items():
            self._positions[n] = (r.start.line, r.start.column, r.end.line, r.end.column)
        self._full = True

    def position(self, node) -> tuple[int, int, int, int]:
        node = self.stand_ins.get(node, node)
        hit = self._positions.get(node)
        if hit is not None:
            return hit
        if not self._full:
            anchor = self._index().get(id(node))
            if anchor is None or not self._resolve_statement(anchor):
                self._resolve_all()
        return self._positions[node]

    def range(self, node) -> tuple[Location, Location]:
        sl, sc, el, ec = self.position(node)
        return Location(sl, sc + 1), Location(el, ec + 1)

    def stmt_end_row(self, stmt) -> int:
        if stmt is None:
            return -1
        try:
            return self.position(stmt)[2]
        except KeyError:
            return -1

    def diagnostic(self, rule: Rule, f: Finding, name: str) -> Diagnostic:
        start, end = self.range(f.node)
        fix = self.fix(f.fix) if f.fix is not None else None
        return Diagnostic(
            code=rule.code,
            name=rule.name,
            message=f.message or rule.message,
            filename=name,
            location=start,
            end_location=end,
            noqa_row=start.row,
            fix=fix,
            severity=rule.severity,
            related=tuple(rel for rel in (self.related(r, name) for r in f.related) if rel is not None),
        )

    def related(self, r, name: str) -> Related | None:
        """A related location; None for a node this file's tree does not hold (a rule handing on a
        node of another module without :func:`~amplint.rules.common.related_at`): the finding
        stands without it."""
        if len(r) == 2:
            node, message = r
            try:
                start, end = self.range(node)
            except KeyError:
                return None
            return Related(name, start, end, message)
        filename, (row, col), (end_row, end_col), message = r
        return Related(filename, Location(row, col), Location(end_row, end_col), message)

    def _alone_in_block(self, first: int, last: int) -> bool:
        """The statement on rows first..last is the only one of its block (deleting it must
        leave a ``pass``): the code line before opens the block, the one after leaves it."""
        width = len(self._indent(first).expandtabs())

        def code_line(row: int, step: int) -> int | None:
            while 0 < row <= len(self.lines):
                text = self.lines[row - 1].strip()
                if text and not text.startswith("#"):
                    return row
                row += step
            return None

        before = code_line(first - 1, -1)
        if before is None or len(self._indent(before).expandtabs()) >= width:
            return False
        if not self.lines[before - 1].split("#", 1)[0].rstrip().endswith(":"):
            return False
        after = code_line(last + 1, 1)
        return after is None or len(self._indent(after).expandtabs()) < width

    def _indent(self, row: int) -> str:
        line = self.lines[row - 1] if 0 < row <= len(self.lines) else ""
        return line[: len(line) - len(line.lstrip(" \t"))]

    def fix(self, plan: FixPlan) -> Fix | None:
        edits = []
        nl = self.source.newline
        for e in plan.edits:
            start, end = self.range(e.node)
            if e.kind == "replace":
                edits.append(Edit(e.text, start, end))
            elif e.kind == "insert_before":
                loc = Location(start.row, 1)
                edits.append(Edit(self._indent(start.row) + e.text + nl, loc, loc))
            elif e.kind == "insert_after":
                indent = self._indent(start.row)
                if end.row < len(self.lines) or (self.lines and self.lines[-1].endswith(("\n", "\r"))):
                    loc = Location(end.row + 1, 1)
                    edits.append(Edit(indent + e.text + nl, loc, loc))
                else:
                    loc = Location(end.row, len(self.lines[end.row - 1]) + 1)
                    edits.append(Edit(nl + indent + e.text, loc, loc))
            elif e.kind == "delete_stmt":
                loc = Location(start.row, 1)
                stop = Location(end.row + 1, 1)
                alone = e.text == "pass" or self._alone_in_block(start.row, end.row)
                edits.append(Edit(self._indent(start.row) + "pass" + nl if alone else "", loc, stop))
            else:  # pragma: no cover
                raise ValueError(f"unknown edit kind {e.kind}")
        if not edits:
            return None
        return Fix(plan.applicability, plan.message, tuple(sorted(edits, key=lambda x: (x.location, x.end_location))))


def oversize_result(name: str, size: int, limit: int) -> FileResult:
    """A file over ``max-file-size``: not read, not analysed, a warning."""
    mb = size / 1024**2
    lim = limit / 1024**2
    return FileResult(name, warnings=[
        f"{name}: not analysed: {mb:.1f} MB is over `max-file-size` ({lim:.1f} MB); raise it in [tool.amplint]"])


def _first_line(message: str) -> str:
    text = message.strip().splitlines()[0] if message.strip() else "invalid syntax"
    return text.replace("parser error: ", "").replace("tokenizer error: ", "")


def _syntax_diag(name: str, message: str, row: int, col: int) -> Diagnostic:
    loc = Location(max(row, 1), max(col, 1))
    return Diagnostic(SYNTAX_CODE, SYNTAX_NAME, message, name, loc, loc, noqa_row=None)


def _io_diagnostic(name: str, e: OSError) -> Diagnostic:
    reason = e.strerror or type(e).__name__
    return _syntax_diag(name, f"cannot read the file: {reason}", 1, 1)


def _when_reached(rule) -> bool:
    return "scaler" in rule.triggers or rule.runs_when_reached


def _cpython_syntax_error(data: bytes | str, name: str) -> Diagnostic | None:
    return _cpython_parse(data, name)[1]


def _cpython_parse(data: bytes | str, name: str) -> tuple[ast.Module | None, Diagnostic | None]:
    """CPython's own verdict, which also bounds nesting before LibCST sees the file; the tree
    feeds the second-stage prefilter (:mod:`amplint.screen`). Compiled under a name that is no
    file: for a syntax error CPython reads the line from the file it names to place the column,
    and a notebook's file is JSON, not the code compiled."""
    try:
        return compile(data, "<amplint>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True), None
    except SyntaxError as e:
        msg = e.msg or "invalid syntax"
        kind = type(e).__name__
        row = e.lineno or 1
        col = e.offset or 1
        if "null bytes" in msg:
            return None, _nul_diagnostic(data, name)
        return None, _syntax_diag(name, f"{kind}: {msg}", row, col)
    except (RecursionError, MemoryError):
        return None, _syntax_diag(name, "SyntaxError: the code is nested too deeply", 1, 1)
    except ValueError:  # NUL bytes (older Pythons raise ValueError)
        return None, _nul_diagnostic(data, name)


#: what Python 3.11 says of the syntax 3.12 added (f-strings that nest quotes, break lines or
#: hold backslashes and comments; ``type`` aliases; generic ``def f[T]()`` / ``class C[T]:``)
_NEWER_SYNTAX = re.compile(r"SyntaxError: (f-string: |unterminated string literal|invalid syntax$|expected '\('$"
                           r"|unexpected character after line continuation character$)")


def _newer_grammar(text: str, err: Diagnostic) -> bool:
    """This interpreter rejects ``text`` but a newer Python's grammar, as LibCST parses it,
    accepts it (3.12's nested quotes and line breaks in f-strings, ``type`` aliases, generic
    ``def f[T]()``): only a syntax error, never NUL bytes or nesting too deep to compile, and
    only on interpreters older than the newest grammar LibCST reads."""
    if sys.version_info >= (3, 14) or not _NEWER_SYNTAX.match(err.message):
        return False  # (a TabError, nesting too deep to compile: no newer Python accepts those)
    from .cstparse import parse_module

    try:
        _run_big_stack(lambda: parse_module(text))
    except Exception:  # noqa: BLE001 - LibCST's parse errors, and anything its parser raises
        return False
    return True


def _nul_diagnostic(data: bytes | str, name: str) -> Diagnostic:
    if isinstance(data, bytes) and data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return _syntax_diag(name, "SyntaxError: UTF-16 encoded source is not supported (Python source must be UTF-8 or an ASCII-compatible encoding)", 1, 1)
    return _syntax_diag(name, "SyntaxError: source code cannot contain null bytes", _nul_row(data), _nul_col(data))


def _nul_col(data: bytes | str) -> int:
    nul = b"\x00" if isinstance(data, bytes) else "\x00"
    nl = b"\n" if isinstance(data, bytes) else "\n"
    i = data.find(nul)  # type: ignore[arg-type]
    return i - (data.rfind(nl, 0, i) + 1) + 1 if i >= 0 else 1  # type: ignore[arg-type]


def _nul_row(data: bytes | str) -> int:
    nul = b"\x00" if isinstance(data, bytes) else "\x00"
    i = data.find(nul)  # type: ignore[arg-type]
    return data.count(b"\n" if isinstance(data, bytes) else "\n", 0, i) + 1 if i >= 0 else 1  # type: ignore[arg-type]


# --- public API ------------------------------------------------------------------------


def default_settings() -> Settings:
    from .config import CliOverrides, build_settings

    return build_settings([], CliOverrides(isolated=True), all_rules())


def lint_source(source: str | bytes, filename: str = "<stdin>", *, settings: Settings | None = None,
                select: Iterable[str] | None = None) -> list[Diagnostic]:
    """Lint one source text; returns its diagnostics sorted by position.

    ``select`` (codes or prefixes, e.g. ``["ALL"]``) overrides the default rule selection.
    """
    if settings is None:
        from .config import CliOverrides, build_settings

        settings = build_settings([], CliOverrides(isolated=True, select=list(select) if select else None), all_rules())
    data = source.encode("utf-8") if isinstance(source, str) else source
    linter = Linter(settings)
    if filename.endswith(".ipynb"):
        from .notebook import check_notebook

        return check_notebook(linter, data, filename).diagnostics
    return linter.check_bytes(data, filename, explicit=True).diagnostics


def lint_paths(paths: Iterable[str], *, settings: Settings | None = None, select: Iterable[str] | None = None,
               jobs: int | None = 1, cache: bool = False) -> list[Diagnostic]:
    """Lint files and directories; returns all diagnostics sorted by (path, row, column, code)."""
    from .config import CliOverrides
    from .runner import run

    paths = list(paths)
    if settings is None:  # each file its nearest configuration, as on the command line
        from .config import Workspace

        settings = Workspace(CliOverrides(select=list(select) if select else None), all_rules())
    results = run(paths, settings, jobs=jobs, use_cache=cache)
    return sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
