"""Settings: the nearest configuration file of each linted file, overridden by the command line.

A file's settings come from the configuration nearest to it, looking upwards from its folder:
``.amplint.toml``, ``amplint.toml`` (the whole file is the table) or a ``pyproject.toml`` with a
``[tool.amplint]`` table, in that order of precedence within one folder. A configuration may
``extend = "../pyproject.toml"`` another (its settings override the extended file's; relative
paths and patterns of each file are read relative to that file's folder). ``--config FILE``
uses one file for every linted file; ``--isolated`` uses none. The command line wins over
every file: ``--config KEY=VALUE`` replaces that key of the nearest file (as if written there),
then the dedicated options (``--select``...) apply.
Rule selection is resolved layer by layer, like ruff's: each layer (extended file, file,
``--config KEY=VALUE``, command line) that sets ``select`` starts again from it; a layer that
only sets ``extend-select`` / ``ignore`` adjusts what the layers before it selected; within one
layer the most specific selector wins and, on a tie, ``ignore``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterable

from ._record import Factory, Record

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_EXCLUDE = (
    ".amplint_cache",
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
)

DEFAULT_EVAL_PATTERNS = (
    "validate",
    "validate_*",
    "*_validate",
    "validation",
    "validation_*",
    "*_validation",
    "evaluate",
    "evaluate_*",
    "*_evaluate",
    "evaluation",
    "evaluation_*",
    "eval_*",
    "*_eval",
    "val_*",
    "valid_*",
    "test_step",
    "test_epoch",
)


KNOWN_KEYS = {
    "extend",
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "extend-per-file-ignores",
    "exclude",
    "extend-exclude",
    "force-exclude",
    "respect-gitignore",
    "scaler-names",
    "eval-function-patterns",
    "extend-eval-function-patterns",
    "cache-dir",
    "max-file-size",
    "target-torch-version",
}

CONFIG_NAMES = (".amplint.toml", "amplint.toml", "pyproject.toml")

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024


class ConfigError(Exception):
    """A configuration problem: reported with exit status 2."""


class RuleOptions(Record):
    __slots__ = _fields = ("scaler_names", "eval_patterns", "target_torch_version")
    _defaults = {"scaler_names": (), "eval_patterns": DEFAULT_EVAL_PATTERNS, "target_torch_version": None}
    scaler_names: tuple[str, ...]
    eval_patterns: tuple[str, ...]
    #: the oldest torch the project supports (``target-torch-version`` or its declared
    #: requirement), or None: a current torch
    target_torch_version: tuple[int, ...] | None

    def fingerprint(self) -> str:
        return repr([list(self.scaler_names), list(self.eval_patterns), self.target_torch_version])


class Settings(Record):
    _fields = (
        "enabled", "root", "config_file", "exclude", "extend_exclude", "per_file_ignores", "options", "cache_dir",
        "force_exclude", "max_file_size", "respect_gitignore", "config_chain", "target_source",
    )
    __slots__ = _fields + ("_excluder", "_pfi")
    _defaults = {
        "config_file": None, "exclude": (), "extend_exclude": (), "per_file_ignores": (),
        "options": Factory(lambda: RuleOptions()), "cache_dir": None, "force_exclude": False,
        "max_file_size": DEFAULT_MAX_FILE_SIZE, "respect_gitignore": True, "config_chain": (), "target_source": None,
    }
    enabled: frozenset[str]
    root: Path
    config_file: Path | None
    exclude: tuple[tuple[str, str], ...]  # (anchor folder, pattern)
    extend_exclude: tuple[tuple[str, str], ...]
    per_file_ignores: tuple[tuple[str, str, tuple[str, ...]], ...]  # (anchor folder, pattern, codes)
    options: RuleOptions
    cache_dir: Path | None
    force_exclude: bool
    max_file_size: int
    respect_gitignore: bool
    config_chain: tuple[Path, ...]  # the files read, extended ones first
    target_source: str | None  # where target-torch-version came from

    def fingerprint(self) -> str:
        """Everything that changes what a file's diagnostics are: amplint's code, the Python that
        runs it (version and implementation: what compiles differs) and LibCST (what parses
        differs), the rule selection and options."""
        from . import __version__

        payload = repr(
            [__version__, _code_stamp(), _platform_stamp(), sorted(self.enabled), self.options.fingerprint(),
             self.max_file_size, sorted((a, p, list(c)) for a, p, c in self.per_file_ignores), str(self.root)]
        )
        return _digest(payload.encode())

    def file_key(self, path: str | Path, explicit: bool) -> str:
        """The settings that apply to one file, as a short key: a cached result computed under
        other per-file settings is never answered for this file."""
        suffix = os.path.splitext(str(path))[1]
        ignored = sorted(self.ignored_for(Path(path))) if self.per_file_ignores else []
        return _file_key(explicit, suffix, tuple(ignored))

    def ignored_for(self, path: Path) -> set[str]:
        if not self.per_file_ignores:
            return set()
        compiled = getattr(self, "_pfi", None)
        if compiled is None:
            from .globs import PatternSet

            compiled = [(PatternSet([(a, p)]), codes) for a, p, codes in self.per_file_ignores]
            self._pfi = compiled
        out: set[str] = set()
        for matcher, codes in compiled:
            if matcher.path(str(path), str(self.root)):
                out.update(codes)
        return out

    def is_excluded(self, path: Path) -> bool:
        """A path named on the command line: it or any folder above it may match."""
        return self.excluder.path(str(path), str(self.root))

    @property
    def excluder(self):
        ex = getattr(self, "_excluder", None)
        if ex is None:
            from .globs import PatternSet

            ex = PatternSet(self.exclude + self.extend_exclude)
            self._excluder = ex
        return ex

    def __reduce__(self):  # the compiled matchers stay behind when settings go to a worker
        return (type(self), tuple(getattr(self, n) for n in self._fields))


def blake2b(data: bytes = b"", digest_size: int = 32):
    """hashlib's BLAKE2b (the built-in module, without hashlib's OpenSSL import)."""
    try:
        from _blake2 import blake2b as impl
    except ImportError:  # pragma: no cover - a Python built without it
        from hashlib import blake2b as impl
    return impl(data, digest_size=digest_size)


def _digest(data: bytes) -> str:
    return blake2b(data, 16).hexdigest()


_FILE_KEYS: dict[tuple, str] = {}


def _file_key(explicit: bool, suffix: str, ignored: tuple[str, ...]) -> str:
    k = (explicit, suffix, ignored)
    hit = _FILE_KEYS.get(k)
    if hit is None:
        hit = _FILE_KEYS[k] = _digest(repr([explicit, suffix, list(ignored)]).encode())[:16]
    return hit


_PLATFORM: str | None = None


def _platform_stamp() -> str:
    """The interpreter (version, implementation, bytecode tag) and LibCST (version and native
    parser build), found without importing LibCST."""
    global _PLATFORM
    if _PLATFORM is None:
        import importlib.util

        parts = [sys.version, sys.implementation.name, str(sys.implementation.cache_tag), sys.platform]
        try:
            spec = importlib.util.find_spec("libcst")
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            here = os.path.dirname(spec.origin)
            try:
                with open(os.path.join(here, "_version.py"), "rb") as f:
                    parts.append(f.read(4096).decode("utf-8", "replace"))
            except OSError:
                parts.append("libcst:?")
            try:
                for e in sorted(os.scandir(here), key=lambda e: e.name):
                    if e.name.startswith("native") or e.name.endswith((".so", ".pyd")):
                        st = e.stat()
                        parts.append(f"{e.name}:{st.st_size}:{st.st_mtime_ns}")
            except OSError:
                pass
        else:
            parts.append("no-libcst")
        _PLATFORM = _digest("\0".join(parts).encode())
    return _PLATFORM


_STAMP: str | None = None


def _code_stamp() -> str:
    """Size and mtime of amplint's own modules: a cache written by other code is not reused."""
    global _STAMP
    if _STAMP is None:
        here = os.path.dirname(os.path.abspath(__file__))
        parts = []
        stack = [here]
        while stack:
            d = stack.pop()
            try:
                entries = sorted(os.scandir(d), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.name.endswith(".py"):
                    st = e.stat()
                    parts.append(f"{os.path.relpath(e.path, here)}:{st.st_size}:{st.st_mtime_ns}")
                elif e.is_dir() and not e.name.startswith(("__", ".")):
                    stack.append(e.path)
        _STAMP = _digest(";".join(parts).encode())
    return _STAMP



# --- code selection ------------------------------------------------------------------


def _specificity(selector: str) -> int:
    if selector == "ALL":
        return 0
    return len(selector)


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def validate_selectors(selectors: Iterable[str], codes: Iterable[str], where: str, allow_empty: bool = False) -> list[str]:
    """The selectors, upper-cased, each checked against the rule codes. An empty one is an
    error in a configuration file (``select = [""]`` would otherwise select nothing, silently);
    ``allow_empty``: skipped (the command line's ``--select AMP001,``)."""
    codes = list(codes)
    out = []
    for raw in selectors:
        sel = raw.strip().upper()
        if not sel:
            if allow_empty:
                continue
            raise ConfigError(f"{where}: an empty rule selector (give a code, a prefix such as `AMP0`, or `ALL`)")
        if sel != "ALL" and not any(c.startswith(sel) for c in codes):
            raise ConfigError(f"{where}: unknown rule selector `{raw}` (see `amplint --list-rules`)")
        out.append(sel)
    return out


class Selection(Record):
    """One layer's rule selection: ``select`` (None: not set), ``extend-select``, ``ignore``."""

    __slots__ = _fields = ("select", "extend_select", "ignore")
    _defaults = {"select": None, "extend_select": (), "ignore": ()}
    select: tuple[str, ...] | None
    extend_select: tuple[str, ...]
    ignore: tuple[str, ...]


def resolve_layers(rules: Iterable[Any], layers: Iterable[Selection]) -> frozenset[str]:
    """ruff's resolution, layer by layer (see the module docstring)."""
    rules = list(rules)
    enabled = {r.code for r in rules if r.default_enabled}
    carried: tuple[str, ...] = ()
    for layer in layers:
        updates: dict[str, bool] = {}
        selects = list(layer.select or ()) + list(layer.extend_select)
        ignores = list(layer.ignore) + list(carried)
        carried = ()
        specs = sorted({_specificity(s) for s in selects + ignores})
        for spec in specs:
            for s in selects:
                if _specificity(s) == spec:
                    for r in rules:
                        if _matches(s, r.code):
                            updates[r.code] = True
            for s in ignores:
                if _specificity(s) == spec:
                    for r in rules:
                        if _matches(s, r.code):
                            updates[r.code] = False
        if layer.select is not None:
            enabled = {c for c, on in updates.items() if on}
            if not layer.select and not layer.extend_select and layer.ignore:
                carried = tuple(layer.ignore)
        else:
            for c, on in updates.items():
                (enabled.add if on else enabled.discard)(c)
    return frozenset(enabled)


def resolve_enabled(rules: Iterable[Any], select: list[str] | None, extend_select: list[str],
                    ignore: list[str]) -> frozenset[str]:
    """One layer on top of the defaults."""
    return resolve_layers(rules, [Selection(tuple(select) if select is not None else None, tuple(extend_select),
                                            tuple(ignore))])


# --- files ---------------------------------------------------------------------------


def config_in(directory: str, names: set[str] | None = None) -> Path | None:
    """The configuration file of one folder, if it has one."""
    for n in CONFIG_NAMES:
        if names is not None and n not in names:
            continue
        candidate = os.path.join(directory, n)
        if n == "pyproject.toml":
            if not os.path.isfile(candidate):
                continue
            data = _read_toml(Path(candidate))  # a damaged pyproject.toml is an error, as in ruff
            tool = data.get("tool")
            if isinstance(tool, dict) and "amplint" in tool:
                return Path(candidate)
        elif os.path.isfile(candidate):
            return Path(candidate)
    return None


def find_config(start: Path) -> Path | None:
    """The nearest configuration file, looking upwards from ``start``."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for d in (start, *start.parents):
        found = config_in(str(d))
        if found is not None:
            return found
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file (never executed: ``tomllib``); any failure is a ConfigError."""
    from .files import read_regular

    if os.path.abspath(path) == os.devnull:
        return {}  # ``--config /dev/null``: no settings
    try:
        return tomllib.loads(read_regular(path).decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    except RecursionError:
        raise ConfigError(f"{path}: cannot read: nested too deeply") from None


def load_table(path: Path) -> dict[str, Any]:
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"{path}: `tool` must be a table")
        table = tool.get("amplint", {})
    else:  # amplint.toml / .amplint.toml: the table is the whole file
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.amplint] must be a table")
    _check_keys(table, f"{path}: unknown key(s) in [tool.amplint]")
    return table


