"""The language server (pygls): the same engine as the command line, kept warm.

- ``textDocument/didOpen``, ``didChange`` and ``didSave`` lint the editor's text (not the file on
  disk) and publish diagnostics; ``didClose`` clears them. Python files and notebooks opened as
  ``.ipynb`` JSON (positions then point into the JSON, like GitHub annotations).
- Each document gets the settings of its nearest configuration file, like on the command line;
  a file the configuration excludes gets no diagnostics. Saving a configuration file
  (``pyproject.toml``, ``amplint.toml``, ``.amplint.toml``) reloads the settings and re-lints.
- ``textDocument/codeAction``: a quick fix per finding with a fix (unsafe fixes are marked so
  and never preferred), "Disable CODE for this line" (adds or extends ``# noqa: CODE``) and
  ``source.fixAll.amplint`` (every safe fix, as ``amplint --fix`` would apply them).
- Severity: error findings are LSP errors, info findings LSP information (the one policy of
  :mod:`amplint.output`).

LibCST and the model are imported once when the server starts, so a re-lint costs only the
analysis of the edited file (see ``bench/lsp.py``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from urllib.parse import unquote, urlparse

from lsprotocol import types as T
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..config import CONFIG_NAMES, CliOverrides, Workspace
from ..diagnostics import Diagnostic
from ..engine import FileResult, Linter
from ..lines import split_lines

SOURCE = "amplint"
FIX_ALL = "source.fixAll.amplint"


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return unquote(parsed.path) or uri
    return unquote(parsed.path)


class DocumentLinter:
    """Lints editor buffers with per-file settings; no LSP types in here."""

    def __init__(self) -> None:
        from ..rules import all_rules

        from ..engine import big_stack_executor

        self.rules = all_rules()
        self.reload()
        self._executor = big_stack_executor()
        import libcst  # noqa: F401 - paid once, at start-up, not on the first keystroke

        from .. import model  # noqa: F401

    def reload(self) -> None:
        self.workspace = Workspace(CliOverrides(), self.rules)
        self._linters: dict[int, Linter] = {}

    def files_changed(self) -> None:
        """Files on disk changed: the project indexes (imports, importers) are read again."""
        from ..project import Project

        Project.forget()
        for linter in self._linters.values():
            linter.forget_models()

    def linter_for(self, path: str) -> tuple[Linter, bool]:
        """The linter of ``path``'s settings, and whether the settings exclude the file."""
        s = self.workspace.for_path(path)
        linter = self._linters.get(id(s))
        if linter is None:
            from ..incremental import IncrementalParser

            linter = self._linters[id(s)] = Linter(s)
            # an edit re-parses the top-level statements it touched, the rest is the last tree's
            linter.module_parser = IncrementalParser()
        return linter, s.is_excluded(Path(path))

    def lint(self, path: str, text: str) -> FileResult:
        """Lint on the one analysis thread (its large stack is set up once, not per lint)."""
        return self._executor.submit(self._lint, path, text).result()

    def _lint(self, path: str, text: str) -> FileResult:
        linter, excluded = self.linter_for(path)
        if excluded:
            return FileResult(path)
        data = text.encode("utf-8", "surrogatepass")
        if path.endswith(".ipynb"):
            from ..notebook import check_notebook

            return check_notebook(linter, data, path)
        return linter.check_bytes(data, path, explicit=True)

    def fix_all(self, path: str, text: str) -> str | None:
        return self._executor.submit(self._fix_all, path, text).result()

    def _fix_all(self, path: str, text: str) -> str | None:
        """The text with every safe fix applied (None: nothing to fix, or a notebook)."""
        if path.endswith(".ipynb"):
            return None
        from ..engine import decode
        from ..fixer import fix_source

        linter, excluded = self.linter_for(path)
        if excluded:
            return None
        src = decode(text.encode("utf-8", "surrogatepass"))
        first = linter.check_source(src, path)
        fixed, _result, n = fix_source(linter, src, path, first, unsafe=False)
        return fixed if n and fixed != src.text else None


class AmplintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("amplint", __version__, text_document_sync_kind=T.TextDocumentSyncKind.Incremental)
        from ..engine import tune_gc

        tune_gc()  # the server keeps the models of a project: the collector need not re-scan them often
        self.engine = DocumentLinter()
        self.results: dict[str, tuple[int | None, list[Diagnostic], str]] = {}


def _lines(text: str) -> list[str]:
    lines = split_lines(text, keepends=True)
    if not lines or lines[-1].endswith(("\n", "\r")):
        lines.append("")
    return lines


