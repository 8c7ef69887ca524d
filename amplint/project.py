"""The project a file belongs to: its modules by name, the imports between them, and their models.

A project is the tree under a root: the nearest ancestor of the file with a ``pyproject.toml``,
``setup.cfg``, ``setup.py`` or ``.git`` (without one, the folder above the outermost package
holding the file, else the file's own folder). Modules are
named from the root, a ``src/`` layout included (``src/pkg/mod.py`` is ``pkg.mod``); packages
without ``__init__.py`` (namespace packages) count. Third-party and torch modules are never read.

What a file's analysis may involve is fixed by the project, not by the command line:

- the modules it imports (``import a.b as c``, ``from . import x``, ``from .utils import f``,
  re-exports through ``__init__.py``), read when the flow reaches a call into them;
- the modules that import it (up to :data:`MAX_IMPORTER_DEPTH` levels), whose code may call it
  with a scaler: their training code is analysed too, and what it shows in this file is this
  file's.

So a file linted alone, with its package or with the whole tree gets the same findings. Models
are built once per (path, size, mtime) per process and shared by every file's analysis.
"""

from __future__ import annotations

import functools
import os
import re
import stat
from pathlib import Path
from typing import Iterator

from . import torch_api as T

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
_SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "env", "__pycache__", "node_modules", "build", "dist",
                        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".amplint_cache", "site-packages",
                        ".eggs", "wandb", "outputs", "runs", "lightning_logs"})