def _check_keys(table: dict, prefix: str) -> None:
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        import difflib

        hints = [difflib.get_close_matches(k, sorted(KNOWN_KEYS), n=1) for k in unknown]
        hint = "".join(f" (did you mean `{h[0]}`?)" for h in hints if h)
        raise ConfigError(f"{prefix}: {', '.join(unknown)}{hint}")


def load_chain(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The configuration ``path`` with the files it extends: [(file, table)], extended first."""
    chain: list[tuple[Path, dict[str, Any]]] = []
    if os.path.abspath(path) == os.devnull:
        return chain  # ``--config /dev/null``: no settings
    seen: list[Path] = []
    current: Path | None = path
    while current is not None:
        key = Path(os.path.abspath(current))
        if key in seen:
            cycle = " -> ".join(str(p) for p in seen + [key])
            raise ConfigError(f"{path}: `extend` forms a cycle: {cycle}")
        seen.append(key)
        table = load_table(current)
        chain.append((current, table))
        ext = table.get("extend")
        if ext is None:
            break
        if not isinstance(ext, str) or not ext:
            raise ConfigError(f"{current}: `extend` must be the path of a configuration file")
        target = Path(os.path.expanduser(ext))
        if not target.is_absolute():
            target = current.parent / target
        target = Path(os.path.normpath(os.path.abspath(target)))
        if not target.is_file() and str(target) != os.devnull:
            raise ConfigError(f"{current}: `extend`: no such configuration file: {target}")
        current = target
    chain.reverse()
    return chain


def _str_list(table: dict, key: str, where: Path | str) -> list[str] | None:
    if key not in table:
        return None
    v = table[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return list(v)


class CliOverrides(Record):
    __slots__ = _fields = (
        "select", "extend_select", "ignore", "per_file_ignores", "exclude", "extend_exclude", "cache_dir",
        "force_exclude", "config", "isolated", "respect_gitignore", "overrides",
    )
    _defaults = {
        "select": None, "extend_select": Factory(list), "ignore": Factory(list), "per_file_ignores": Factory(dict),
        "exclude": None, "extend_exclude": Factory(list), "cache_dir": None, "force_exclude": False, "config": None,
        "isolated": False, "respect_gitignore": None, "overrides": Factory(list),
    }
    select: list[str] | None
    extend_select: list[str]
    ignore: list[str]
    per_file_ignores: dict[str, list[str]]
    exclude: list[str] | None
    extend_exclude: list[str]
    cache_dir: str | None
    force_exclude: bool
    config: str | None
    isolated: bool
    respect_gitignore: bool | None  # None: the configuration decides (default: on)
    overrides: list[str]  # ``--config KEY=VALUE``, as given


def parse_override(text: str) -> dict[str, Any]:
    """``--config "select = ['AMP001']"``: one TOML ``KEY = VALUE`` pair."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"--config `{text}`: not a configuration file, nor a TOML `KEY = VALUE` pair ({e})") from None
    if isinstance(table.get("tool"), dict) and isinstance(table["tool"].get("amplint"), dict) and len(table) == 1:
        table = table["tool"]["amplint"]
    _check_keys(table, f"--config `{text}`: unknown key(s)")
    if "extend" in table:
        raise ConfigError(f"--config `{text}`: `extend` can only be set in a configuration file")
    return table


def _version_setting(value: Any, where: str) -> tuple[int, ...]:
    from .requirements import parse_version

    if isinstance(value, str):
        v = parse_version(value)
        if v is not None and value.strip().lstrip("v").replace(".", "").isdigit():
            return v
    raise ConfigError(f"{where}: `target-torch-version` must be a version such as \"2.2\" or \"2.4.1\"")


class Workspace:
    """The settings of every linted file: the nearest configuration per folder.

    Folders are looked up once; two folders with the same configuration (and the same declared
    torch requirement) share one :class:`Settings` object, so the runner needs one linter and
    one cache per distinct configuration, not per folder."""

    def __init__(self, cli: CliOverrides, rules: Iterable[Any], cwd: Path | None = None) -> None:
        self.cli = cli
        self.rules = list(rules)
        self.codes = [r.code for r in self.rules]
        self.cwd = (cwd or Path.cwd()).resolve()
        self._override_tables = [parse_override(o) for o in cli.overrides]
        self._fixed_chain: list[tuple[Path, dict]] | None = None
        if cli.config:
            self._fixed_chain = load_chain(Path(cli.config))
        elif cli.isolated:
            self._fixed_chain = []
        self._dir_config: dict[str, Path | None] = {}
        self._dir_pin: dict[str, tuple | None] = {}
        self._chains: dict[Path, list[tuple[Path, dict]]] = {}
        self._settings: dict[tuple, Settings] = {}
        self._by_dir: dict[str, Settings] = {}
        self._stop: set[str] = set()

    # --- lookups -----------------------------------------------------------------------

    def _config_of(self, d: str, names: set[str] | None = None) -> Path | None:
        hit = self._dir_config.get(d, 0)
        if hit != 0:
            return hit  # type: ignore[return-value]
        own = config_in(d, names)
        if own is None:
            parent = os.path.dirname(d)
            own = self._config_of(parent) if parent and parent != d else None
        self._dir_config[d] = own
        return own

    def _pin_of(self, d: str, names: set[str] | None = None) -> tuple | None:
        """(target tuple or None, file) of the nearest folder declaring torch, or None."""
        if d in self._dir_pin:
            return self._dir_pin[d]
        from .requirements import declared_in

        if names is None:
            try:
                names = set(os.listdir(d))
            except OSError:
                names = set()
        own = declared_in(d, names) if ("pyproject.toml" in names or any(
            n.startswith("requirements") for n in names)) else None
        if own is None and ".git" not in names:  # the repository root ends the search
            parent = os.path.dirname(d)
            own = self._pin_of(parent) if parent and parent != d else None
        self._dir_pin[d] = own
        return own

    def for_dir(self, directory: str | Path, names: set[str] | None = None) -> Settings:
        d = os.path.abspath(str(directory))
        hit = self._by_dir.get(d)
        if hit is not None:
            return hit
        if self._fixed_chain is not None:
            chain = self._fixed_chain
            key_config: Path | None = Path(os.path.abspath(self.cli.config)) if self.cli.config else None
        else:
            key_config = self._config_of(d, names)
            chain = self._chain(key_config) if key_config is not None else []
        pin = None if self.cli.isolated else self._pin_of(d, names)  # --isolated reads no project file
        key = (key_config, pin)
        s = self._settings.get(key)
        if s is None:
            s = self._build(chain, pin)
            self._settings[key] = s
        self._by_dir[d] = s
        return s

    def for_path(self, path: str | Path) -> Settings:
        """The settings of a file (its folder's) or of a folder."""
        p = str(path)
        if p == "-" or not p:
            return self.for_dir(self.cwd)
        if os.path.isdir(p):
            return self.for_dir(p)
        return self.for_dir(os.path.dirname(os.path.abspath(p)) or ".")

    def all_settings(self) -> list[Settings]:
        return list(self._settings.values())

    def _chain(self, path: Path) -> list[tuple[Path, dict]]:
        hit = self._chains.get(path)
        if hit is None:
            hit = load_chain(path)
            self._chains[path] = hit
        return hit

    # --- one configuration -------------------------------------------------------------

    def _build(self, chain: list[tuple[Path, dict]], pin: tuple | None) -> Settings:
        cli = self.cli
        codes = self.codes
        cwd = str(self.cwd)
        layers: list[tuple[str, str, dict]] = [(str(p), str(Path(os.path.abspath(p)).parent), t) for p, t in chain]
        if self._override_tables:
            # ``--config KEY=VALUE`` replaces that key of the nearest file, as if written there
            merged: dict[str, Any] = dict(layers[-1][2]) if layers else {}
            for table in self._override_tables:
                merged.update(table)
            where = "--config " + " ".join(f"`{o}`" for o in cli.overrides)
            if layers:
                layers[-1] = (f"{layers[-1][0]} with {where}", layers[-1][1], merged)
            else:
                layers.append((where, cwd, merged))

        selections: list[Selection] = []
        pfi: list[tuple[str, str, tuple[str, ...]]] = []
        exclude: list[tuple[str, str]] = [(cwd, p) for p in DEFAULT_EXCLUDE]
        extend_exclude: list[tuple[str, str]] = []
        scaler_names: tuple[str, ...] = ()
        eval_patterns: tuple[str, ...] = DEFAULT_EVAL_PATTERNS
        extend_eval: list[str] = []
        max_file_size = DEFAULT_MAX_FILE_SIZE
        cache_dir: Path | None = None
        cache_where, cache_anchor, cache_value = "", cwd, ""
        force_exclude = False
        respect_gitignore = True
        target: tuple[int, ...] | None = None
        target_source: str | None = None
        explicit_target = False
        root = Path(layers[len(chain) - 1][1]) if chain else self.cwd
        for where, anchor, table in layers:
            sel = _str_list(table, "select", where)
            ext = _str_list(table, "extend-select", where) or []
            ign = _str_list(table, "ignore", where) or []
            if sel is not None or ext or ign:
                selections.append(Selection(
                    tuple(validate_selectors(sel, codes, f"{where}: select")) if sel is not None else None,
                    tuple(validate_selectors(ext, codes, f"{where}: extend-select")),
                    tuple(validate_selectors(ign, codes, f"{where}: ignore")),
                ))
            for key in ("per-file-ignores", "extend-per-file-ignores"):
                if key not in table:
                    continue
                raw = table[key]
                if not isinstance(raw, dict):
                    raise ConfigError(f"{where}: `{key}` must be a table of glob = [codes]")
                if key == "per-file-ignores":
                    pfi = []
                for pattern, s in raw.items():
                    if not isinstance(s, list) or not all(isinstance(x, str) for x in s):
                        raise ConfigError(f"{where}: `{key}.{pattern}` must be a list of codes")
                    pfi.append((anchor, _checked_glob(pattern, where), _expand(validate_selectors(s, codes, f"{where}: {key}"), codes)))
            ex = _str_list(table, "exclude", where)
            if ex is not None:
                exclude = [(anchor, _checked_glob(p, where)) for p in ex]
            extend_exclude += [(anchor, _checked_glob(p, where)) for p in _str_list(table, "extend-exclude", where) or []]
            names = _str_list(table, "scaler-names", where)
            if names is not None:
                for n in names:
                    if not n or not all(part.isidentifier() for part in n.split(".")):
                        raise ConfigError(f"{where}: `scaler-names` entry `{n}` is not a name or dotted name")
                scaler_names = tuple(names)
            patterns = _str_list(table, "eval-function-patterns", where)
            if patterns is not None:
                eval_patterns = tuple(patterns)
                extend_eval = []
            extend_eval += _str_list(table, "extend-eval-function-patterns", where) or []
            if "max-file-size" in table:
                max_file_size = _size(table["max-file-size"], where)
            if "cache-dir" in table:
                cd = table["cache-dir"]
                if not isinstance(cd, str) or not cd.strip():
                    raise ConfigError(f"{where}: `cache-dir` must be a non-empty string")
                cache_dir = Path(os.path.expanduser(cd))
                if not cache_dir.is_absolute():
                    cache_dir = Path(anchor) / cache_dir
                cache_where, cache_anchor, cache_value = where, anchor, cd
            for key in ("force-exclude", "respect-gitignore"):
                if key in table and not isinstance(table[key], bool):
                    raise ConfigError(f"{where}: `{key}` must be true or false, got {_type_name(table[key])}")
            force_exclude = bool(table.get("force-exclude", force_exclude))
            respect_gitignore = bool(table.get("respect-gitignore", respect_gitignore))
            if "target-torch-version" in table:
                target = _version_setting(table["target-torch-version"], where)
                target_source = where
                explicit_target = True

        if cli.select is not None or cli.extend_select or cli.ignore:
            selections.append(Selection(
                tuple(validate_selectors(cli.select, codes, "--select", allow_empty=True)) if cli.select is not None else None,
                tuple(validate_selectors(cli.extend_select, codes, "--extend-select", allow_empty=True)),
                tuple(validate_selectors(cli.ignore, codes, "--ignore", allow_empty=True)),
            ))
        enabled = resolve_layers(self.rules, selections)
        for pattern, s in cli.per_file_ignores.items():
            pfi.append((cwd, _checked_glob(pattern, "--per-file-ignores"),
                        _expand(validate_selectors(s, codes, "--per-file-ignores", allow_empty=True), codes)))
        if cli.exclude is not None:
            exclude = [(cwd, _checked_glob(p, "--exclude")) for p in cli.exclude]
        extend_exclude += [(cwd, _checked_glob(p, "--extend-exclude")) for p in cli.extend_exclude]
        force_exclude = cli.force_exclude or force_exclude
        if cli.respect_gitignore is not None:
            respect_gitignore = cli.respect_gitignore
        if not explicit_target and pin is not None and pin[0] is not None:
            target, target_source = pin[0], pin[1]

        env_cache = os.environ.get("AMPLINT_CACHE_DIR")
        if cli.cache_dir:
            resolved_cache = Path(cli.cache_dir).resolve()
        elif env_cache:
            resolved_cache = Path(env_cache).resolve()
        elif cache_dir is not None:
            resolved_cache = cache_dir
            if not any("cache-dir" in t for t in self._override_tables):
                # a repository's configuration keeps the cache inside the folder of the file that
                # sets it (a cache elsewhere comes only from the command line or the environment)
                # sets it, and inside the project (a file it extends from elsewhere does not take it out)
                real, real_anchor = os.path.realpath(cache_dir), os.path.realpath(cache_anchor)
                top = _project_top(os.path.realpath(root))
                for inside in (real_anchor, top):
                    if not real.startswith(inside.rstrip(os.sep) + os.sep):
                        raise ConfigError(
                            f"{cache_where}: `cache-dir` must be a directory inside the project ({inside}), "
                            f"got `{cache_value}`; use --cache-dir or AMPLINT_CACHE_DIR for a cache elsewhere")
                resolved_cache = Path(real)
        else:
            resolved_cache = root / ".amplint_cache"

        return Settings(
            enabled=enabled,
            root=root,
            config_file=chain[-1][0] if chain else None,
            exclude=tuple(exclude),
            extend_exclude=tuple(extend_exclude),
            per_file_ignores=tuple(pfi),
            options=RuleOptions(scaler_names=scaler_names, eval_patterns=eval_patterns + tuple(extend_eval),
                                target_torch_version=target),
            cache_dir=resolved_cache,
            force_exclude=force_exclude,
            max_file_size=max_file_size,
            respect_gitignore=respect_gitignore,
            config_chain=tuple(p for p, _t in chain),
            target_source=target_source,
        )


def _project_top(folder: str) -> str:
    """The repository ``folder`` (the nearest configuration's) belongs to: the nearest ancestor
    holding ``.git`` or ``.hg``, else the folder itself."""
    d = folder
    while True:
        if os.path.exists(os.path.join(d, ".git")) or os.path.exists(os.path.join(d, ".hg")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return folder
        d = parent


def _checked_glob(pattern: str, where: Path | str) -> str:
    from .globs import GlobError, translate

    if not pattern.strip():
        raise ConfigError(f"{where}: an empty glob pattern")
    try:
        translate(pattern)
    except GlobError as e:
        raise ConfigError(f"{where}: bad glob pattern: {e}") from None
    return pattern


def build_settings(paths: list[str], cli: CliOverrides, rules: Iterable[Any]) -> Settings:
    """The settings of the first path in sorted order (or of the current folder): one
    :class:`Settings` for callers that lint with one configuration (the public API, the tests);
    sorted, so that the settings do not depend on the order of the paths."""
    ws = Workspace(cli, rules)
    named = sorted(p for p in paths if p != "-" and Path(p).exists())
    anchor = named[0] if named else str(ws.cwd)
    return ws.for_path(anchor)


def _type_name(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__) + (f" ({value!r})" if isinstance(value, (str, int, float)) else "")


def _size(value: Any, where: Path | str) -> int:
    """``max-file-size``: bytes as an integer, or a string such as "2MB" / "512 KiB"."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**62:
        return value
    if isinstance(value, str):
        import re

        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)i?B?\s*", value, re.I)
        if m:
            factor = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2).upper()]
            size = float(m.group(1)) * factor
            if 0 < size < 2**62:
                return int(size)
    raise ConfigError(f"{where}: `max-file-size` must be a number of bytes or a size such as \"2MB\"")


def _expand(selectors: list[str], codes: list[str]) -> tuple[str, ...]:
    return tuple(sorted({c for c in codes for s in selectors if _matches(s, c)}))