def _position(ls: AmplintServer, lines: list[str], row: int, column: int) -> T.Position:
    """A 1-based (row, column in code points) as an LSP position in the negotiated encoding."""
    line = max(row - 1, 0)
    if line >= len(lines):
        return T.Position(line=len(lines), character=0)
    text = lines[line].rstrip("\r\n")
    units = ls.workspace.position_codec.client_num_units(text[: max(column - 1, 0)])
    return T.Position(line=line, character=units)


def _region(d: Diagnostic) -> tuple[tuple[int, int], tuple[int, int]]:
    return (d.location.row, d.location.column), (d.end_location.row, d.end_location.column)


def _notebook_region(text: str, d) -> tuple[tuple[int, int], tuple[int, int]]:
    from ..output.positions import NotebookMap

    try:
        nm = NotebookMap(text)
    except (ValueError, RecursionError):
        return (1, 1), (1, 1)
    a = nm.locate(d.cell, d.location.row, d.location.column) or (1, 1)
    b = nm.locate(d.cell, d.end_location.row, d.end_location.column) or a
    return a, max(a, b)


def _range(ls, lines, start, end) -> T.Range:
    return T.Range(start=_position(ls, lines, *start), end=_position(ls, lines, *end))


def _to_lsp(ls: AmplintServer, uri: str, text: str, d: Diagnostic, lines: list[str]) -> T.Diagnostic:
    start, end = _notebook_region(text, d) if d.cell is not None else _region(d)
    related = None
    if d.related:
        related = []
        for r in d.related:
            r_uri = uri if os.path.abspath(r.filename) == os.path.abspath(uri_to_path(uri)) else Path(
                os.path.abspath(r.filename)).as_uri()
            r_lines = lines if r_uri == uri else [""]
            related.append(T.DiagnosticRelatedInformation(
                location=T.Location(uri=r_uri, range=_range(ls, r_lines, (r.location.row, r.location.column),
                                                             (r.end_location.row, r.end_location.column))),
                message=r.message))
    message = d.message if d.cell is None else f"cell {d.cell}: {d.message}"
    return T.Diagnostic(
        range=_range(ls, lines, start, end),
        message=message,
        severity=T.DiagnosticSeverity.Information if d.severity == "info" else T.DiagnosticSeverity.Error,
        code=d.code,
        code_description=T.CodeDescription(href=d.url) if d.url else None,
        source=SOURCE,
        related_information=related,
        data={"code": d.code, "row": d.location.row, "column": d.location.column, "cell": d.cell},
    )


def _lint_and_publish(ls: AmplintServer, uri: str) -> None:
    doc = ls.workspace.get_text_document(uri)
    path = uri_to_path(uri)
    if not path.endswith((".py", ".pyi", ".ipynb")):
        return
    text = doc.source
    try:
        result = ls.engine.lint(path, text)
    except Exception as e:  # noqa: BLE001 - never take the editor's server down
        logging.exception("amplint: linting %s failed", path)
        ls.window_log_message(T.LogMessageParams(type=T.MessageType.Error, message=f"amplint: {path}: {e}"))
        return
    for err in result.errors:
        ls.window_log_message(T.LogMessageParams(type=T.MessageType.Error, message=f"amplint: {err}"))
    ls.results[uri] = (doc.version, result.diagnostics, text)
    lines = _lines(text)
    ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
        uri=uri, version=doc.version, diagnostics=[_to_lsp(ls, uri, text, d, lines) for d in result.diagnostics]))


def _edit_range(ls, lines, e) -> T.Range:
    return _range(ls, lines, (e.location.row, e.location.column), (e.end_location.row, e.end_location.column))


def _noqa_edit(lines: list[str], row: int, code: str) -> tuple[int, int, int, str] | None:
    """(row, start column, end column, new text) that adds ``code`` to the line's noqa."""
    from ..noqa import LINE_NOQA

    if row - 1 >= len(lines):
        return None
    body = lines[row - 1].rstrip("\r\n")
    if body.rstrip().endswith("\\"):
        return None
    m = LINE_NOQA.search(body)
    if m is not None:
        if m.group("codes") is None:
            return None
        existing = [c.strip() for c in m.group("codes").replace(",", " ").split()]
        if code in existing:
            return None
        return row, m.start() + 1, m.end() + 1, "# noqa: " + ", ".join(existing + [code])
    stripped = body.rstrip()
    return row, len(stripped) + 1, len(body) + 1, f"  # noqa: {code}"