#: how many levels of importing modules a file's analysis includes
MAX_IMPORTER_DEPTH = 2
#: the most importing modules whose flows one module's findings read (a utility imported all over
#: a big tree would otherwise pull every flow of it into each of its analyses)
MAX_IMPORTER_FLOWS = 8
#: files larger than this are not read as project modules (the linter's own limit applies to linted files)
MAX_MODULE_BYTES = 2_000_000
#: the most project files scanned for importers (bigger trees: importers are not looked for)
MAX_SCAN_FILES = 20_000
#: how many projects' models a process keeps (:meth:`ModelCache.use_root`)
KEEP_PROJECTS = 2
_IMPORT_LINE = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+([^\n#]+)|import[ \t]+([^\n#]+))", re.M)


def _import_lines(data: bytes) -> Iterator[tuple[str | None, list[tuple[str, str]]]]:
    """The import lines of a module's text: (the module of ``from M import ...``, or None for
    ``import ...``; [(name, alias or "")]), read without parsing."""
    for m in _IMPORT_LINE.finditer(data):
        if m.group(1) is not None:
            base: str | None = m.group(1).decode("ascii", "replace")
            names = m.group(2).decode("ascii", "replace").strip().strip("()\\")
        else:
            base, names = None, m.group(3).decode("ascii", "replace")
        pairs = []
        for n in names.split(","):
            name, _, alias = n.strip().partition(" as ")
            pairs.append((name.strip(), alias.strip()))
        yield base, pairs


#: code that can take part in the protocol: a module without any of these cannot hand a scaler on
PROTOCOL_EVIDENCE = re.compile(T.SCALER_EVIDENCE + rb"|clip_grad|\.grad\b|backward|zero_grad|\.half\(|float16|torch\.save")
#: :data:`PROTOCOL_EVIDENCE` as substrings, and the checks behind the substrings that are not enough
_LITERAL_EVIDENCE = (b"clip_grad", b"backward", b"zero_grad", b".half(", b"float16", b"torch.save", b"GradScaler")
_GRAD_ATTR = re.compile(rb"\.grad\b")
_UNSCALE_CALL = re.compile(rb"\.\s*unscale_\s*\(")
_SCALER_METHOD = re.compile(rb"[Ss][Cc][Aa][Ll][Ee][Rr]\w*\s*\.\s*(?:scale|step|update|unscale_)\b")


def has_protocol_evidence(data: bytes) -> bool:
    """``PROTOCOL_EVIDENCE.search(data)``, answered by substring searches first (one regex of
    many alternatives scans every position; the corpus has 3.4 M lines)."""
    if any(lit in data for lit in _LITERAL_EVIDENCE):
        return True
    if b".grad" in data and _GRAD_ATTR.search(data):
        return True
    if b"unscale_" in data and _UNSCALE_CALL.search(data):
        return True
    return b"scaler" in data.lower() and bool(_SCALER_METHOD.search(data))


def reachable_evidence(data: bytes) -> bool:
    """What makes a file worth analysing when a training module imports it: protocol evidence
    (:func:`has_protocol_evidence`), or a binary cross-entropy (a loss function called under
    autocast there)."""
    return has_protocol_evidence(data) or b"binary_cross_entropy" in data or b"BCELoss" in data


#: GradScaler code, not a mention: a constructor call, an ``unscale_`` call, a protocol method
#: called on a scaler-named receiver (read with comments removed)
_SCALER = re.compile(
    rb"\b(?:" + b"|".join(n.encode() for n in sorted(T.SCALER_CLASS_NAMES)) + rb")\s*\("
    rb"|\.\s*unscale_\s*\(|[Ss][Cc][Aa][Ll][Ee][Rr]\w*\s*\.\s*(?:scale|step|update|unscale_)\s*\(")
_COMMENT = re.compile(rb"#[^\n]*")


#: bases that bring no protocol (builtins and typing helpers): a class with only these is read
#: from its own block
_PLAIN_BASES = frozenset(b"object ABC abc.ABC Enum enum.Enum str int dict list tuple NamedTuple TypedDict Protocol "
                         b"Generic typing.Generic Exception".split())


def _class_bases(text: bytes, pos: int) -> tuple[list[bytes], int]:
    """The base expressions of a ``class`` header whose name ends at ``pos`` (keywords such as
    ``metaclass=`` left out, subscripts reduced to their head) and where the header ends."""
    i = pos
    while i < len(text) and text[i:i + 1] in b" \t":
        i += 1
    if text[i:i + 1] != b"(":
        return [], i
    depth, j = 0, i
    while j < len(text):
        c = text[j:j + 1]
        if c in b"([{":
            depth += 1
        elif c in b")]}":
            depth -= 1
            if depth == 0:
                break
        j += 1
    inner = re.sub(rb"\[[^\]]*\]|#[^\n]*", b"", text[i + 1:j])
    out = []
    for part in inner.split(b","):
        part = part.strip()
        if part and b"=" not in part and re.fullmatch(rb"[A-Za-z_][\w.]*", part):
            out.append(part)
        elif part and b"=" not in part:
            out.append(b"?")  # a call or an expression: not placed from the text
    return out, j + 1


def has_scaler_code(data: bytes) -> bool:
    """``_SCALER`` matches ``data`` without its comments; a text with neither ``unscale_`` nor
    the word scaler in any case cannot match (checked first: the regex scans every position)."""
    if b"unscale_" not in data and b"scaler" not in data.lower():
        return False
    return bool(_SCALER.search(_COMMENT.sub(b"", data)))

#: a block that hands a scaler on (``Engine(model, opt, scaler)``, ``self.grad_scaler = scaler``):
#: the object it builds, or the call it makes, can take part in the protocol
_HANDS_SCALER = re.compile(rb"\b\w*[Ss][Cc][Aa][Ll][Ee][Rr]\b")
_CLASS = re.compile(rb"^[ \t]*class[ \t]+\w+", re.M)
#: a line that ends a top-level block: code at column 0, not a bracket closing a header that the
#: formatter wrapped (``def f(\n    a,\n) -> None:`` closes its parentheses at column 0)
_TOP_LEVEL_LINE = re.compile(rb"^[^ \t\r\n#)\]}]", re.M)
#: what a module must show for its functions and classes to matter to another module's flow:
#: protocol evidence, an optimizer step (a helper stepping past the scaler), an autocast region,
#: an optimizer's constructor (a builder whose optimizer holds a model converted to fp16), a
#: binary cross-entropy (a loss module called under another module's autocast), a hook called by
#: name (a callback handler's ``getattr(cb, event)(trainer)``)
_LINK_EVIDENCE = re.compile(PROTOCOL_EVIDENCE.pattern + rb"|\.\s*step\s*\(|autocast|custom_fwd|custom_bwd"
                            rb"|\boptim\.[A-Z]\w*\s*\(|binary_cross_entropy|BCELoss|\bgetattr\([^()]*\)\s*\(")


def _dispatchers(model) -> list:
    """Functions that call hooks by name (a callback handler's ``getattr(cb, event)(trainer)``):
    an importer that runs them runs this module's hook classes too."""
    from .model.names import calls_by_name

    return list({c.func: None for c in model.calls if calls_by_name(c.node)})


def find_root(path: Path) -> Path:
    """The nearest ancestor with a project marker; without one, the folder above the outermost
    package (``__init__.py``) holding the file, else the file's own folder, or an ancestor of
    either where the imports of that folder resolve better (:func:`_import_anchor`). Decided per
    folder: every file of a folder has the same root."""
    start = path.parent if path.suffix else path
    return _root_of(start.resolve())


@functools.lru_cache(maxsize=4096)
def _root_of(p: Path) -> Path:
    for d in (p, *p.parents):
        if any((d / m).exists() for m in ROOT_MARKERS):
            return d
    top = p
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    return _import_anchor(p, top)


_MAX_SIBLINGS = 16  # the modules of a folder read to find its root
_ANCHOR_BYTES = 8192  # of each: imports sit at the top
_MAX_ANCHOR_IMPORTS = 32


def _import_anchor(folder: Path, top: Path, levels: int = 4) -> Path:
    """Without a marker, a repository of namespace packages (``utils/commons/trainer.py``
    importing ``utils.commons.base_task``, no ``__init__.py``) is rooted where the absolute
    imports of the file and of the modules beside it resolve (every file of a folder gets the
    same root): the ancestor (up to ``levels`` above the package root) under which most of them
    are files or folders; the package root when none does better."""
    mods: set[str] = set()
    try:
        # regular files only: a FIFO or a device named *.py is never opened (it would block)
        siblings = sorted(e.path for e in os.scandir(folder) if e.name.endswith(".py") and e.is_file())[:_MAX_SIBLINGS]
    except OSError:
        return top
    for f in siblings:
        data = _head_of(f)
        for base, pairs in _import_lines(data):
            if base is None:
                mods.update(name for name, _a in pairs if "." in name)
            elif "." in base and not base.startswith("."):
                mods.add(base)  # a dotted import names folders the root must hold
    if not mods:
        return top
    mods = set(sorted(mods)[:_MAX_ANCHOR_IMPORTS])
    best, score = top, 0
    for d in [top, *list(top.parents)[:levels]]:
        n = sum(1 for m in mods if _module_exists(d, m.split(".")))
        if n > score:
            best, score = d, n
    return best


def _head_of(path: str) -> bytes:
    """The first bytes of a regular file; nothing for anything else (opened without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return b""
    try:
        return os.read(fd, _ANCHOR_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    except OSError:
        return b""
    finally:
        os.close(fd)


def _module_exists(root: Path, parts: list[str]) -> bool:
    """``a.b.c`` is a module, a package, or a name in a module under ``root``."""
    for k in (len(parts), len(parts) - 1):
        if k < 1:
            continue
        folder = os.path.join(str(root), *parts[:k - 1])
        files, dirs = _entries(folder)
        name = parts[k - 1]
        if name + ".py" in files:
            return True
        if name in dirs and (k == len(parts) or "__init__.py" in _entries(os.path.join(folder, name))[0]):
            return True
    return False


@functools.lru_cache(maxsize=4096)
def _entries(folder: str) -> tuple[frozenset[str], frozenset[str]]:
    """The names of the regular files and of the folders in ``folder`` (one ``scandir``, no
    ``stat`` per name where the file system gives the type); empty when it cannot be read."""
    files, dirs = set(), set()
    try:
        with os.scandir(folder) as it:
            for e in it:
                try:
                    if e.is_file():
                        files.add(e.name)
                    elif e.is_dir():
                        dirs.add(e.name)
                except OSError:
                    continue
    except OSError:
        pass
    return frozenset(files), frozenset(dirs)


class Project:
    """One project's module index (built lazily, cached per root for the process)."""

    _by_root: dict[Path, "Project"] = {}

    def __init__(self, root: Path) -> None:
        self.root = root
        self._files: list[Path] | None = None
        self._names: dict[Path, str | None] = {}
        self._paths: dict[str, Path] = {}
        self._imports: dict[Path, set[str]] = {}
        self._bytes: dict[Path, bytes | None] = {}
        self._protocol: list[Path] | None = None
        self._scaler: list[Path] | None = None
        self._reached: dict[Path, bool] = {}
        self._linkable: dict[Path, bool] = {}
        self._matter: dict[tuple[Path, str], bool] = {}
        self._imported: dict[tuple[Path, int], list[Path]] = {}
        self._sources: dict[str, Path | None] = {}
        self._importers: dict[tuple[Path, int], list[Path]] = {}
        self._by_import: dict[str, list[Path]] | None = None
        self._rel: dict[str, Path] | None = None
        self._import_names: dict[Path, dict[str, str]] = {}
        self._walked: list[tuple[str, Path]] = []

    @classmethod
    def forget(cls) -> None:
        """Drop every project index (a new run, or files changed under a long-lived server)."""
        cls._by_root.clear()
        _root_of.cache_clear()
        _entries.cache_clear()

    @classmethod
    def for_path(cls, path: str | Path) -> "Project":
        root = find_root(Path(path))
        hit = cls._by_root.get(root)
        if hit is None:
            hit = cls._by_root[root] = Project(root)
        return hit

    # --- names -------------------------------------------------------------------------------------

    def module_name(self, path: Path) -> str | None:
        if path in self._names:
            return self._names[path]
        given = path
        path = path.resolve()
        name = self._module_name(path)
        self._names[given] = self._names[path] = name
        return name

    def _module_name(self, path: Path) -> str | None:
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return None
        parts = list(rel.with_suffix("").parts)
        if parts and parts[0] == "src" and len(parts) > 1:
            parts = parts[1:]
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or not all(p.isidentifier() for p in parts):
            return None
        return ".".join(parts)

    def is_package(self, path: Path) -> bool:
        return path.name == "__init__.py"

    def path_of(self, module: str) -> Path | None:
        """The file of a project module (``pkg/mod.py`` or ``pkg/mod/__init__.py``), if any."""
        if module in self._paths:
            return self._paths[module]
        parts = module.split(".")
        if not all(p.isidentifier() for p in parts):
            self._paths[module] = None
            return None  # not a module name (a regex match in a string, a truncated import)
        rel = Path(*parts)
        out = None
        known = self._relative_files() if not any(p in _SKIP_DIRS or p.startswith(".") for p in parts) else None
        for base in ("", "src/"):
            for cand in (f"{base}{rel.as_posix()}.py", f"{base}{rel.as_posix()}/__init__.py"):
                if known is not None:  # the walk saw every such file: no stat needed
                    out = known.get(cand)
                elif (self.root / cand).is_file():
                    out = (self.root / cand).resolve()
                if out is not None:
                    break
            if out is not None:
                break
        self._paths[module] = out
        return out

    def _relative_files(self) -> dict[str, Path] | None:
        """Root-relative POSIX path -> resolved path of every file of :meth:`files`; None when
        the walk stopped early or passed a linked folder (then files are looked up on disk)."""
        if self._rel is None:
            self.files()
            self._rel = dict(self._walked)
        return self._rel or None

    def absolute(self, importer: Path, qual: str) -> str | None:
        """``qual`` as written in ``importer`` (``.utils.step``, ``..pkg.x``) made absolute. A
        name no top-level module of the project has may be a module beside the importer (a
        script run as ``python tools/train.py`` imports ``engine`` from ``tools/``)."""
        if not qual.startswith("."):
            head = qual.split(".", 1)[0]
            if self.path_of(head) is None:
                name = self.module_name(importer)
                if name is not None and "." in name:
                    beside = name.rsplit(".", 1)[0] + "." + head
                    if self.path_of(beside) is not None:
                        return name.rsplit(".", 1)[0] + "." + qual
            return qual
        name = self.module_name(importer)
        if name is None:
            return None
        dots = len(qual) - len(qual.lstrip("."))
        package = name.split(".") if self.is_package(importer) else name.split(".")[:-1]
        if dots - 1 > len(package):
            return None
        base = package[: len(package) - (dots - 1)]
        rest = qual[dots:]
        return ".".join(base + ([rest] if rest else []))

    def split(self, qual: str) -> tuple[Path, str] | None:
        """``pkg.mod.Class.method`` -> (the file of ``pkg.mod``, ``Class.method``): the longest
        prefix that is a project module."""
        parts = qual.split(".")
        for i in range(len(parts), 0, -1):
            path = self.path_of(".".join(parts[:i]))
            if path is not None:
                return path, ".".join(parts[i:])
        return None

    # --- files and imports -----------------------------------------------------------------------

    def files(self) -> list[Path]:
        if self._files is None:
            out: list[Path] = []
            walked: list[tuple[str, Path]] = []
            linked = False
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
                if any(os.path.islink(os.path.join(dirpath, d)) for d in dirnames):
                    linked = True  # the walk does not enter it, a lookup on disk does
                rel_dir = os.path.relpath(dirpath, self.root).replace(os.sep, "/")
                for f in sorted(filenames):
                    if f.endswith(".py"):
                        out.append(Path(dirpath, f).resolve())
                        walked.append((f if rel_dir == "." else f"{rel_dir}/{f}", out[-1]))
                if len(out) > MAX_SCAN_FILES:
                    out = []
                    walked = []
                    break
            self._files = out
            self._walked = [] if linked else walked
        return self._files

    def protocol_files(self) -> list[Path]:
        """Project files that can take part in the protocol (or re-export what does: packages'
        ``__init__.py``); the others are never looked at again."""
        if self._protocol is None:
            out = []
            for f in self.files():
                data = self.read(f, keep=False)
                if data is not None and (f.name == "__init__.py" or has_protocol_evidence(data)):
                    self._bytes[f] = data
                    out.append(f)
            self._protocol = out
        return self._protocol

    def scaler_files(self) -> list[Path]:
        """Project files with GradScaler evidence."""
        if self._scaler is None:
            self._scaler = [f for f in self.protocol_files() if has_scaler_code(self.read(f) or b"")]
        return self._scaler

    def reached_by_scaler_code(self, path: Path) -> bool:
        """A module with GradScaler code imports this one (a scaler may be handed to its code) or
        is imported by it (it builds an object owning a scaler, or calls a training helper); or
        this module defines classes and a training module is among the modules it imports
        (through :data:`MAX_IMPORTER_DEPTH` levels) or beside it in a subclass's bases: its
        classes may inherit (or be mixed into) a training step that uses one."""
        path = path.resolve()
        if path in self._reached:
            return self._reached[path]
        scaler = set(self.scaler_files())
        scaler.discard(path)
        if not scaler:
            self._reached[path] = False  # no training module in the project: nothing to index
            return False
        hit = bool(set(self.importers(path, depth=1)) & scaler) or bool(set(self.imported(path, depth=1)) & scaler)
        text = self.read(path) or b""
        if not hit and (_CLASS.search(text) or b".half(" in text or b"float16" in text):
            # a class, or a model builder converting to float16 whose result glue code hands to
            # a training module beside it
            near = set(self.imported(path))
            for f in self.importers(path, depth=1):
                near |= set(self.imported(f, depth=1))  # a sibling: the base class of the subclass using a mixin
            hit = bool(near & scaler)
        self._reached[path] = hit
        return hit

    def dependencies(self, path: Path) -> list[Path]:
        """The project files whose content decides whether a file is reached by a training
        module (:meth:`reached_by_scaler_code`): its importers and the modules it imports, and
        the modules its importers import (a mixin's siblings), those with protocol evidence, in
        a stable order. (An analysed file's findings depend on the files its analysis read:
        :meth:`ModelCache.dependencies`.)"""
        path = path.resolve()
        if not reachable_evidence(self.read(path, keep=False) or b"") or not self.protocol_files():
            return []  # never analysed, whatever the other modules hold
        near = set(self.importers(path, depth=1)) | set(self.imported(path))
        for f in self.importers(path, depth=1):
            near |= set(self.imported(f, depth=1))
        near.discard(path)
        protocol = set(self.protocol_files())
        return sorted(f for f in near if f in protocol)

    def linkable(self, path: Path) -> bool:
        """Another module's analysis reads this file's functions and classes: a package's
        ``__init__.py`` (its re-exports), or a module with protocol evidence, an optimizer step or
        an autocast region. The rest (CLI code, config classes, utilities) is never parsed."""
        hit = self._linkable.get(path)
        if hit is None:
            hit = self._linkable[path] = path.name == "__init__.py" or bool(_LINK_EVIDENCE.search(self.read(path) or b""))
        return hit

    def may_matter(self, path: Path, name: str) -> bool:
        """The top-level function or class ``name`` of ``path`` can take part in another module's
        protocol: read from the text alone, without parsing the module. A ``def``/``class`` block
        counts when it shows protocol evidence (or an optimizer step or autocast region), or, for
        a class, when a base may matter: a project class that does, or one the text cannot place
        (a base from outside the project, ``nn.Module``, brings nothing amplint reads); a name the
        text binds some other way (a re-export, an assignment) counts in a package ``__init__`` or
        a protocol file."""
        return self._matter_of(path, name)

    def _may_matter(self, path: Path, name: str) -> bool:
        text = self.read(path) or b""
        head = re.search(rb"^(?:async[ \t]+)?(def|class)[ \t]+" + re.escape(name.encode()) + rb"\b", text, re.M)
        if head is None:
            return self.linkable(path)  # bound some other way: a module with evidence, a package
        bases: list[bytes] = []
        end = head.end()
        if head.group(1) == b"class":
            bases, end = _class_bases(text, head.end())
        nxt = _TOP_LEVEL_LINE.search(text, end)
        body = text[end: nxt.start() if nxt is not None else len(text)]
        if _LINK_EVIDENCE.search(body) or _HANDS_SCALER.search(body):
            return True
        return any(self._base_may_matter(path, b) for b in bases)

    def _base_may_matter(self, path: Path, base: bytes) -> bool:
        """A base class (as written in ``path``) may bring the protocol: a project class that may
        matter, or one the text cannot place (a star import, a name bound by code). A class of a
        module outside the project (``nn.Module``, ``Dataset``) brings nothing amplint reads."""
        if base in _PLAIN_BASES:
            return False
        text = base.decode("ascii", "replace")
        head, _, rest = text.partition(".")
        if re.search(rb"^class[ \t]+" + re.escape(head.encode()) + rb"\b", self.read(path) or b"", re.M):
            return self._matter_of(path, head) if not rest else True
        qual = self.import_names(path).get(head)
        if qual is None:
            return True  # not placed from the text
        full = self.absolute(path, qual + ("." + rest if rest else ""))
        hit = self.split(full) if full is not None else None
        if hit is None:
            return False  # outside the project
        target, attr = hit
        if not attr or "." in attr:
            return True
        return self._matter_of(target, attr)

    def _matter_of(self, path: Path, name: str) -> bool:
        key = (path, name)
        if key not in self._matter:
            self._matter[key] = True  # inside a cycle of bases: every class of it matters
            self._matter[key] = self._may_matter(path, name)
        return self._matter[key]

    def import_names(self, path: Path) -> dict[str, str]:
        """Name -> what the module's import lines bind it to (``from .a import B as C``: C -> .a.B;
        ``import a.b as c``: c -> a.b; ``import a.b``: a -> a), read from the text."""
        hit = self._import_names.get(path)
        if hit is None:
            hit = self._import_names[path] = {}
            for base, pairs in _import_lines(self.read(path) or b""):
                for name, alias in pairs:
                    if base is not None:
                        alias = alias or name
                        if name.isidentifier() and alias.isidentifier():
                            hit[alias] = f"{base}.{name}" if not base.endswith(".") else base + name
                    elif alias:
                        hit[alias] = name
                    elif name:
                        hit[name.split(".", 1)[0]] = name.split(".", 1)[0]
        return hit

    def imported(self, path: Path, depth: int = MAX_IMPORTER_DEPTH) -> list[Path]:
        """The project files a file imports (through ``depth`` levels)."""
        key = (path, depth)
        hit = self._imported.get(key)
        if hit is None:
            hit = self._imported[key] = self._imported_uncached(path, depth)
        return hit

    def _imported_uncached(self, path: Path, depth: int) -> list[Path]:
        out: list[Path] = []
        frontier = [path]
        seen = {path}
        for _ in range(depth):
            nxt = []
            for f in frontier:
                for name in sorted(self.imports_of(f)):
                    target = self._source_module(name)
                    if target is not None and target not in seen:
                        seen.add(target)
                        out.append(target)
                        if target.name != "__init__.py":
                            nxt.append(target)  # a bare package import does not import its modules
            frontier = nxt
        return out

    def _source_module(self, name: str, hops: int = 0) -> Path | None:
        """The project file that defines what the dotted import ``name`` names: a name a package
        re-exports leads to the module it comes from."""
        if hops == 0:
            if name not in self._sources:
                self._sources[name] = self._source_module(name, 1)
            return self._sources[name]
        hit = self.split(name)
        if hit is None:
            return None
        path, attr = hit
        if path.name != "__init__.py" or not attr or hops > 4:
            return path
        head = attr.split(".", 1)[0]
        module = self.module_name(path)
        for entry in sorted(self.imports_of(path)):
            if entry.endswith("." + head) and entry != f"{module}.{head}":
                src = self._source_module(entry, hops + 1)
                if src is not None:
                    return src
        return path

    def read(self, path: Path, keep: bool = True) -> bytes | None:
        if path in self._bytes:
            return self._bytes[path]
        data = None
        try:
            if path.is_file() and path.stat().st_size <= MAX_MODULE_BYTES:
                data = path.read_bytes()
        except OSError:
            data = None
        if keep:
            self._bytes[path] = data
        return data

    def imports_of(self, path: Path) -> set[str]:
        """The absolute module names a file imports (and the modules of the names it imports)."""
        hit = self._imports.get(path)
        if hit is None:
            hit = self._imports[path] = self._parse_imports(path, self.read(path) or b"")
        return hit

    def _parse_imports(self, path: Path, data: bytes) -> set[str]:
        out: set[str] = set()
        for base, pairs in _import_lines(data):
            if base is None:
                out.update(name for name, _alias in pairs if name)
                continue
            full = self.absolute(path, base)
            if full is None:
                continue
            out.add(full)
            out.update(f"{full}.{name}" for name, _alias in pairs if name.isidentifier())
        return out

    def _index(self) -> dict[str, list[Path]]:
        """Imported module name -> the project files that import it (every file, read once)."""
        if self._by_import is None:
            index: dict[str, list[Path]] = {}
            for f in self.files():
                if f not in self._imports:
                    data = self.read(f, keep=False) or b""
                    self._imports[f] = self._parse_imports(f, data)
                for name in self._imports[f]:
                    index.setdefault(name, []).append(f)
            self._by_import = index
        return self._by_import

    def importers(self, path: Path, depth: int = MAX_IMPORTER_DEPTH) -> list[Path]:
        """Project files that import ``path`` (directly, through packages re-exporting its names,
        or through ``depth`` levels of importers), in a stable order. A package ``__init__`` only
        passes on the names it re-exports from the module: a file importing other names of the
        package (or the bare package, as ``import torch`` does) does not import the module."""
        path = path.resolve()
        hit = self._importers.get((path, depth))
        if hit is not None:
            return hit
        index = self._index()
        found: list[Path] = []
        # (file, the names of ``path`` it passes on: None for the whole module)
        frontier: list[tuple[Path, frozenset[str] | None]] = [(path, None)]
        seen = {path}
        level = 0
        while frontier and level < depth:
            nxt: list[tuple[Path, frozenset[str] | None]] = []
            for target, names in frontier:
                name = self.module_name(target)
                if name is None:
                    continue
                if names is None:
                    users = set(index.get(name, ()))
                else:
                    users = set()
                    for n in names:
                        users.update(index.get(f"{name}.{n}", ()))
                for f in sorted(users):
                    if f in seen:
                        continue
                    if f.name == "__init__.py":
                        passed = self._reexported(f, name, names, target)
                        if not passed:
                            continue
                        seen.add(f)
                        nxt.append((f, passed))
                    else:
                        seen.add(f)
                        nxt.append((f, None))
                        found.append(f)
            # a package's ``__init__`` re-exporting the module does not use up a level
            level += 0 if nxt and all(f.name == "__init__.py" for f, _n in nxt) else 1
            frontier = nxt
        self._importers[(path, depth)] = found
        return found

    def _reexported(self, init: Path, module: str, names: frozenset[str] | None, target: Path) -> frozenset[str]:
        """The names of ``module`` (limited to ``names``) that the package ``init`` imports,
        and so offers as its own; a star import offers every top-level name ``target`` defines."""
        imported = self.imports_of(init)
        prefix = module + "."
        out = {n[len(prefix):] for n in imported if n.startswith(prefix) and "." not in n[len(prefix):]}
        if re.search(rb"from[ \t]+[.\w]*\b" + re.escape(module.rsplit(".", 1)[-1].encode()) + rb"[ \t]+import[ \t]+\*",
                     self.read(init) or b""):
            out |= self._top_level_names(target)
        if names is not None:
            out &= names
        return frozenset(out)

    def _top_level_names(self, path: Path) -> set[str]:
        text = self.read(path) or b""
        return {m.group(1).decode() for m in re.finditer(rb"^(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", text, re.M)}

# --- models of project modules ------------------------------------------------------------------


class ModelCache:
    """AMP models of project modules, built on first use (one per path, size and mtime)."""

    def __init__(self, scaler_names=(), eval_patterns=()) -> None:
        self.scaler_names = tuple(scaler_names)
        self.eval_patterns = tuple(eval_patterns)
        self._models: dict[tuple, object] = {}
        self._texts: dict[tuple, str] = {}
        self._root_of: dict[tuple, Path] = {}
        self._recent: list[Path] = []  # project roots, most recently used last

    def use_root(self, root: Path) -> None:
        """A file of the project at ``root`` is analysed next: the models of projects not used
        in the last :data:`KEEP_PROJECTS` are dropped (a worker linting a monorepo's packages
        one after the other keeps few projects' trees in memory; results never depend on what
        is kept)."""
        if self._recent and self._recent[-1] == root:
            return
        if root in self._recent:
            self._recent.remove(root)
        self._recent.append(root)
        if len(self._recent) > KEEP_PROJECTS:
            del self._recent[0]
            keep = set(self._recent)
            for key in [k for k, r in self._root_of.items() if r not in keep]:
                self._models.pop(key, None)
                self._texts.pop(key, None)
                del self._root_of[key]

    def cached(self, path: Path, text: str):
        """The model already built for ``path``, if its source is ``text``."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        model = self._models.get(key)
        return model if model is not None and self._texts.get(key) == text else None

    def dependencies(self, model) -> list[list]:
        """``[path, size, mtime_ns]`` of every project file whose content ``model``'s findings
        read: the files its link consulted, and theirs, transitively (a flow computed for an
        earlier file and reused here brings the files that flow read). The identities are the
        versions the models were built from."""
        link = getattr(model, "project", None)
        if link is None:
            return []
        own = getattr(link, "path", None)
        seen: set[Path] = set()
        stack = list(link.consulted)
        by_path = {}
        for (p, size, mtime), m in self._models.items():
            by_path[p] = (size, mtime, m)
        out = []
        while stack:
            p = stack.pop()
            if p in seen or p == own:
                continue
            seen.add(p)
            hit = by_path.get(p)
            if hit is None:
                try:
                    st = p.stat()
                except OSError:
                    continue
                out.append([str(p), st.st_size, st.st_mtime_ns])  # read as text only
                continue
            size, mtime, m = hit
            out.append([str(p), size, mtime])
            sub = getattr(m, "project", None) if m is not None else None
            if sub is not None:
                stack.extend(sub.consulted)
        return sorted(out)

    def register(self, path: Path, model, text: str, root: Path | None = None) -> None:
        """The linted file's own model (built from ``text``): the one its importers' analysis
        must reach too."""
        try:
            st = path.stat()
        except OSError:
            return
        self._models[(path, st.st_size, st.st_mtime_ns)] = model
        self._texts[(path, st.st_size, st.st_mtime_ns)] = text
        if root is not None:
            self._root_of[(path, st.st_size, st.st_mtime_ns)] = root

    def model(self, project: Project, path: Path, module=None):
        """The model of ``path`` (``module``: its LibCST tree, when the caller has it), or None
        when it cannot be read or parsed."""
        try:
            st = path.stat()
        except OSError:
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        if key in self._models:
            return self._models[key]
        self._models[key] = None  # a cycle while building: nothing
        self._root_of[key] = project.root
        model = None
        text = None
        skipped: list = []
        if module is None:
            data = project.read(path)
            text, parsed = _parse(data) if data is not None else (None, None)
            module, skipped = parsed if parsed is not None else (None, [])
        if module is not None:
            self._texts[key] = text if text is not None else module.code
            from .model import AmpModel

            model = AmpModel(module, scaler_names=self.scaler_names, eval_patterns=self.eval_patterns,
                             link=ProjectLink(project, self, path), path=path)
            model.skipped = skipped
        self._models[key] = model
        return model


def _parse(data: bytes):
    import libcst as cst

    from .cstparse import parse_around_limits
    from .engine import DecodeError, decode
    from .literals import blank_large_literals, fold_identifiers

    try:
        text = decode(data).text
        tree = compile(text, "<module>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST: CPython accepts it
        return text, parse_around_limits(fold_identifiers(blank_large_literals(text, tree)[0])[0], tree)  # as a linted file's
    except (DecodeError, SyntaxError, ValueError, RecursionError, MemoryError, cst.ParserSyntaxError):
        return None, None


class ProjectLink:
    """What one module's model sees of the project: other modules' functions and classes by the
    names its imports give them, and the modules that import it."""

    def __init__(self, project: Project, cache: ModelCache, path: Path) -> None:
        self.project = project
        self.cache = cache
        self.path = path
        self._symbols: dict[tuple[str, int], object] = {}
        #: the project files this module's analysis read (their models or their text)
        self.consulted: set[Path] = set()
        self._importer_models: dict[object, list] = {}

    def name_imported(self, name: str) -> bool:
        """Another project module imports ``name`` from this one (``from train import scaler``)."""
        mod = self.project.module_name(self.path)
        if mod is None:
            return False
        want = f"{mod}.{name}"
        return any(want in self.project.imports_of(p) for p in self.project.importers(self.path, depth=1))

    def star_names(self, module: str) -> frozenset[str]:
        """The top-level functions and classes of the project module ``module`` (as this module
        writes it: ``engine``, ``.utils``) that ``from module import *`` binds; none outside
        the project."""
        full = self.project.absolute(self.path, module)
        path = self.project.path_of(full) if full is not None else None
        if path is None or path == self.path.resolve():
            return frozenset()
        self.consulted.add(path)
        return frozenset(n for n in self.project._top_level_names(path) if not n.startswith("_"))

    def symbol(self, qual: str, depth: int = 0, gated: bool = True):
        """``(model, FunctionInfo | ClassInfo)`` for a dotted name as this module's imports
        qualify it (relative or absolute), following re-exports; None outside the project. A
        definition whose text shows nothing another module's protocol reads is left unread
        unless ``gated`` is False (a configuration class whose field defaults a rule reads)."""
        if depth > 4 or qual is None:
            return None
        key = (qual, depth, gated)
        if key not in self._symbols:
            self._symbols[key] = self._symbol(qual, depth, gated)
        return self._symbols[key]

    def _symbol(self, qual: str, depth: int, gated: bool = True):
        full = self.project.absolute(self.path, qual)
        if full is None or full.split(".", 1)[0] in ("torch", "typing", "numpy"):
            return None
        hit = self.project.split(full)
        if hit is None:
            return None
        path, attr = hit
        self.consulted.add(path)  # read (its text at least): a change to it can change this module's facts
        if not attr or gated and not self.project.may_matter(path, attr.partition(".")[0]):
            return None
        model = self.cache.model(self.project, path)
        if model is None:
            return None
        head, _, rest = attr.partition(".")
        obj = model.top.local_defs.get(head) or next((c for c in model.classes if c.name == head and c.parent is None), None)
        if obj is None:
            # a re-export (``from .trainer import Trainer`` in ``__init__.py``): follow its import
            q = model.imports.names.get(head)
            if q is None:
                return None
            return model.project.symbol(q + ("." + rest if rest else ""), depth + 1, gated)
        if rest:
            if hasattr(obj, "methods"):
                m = obj.methods.get(rest)
                return (model, m) if m is not None else None
            return None
        return model, obj

    def calls_scaler_code(self) -> bool:
        """This module imports (through two levels) a project module with GradScaler code."""
        scaler = set(self.project.scaler_files())
        return any(p in scaler for p in self.project.imported(self.path))

    def importer_models(self, model=None) -> list:
        """Models of the importing modules whose code can show something in this one: those
        holding GradScaler code (they hand it a scaler, call its helpers from a training step,
        build its model for one), and, given this module's ``model``, the modules in between that
        use its protocol code (a runner passing the scaler on) and those subclassing one of its
        classes with protocol code (the base's template method runs their hooks). At most
        :data:`MAX_IMPORTER_FLOWS`, training modules first, then the nearest."""
        key = id(model) if model is not None else None
        hit = self._importer_models.get(key)
        if hit is None:
            self._importer_models[key] = []  # (an import cycle asking for itself: none yet)
            hit = self._importers_of(model)
            if model is not None:
                hit += [d for d in self._drivers_of(model, hit) if d not in hit][:max(0, MAX_IMPORTER_FLOWS - len(hit))]
            self._importer_models[key] = hit
        return hit

    def _drivers_of(self, model, importers: list) -> list:
        """The modules that drive an importer training with this module's protocol code from
        outside (``trainer.train_step(batch)`` in the loop of ``train.py``, where the trainer's
        method steps through this module's ``amp_step`` helper): between two of its calls the
        loop decides what runs, so their flows show it here too."""
        out = []
        for m in importers:
            link = getattr(m, "project", None)
            if link is None or link is self or not m.driven_from_outside():
                continue
            out += [d for d in link.importer_models(m) if d is not model and d not in out]
        return out

    def _importers_of(self, model) -> list:
        scaler = set(self.project.scaler_files())
        bases = uses = None
        if model is not None:
            names = set()
            for f in model.relevant_functions() + model.fp16_builders() + model.checkpoint_savers() + _dispatchers(model):
                cls = f.cls
                while cls is not None and cls.parent is not None:
                    cls = cls.parent
                if cls is not None:
                    names.add(cls.name)
                elif f.parent is not None and f.parent.parent is None and f is not model.top:
                    names.add(f.name)
            if names:
                alt = b"|".join(re.escape(n).encode() for n in sorted(names))
                uses = re.compile(rb"\b(?:" + alt + rb")\b")
                bases = re.compile(rb"^[ \t]*class[ \t]+\w+[ \t]*\([^)]*\b(?:" + alt + rb")\b", re.M)
        # a module holding its own GradScaler code whose stepping method has no loop and no
        # caller in it (a learner class that builds, steps and updates its scaler): the importer
        # that only drives it (``for b in q: learner.update(b)``) decides how often it runs
        own = self.path.resolve() in scaler and model is not None and model.driven_from_outside()
        scaler.discard(self.path.resolve())  # its own scaler code is seen in its own flow
        out = []
        direct = set(self.project.importers(self.path, depth=1)) if uses is not None else set()
        for p in self.project.importers(self.path):
            if p in scaler:
                # a training module importing this one that names none of its protocol
                # functions or classes cannot hand them a scaler or run them in its steps (one
                # importing it through others, a runner's module, can)
                if p in direct and not uses.search(self.project.read(p) or b""):  # type: ignore[union-attr]
                    continue
            else:
                # not itself a training module: it counts when it subclasses one of this module's
                # protocol classes (the base's template method runs its hooks), or when it uses
                # this module's protocol code and a training module imports it (a runner handing
                # the scaler on through a call the training module's flow cannot follow)
                text = self.project.read(p) or b""
                if not (bases is not None and bases.search(text)) and not (
                        uses is not None and uses.search(text)
                        and (own or any(q in scaler for q in self.project.importers(p, depth=1)
                                        + self.project.imported(p, depth=1)))):
                    continue
            out.append(p)
        out.sort(key=lambda p: p not in scaler)  # stable: training modules first, each nearest first
        models = []
        for p in out[:MAX_IMPORTER_FLOWS]:
            self.consulted.add(p)
            m = self.cache.model(self.project, p)
            if m is not None:
                models.append(m)
        return models