def _code_actions(ls: AmplintServer, params: T.CodeActionParams) -> list[T.CodeAction]:
    uri = params.text_document.uri
    entry = ls.results.get(uri)
    if entry is None:
        return []
    _version, diags, text = entry
    doc = ls.workspace.get_text_document(uri)
    if doc.source != text:
        _lint_and_publish(ls, uri)
        entry = ls.results.get(uri)
        if entry is None:
            return []
        _version, diags, text = entry
    lines = _lines(text)
    only = params.context.only
    wanted = {(x.data or {}).get("code"): x for x in params.context.diagnostics} if params.context.diagnostics else {}
    actions: list[T.CodeAction] = []
    path = uri_to_path(uri)

    def kind_ok(kind: str) -> bool:
        return not only or any(kind == k or kind.startswith(k + ".") for k in only)

    for d in diags:
        if d.cell is not None:
            continue  # cells are not lines of the JSON document
        start, end = _region(d)
        rng = _range(ls, lines, start, end)
        if not _overlaps(rng, params.range):
            continue
        lsp_diag = None
        for x in params.context.diagnostics:
            if (x.data or {}).get("code") == d.code and x.range == rng:
                lsp_diag = x
        if lsp_diag is None and wanted.get(d.code) is not None:
            lsp_diag = wanted[d.code]
        if d.fix is not None and kind_ok(T.CodeActionKind.QuickFix):
            edits = [T.TextEdit(range=_edit_range(ls, lines, e), new_text=e.content) for e in d.fix.edits]
            unsafe = d.fix.applicability != "safe"
            actions.append(T.CodeAction(
                title=f"{d.code}: {d.fix.message}" + (" (unsafe fix)" if unsafe else ""),
                kind=T.CodeActionKind.QuickFix,
                diagnostics=[lsp_diag] if lsp_diag is not None else None,
                is_preferred=not unsafe,
                edit=T.WorkspaceEdit(changes={uri: edits}),
            ))
        if d.noqa_row is not None and d.code != "AMP000" and kind_ok(T.CodeActionKind.QuickFix):
            hit = _noqa_edit(lines, d.noqa_row, d.code)
            if hit is not None:
                row, c0, c1, new = hit
                actions.append(T.CodeAction(
                    title=f"Disable {d.code} for this line",
                    kind=T.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag] if lsp_diag is not None else None,
                    edit=T.WorkspaceEdit(changes={uri: [T.TextEdit(range=_range(ls, lines, (row, c0), (row, c1)),
                                                                   new_text=new)]}),
                ))
    if kind_ok(FIX_ALL) and any(d.fix is not None and d.fix.applicability == "safe" for d in diags):
        fixed = ls.engine.fix_all(path, text)
        if fixed is not None:
            end = T.Position(line=len(lines), character=0)
            actions.append(T.CodeAction(
                title="amplint: fix all safe fixes",
                kind=FIX_ALL,
                edit=T.WorkspaceEdit(changes={uri: [T.TextEdit(range=T.Range(start=T.Position(line=0, character=0),
                                                                             end=end), new_text=fixed)]}),
            ))
    return actions


def _overlaps(a: T.Range, b: T.Range) -> bool:
    def key(p: T.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def build_server() -> AmplintServer:
    ls = AmplintServer()

    @ls.feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: AmplintServer, params: T.DidOpenTextDocumentParams) -> None:
        _lint_and_publish(ls, params.text_document.uri)

    @ls.feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: AmplintServer, params: T.DidChangeTextDocumentParams) -> None:
        _lint_and_publish(ls, params.text_document.uri)

    @ls.feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: AmplintServer, params: T.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if os.path.basename(uri_to_path(uri)) in CONFIG_NAMES:
            ls.engine.reload()
            for open_uri in list(ls.results):
                _lint_and_publish(ls, open_uri)
            return
        ls.engine.files_changed()  # a saved module can change what its importers' analyses see
        _lint_and_publish(ls, uri)

    @ls.feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: AmplintServer, params: T.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.results.pop(uri, None)
        ls.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @ls.feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: AmplintServer, params: T.DidChangeWatchedFilesParams) -> None:
        ls.engine.files_changed()
        if any(os.path.basename(uri_to_path(c.uri)) in CONFIG_NAMES for c in params.changes):
            ls.engine.reload()
            for open_uri in list(ls.results):
                _lint_and_publish(ls, open_uri)

    @ls.feature(T.TEXT_DOCUMENT_CODE_ACTION,
                T.CodeActionOptions(code_action_kinds=[T.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False))
    def code_action(ls: AmplintServer, params: T.CodeActionParams):
        return _code_actions(ls, params)

    return ls


def serve(log_file: str | None = None) -> None:
    if log_file:
        logging.basicConfig(filename=log_file, level=logging.INFO)
    build_server().start_io()
