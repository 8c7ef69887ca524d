"""Settings: ``[tool.amplint]`` in the nearest pyproject.toml, overridden by the command line."""

from __future__ import annotations

import fnmatch
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
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "extend-per-file-ignores",
    "exclude",
    "extend-exclude",
    "force-exclude",
    "scaler-names",
    "eval-function-patterns",
    "extend-eval-function-patterns",
    "cache-dir",
    "max-file-size",
}

DEFAULT_MAX_FILE_SIZE = 2 * 1024 * 1024


class ConfigError(Exception):
    """A configuration problem: reported with exit status 2."""


class RuleOptions(Record):
    __slots__ = _fields = ("scaler_names", "eval_patterns")
    _defaults = {"scaler_names": (), "eval_patterns": DEFAULT_EVAL_PATTERNS}
    scaler_names: tuple[str, ...]
    eval_patterns: tuple[str, ...]

    def fingerprint(self) -> str:
        return repr([list(self.scaler_names), list(self.eval_patterns)])


class Settings(Record):
    _fields = (
        "enabled", "root", "config_file", "exclude", "extend_exclude", "per_file_ignores", "options", "cache_dir",
        "force_exclude", "max_file_size",
    )
    __slots__ = _fields + ("_excluder",)
    _defaults = {
        "config_file": None, "exclude": DEFAULT_EXCLUDE, "extend_exclude": (), "per_file_ignores": Factory(dict),
        "options": Factory(lambda: RuleOptions()), "cache_dir": None, "force_exclude": False,
        "max_file_size": DEFAULT_MAX_FILE_SIZE,
    }
    enabled: frozenset[str]
    root: Path
    config_file: Path | None
    exclude: tuple[str, ...]
    extend_exclude: tuple[str, ...]
    per_file_ignores: dict[str, tuple[str, ...]]
    options: RuleOptions
    cache_dir: Path | None
    force_exclude: bool
    max_file_size: int

    def fingerprint(self) -> str:
        """Everything that changes what a file's diagnostics are: amplint's code, the Python that
        runs it (version and implementation: what compiles differs) and LibCST (what parses
        differs), the rule selection and options."""
        from . import __version__

        payload = repr(
            [__version__, _code_stamp(), _platform_stamp(), sorted(self.enabled), self.options.fingerprint(),
             self.max_file_size, sorted((k, list(v)) for k, v in self.per_file_ignores.items()), str(self.root)]
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
        rel = _relative(path, self.root)
        out: set[str] = set()
        for pattern, codes in self.per_file_ignores.items():
            if _match_path(rel, path.name, pattern):
                out.update(codes)
        return out

    def is_excluded(self, path: Path) -> bool:
        """A path named on the command line: any of its components, or any prefix of its path
        relative to the project root, may match."""
        rel = _relative(path, self.root)
        for pattern in self.exclude + self.extend_exclude:
            if _match_path(rel, path.name, pattern):
                return True
        return False

    @property
    def excluder(self) -> "Excluder":
        ex = getattr(self, "_excluder", None)
        if ex is None:
            ex = Excluder(self.exclude + self.extend_exclude, self.root)
            self._excluder = ex
        return ex

    def __reduce__(self):  # the compiled excluder stays behind when settings go to a worker
        return (type(self), tuple(getattr(self, n) for n in self._fields))


class Excluder:
    """Exclude patterns compiled once, for the directory walk: an entry is tested by its own
    name (bare patterns) and its path relative to the root (patterns with a slash); its parents
    were tested when the walk entered them."""

    def __init__(self, patterns: tuple[str, ...], root: Path) -> None:
        import re

        names = [p.rstrip("/") for p in patterns if "/" not in p.rstrip("/")]
        paths = [p.rstrip("/") for p in patterns if "/" in p.rstrip("/")]
        self._names = re.compile("|".join(fnmatch.translate(p) for p in names)) if names else None
        self._paths = re.compile("|".join(fnmatch.translate(p) for p in paths)) if paths else None
        self._root = os.path.abspath(str(root))

    def entry(self, path: str, name: str) -> bool:
        if self._names is not None and self._names.match(name):
            return True
        if self._paths is not None:
            rel = os.path.relpath(os.path.abspath(path), self._root).replace(os.sep, "/")
            return bool(self._paths.match(rel))
        return False


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


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError):
        return path.as_posix()


def _match_path(rel: str, name: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    if fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(rel, pattern):
        return True
    parts = rel.split("/")
    # a bare directory name excludes everything below it; a path pattern matches any prefix
    for i in range(1, len(parts) + 1):
        if fnmatch.fnmatchcase("/".join(parts[:i]), pattern) or ("/" not in pattern and fnmatch.fnmatchcase(parts[i - 1], pattern)):
            return True
    return False


# --- code selection ------------------------------------------------------------------


def _specificity(selector: str) -> int:
    if selector == "ALL":
        return 0
    return len(selector)


def _matches(selector: str, code: str) -> bool:
    return selector == "ALL" or code.startswith(selector)


def validate_selectors(selectors: Iterable[str], codes: Iterable[str], where: str) -> list[str]:
    codes = list(codes)
    out = []
    for raw in selectors:
        sel = raw.strip().upper()
        if not sel:
            continue
        if sel != "ALL" and not any(c.startswith(sel) for c in codes):
            raise ConfigError(f"{where}: unknown rule selector `{raw}` (see `amplint --list-rules`)")
        out.append(sel)
    return out


def resolve_enabled(
    rules: Iterable[Any],
    select: list[str] | None,
    extend_select: list[str],
    ignore: list[str],
) -> frozenset[str]:
    """ruff's resolution: the most specific selector wins; on a tie, ignore wins."""
    enabled = set()
    for r in rules:
        code = r.code
        best_sel = -1
        if select is not None:
            for s in select:
                if _matches(s, code):
                    best_sel = max(best_sel, _specificity(s))
        elif r.default_enabled:
            best_sel = 0  # implicit default: any ignore overrides it
        for s in extend_select:
            if _matches(s, code):
                best_sel = max(best_sel, _specificity(s))
        if best_sel < 0:
            continue
        best_ign = max((_specificity(s) for s in ignore if _matches(s, code)), default=-1)
        if best_ign >= 0 and best_ign >= best_sel:
            continue
        enabled.add(code)
    return frozenset(enabled)


# --- files ---------------------------------------------------------------------------


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml with a ``[tool.amplint]`` table, looking upwards."""
    start = start.resolve()
    if start.is_file():
        start = start.parent
    for d in (start, *start.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            data = _read_toml(candidate)
            tool = data.get("tool")
            if isinstance(tool, dict) and "amplint" in tool:
                return candidate
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
    unknown = sorted(set(table) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in [tool.amplint]: {', '.join(unknown)}")
    return table


def _str_list(table: dict, key: str, where: Path) -> list[str] | None:
    if key not in table:
        return None
    v = table[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ConfigError(f"{where}: `{key}` must be a list of strings")
    return list(v)


class CliOverrides(Record):
    __slots__ = _fields = (
        "select", "extend_select", "ignore", "per_file_ignores", "exclude", "extend_exclude", "cache_dir",
        "force_exclude", "config", "isolated",
    )
    _defaults = {
        "select": None, "extend_select": Factory(list), "ignore": Factory(list), "per_file_ignores": Factory(dict),
        "exclude": None, "extend_exclude": Factory(list), "cache_dir": None, "force_exclude": False, "config": None,
        "isolated": False,
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


def build_settings(paths: list[str], cli: CliOverrides, rules: Iterable[Any]) -> Settings:
    rules = list(rules)
    codes = [r.code for r in rules]
    config_path: Path | None = None
    table: dict[str, Any] = {}
    if cli.config:
        config_path = Path(cli.config)
        table = load_table(config_path)
    elif not cli.isolated:
        # the first path in sorted order, so that the settings do not depend on the order of the
        # paths on the command line
        named = sorted(p for p in paths if p != "-" and Path(p).exists())
        anchor = Path(named[0]) if named else Path.cwd()
        config_path = find_config(anchor)
        if config_path is not None:
            table = load_table(config_path)
    where = config_path or Path("<cli>")
    root = config_path.parent.resolve() if config_path is not None else Path.cwd().resolve()

    cfg_select = _str_list(table, "select", where)
    cfg_extend = _str_list(table, "extend-select", where) or []
    cfg_ignore = _str_list(table, "ignore", where) or []
    select = validate_selectors(cli.select, codes, "--select") if cli.select is not None else (
        validate_selectors(cfg_select, codes, f"{where}: select") if cfg_select is not None else None
    )
    extend = validate_selectors(cfg_extend, codes, f"{where}: extend-select") + validate_selectors(
        cli.extend_select, codes, "--extend-select"
    )
    ignore = validate_selectors(cfg_ignore, codes, f"{where}: ignore") + validate_selectors(cli.ignore, codes, "--ignore")
    enabled = resolve_enabled(rules, select, extend, ignore)

    pfi: dict[str, tuple[str, ...]] = {}
    for key in ("per-file-ignores", "extend-per-file-ignores"):
        raw = table.get(key, {})
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: `{key}` must be a table of glob = [codes]")
        for pattern, sel in raw.items():
            if not isinstance(sel, list) or not all(isinstance(x, str) for x in sel):
                raise ConfigError(f"{where}: `{key}.{pattern}` must be a list of codes")
            pfi[pattern] = _expand(validate_selectors(sel, codes, f"{where}: {key}"), codes)
    for pattern, sel in cli.per_file_ignores.items():
        pfi[pattern] = _expand(validate_selectors(sel, codes, "--per-file-ignores"), codes)

    exclude = tuple(cli.exclude) if cli.exclude is not None else tuple(_str_list(table, "exclude", where) or DEFAULT_EXCLUDE)
    extend_exclude = tuple((_str_list(table, "extend-exclude", where) or []) + cli.extend_exclude)

    scaler_names = tuple(_str_list(table, "scaler-names", where) or ())
    patterns = _str_list(table, "eval-function-patterns", where)
    eval_patterns = tuple(patterns) if patterns is not None else DEFAULT_EVAL_PATTERNS
    eval_patterns += tuple(_str_list(table, "extend-eval-function-patterns", where) or ())
    for n in scaler_names:
        if not n or not all(part.isidentifier() for part in n.split(".")):
            raise ConfigError(f"{where}: `scaler-names` entry `{n}` is not a name or dotted name")

    max_file_size = _size(table.get("max-file-size", DEFAULT_MAX_FILE_SIZE), where)
    cfg_cache = table.get("cache-dir")
    if cfg_cache is not None and (not isinstance(cfg_cache, str) or not cfg_cache.strip()):
        raise ConfigError(f"{where}: `cache-dir` must be a non-empty string")
    cfg_force = table.get("force-exclude", False)
    if not isinstance(cfg_force, bool):
        raise ConfigError(f"{where}: `force-exclude` must be true or false, got {_type_name(cfg_force)}")
    force_exclude = cli.force_exclude or cfg_force
    env_cache = os.environ.get("AMPLINT_CACHE_DIR")
    if cli.cache_dir:
        resolved_cache = Path(cli.cache_dir).resolve()
    elif env_cache:
        resolved_cache = Path(env_cache).resolve()
    elif cfg_cache:
        # a repository's configuration keeps the cache inside the repository: a cache elsewhere
        # comes only from the command line or the environment
        resolved_cache = Path(cfg_cache) if os.path.isabs(cfg_cache) else root / cfg_cache
        real, real_root = os.path.realpath(resolved_cache), os.path.realpath(root)
        if not real.startswith(real_root.rstrip(os.sep) + os.sep):
            raise ConfigError(
                f"{where}: `cache-dir` must be a directory inside the project ({real_root}), got `{cfg_cache}`; "
                "use --cache-dir or AMPLINT_CACHE_DIR for a cache elsewhere")
        resolved_cache = Path(real)
    else:
        resolved_cache = root / ".amplint_cache"

    return Settings(
        enabled=enabled,
        root=root,
        config_file=config_path,
        exclude=exclude,
        extend_exclude=extend_exclude,
        per_file_ignores=pfi,
        options=RuleOptions(scaler_names=scaler_names, eval_patterns=eval_patterns),
        cache_dir=resolved_cache,
        force_exclude=force_exclude,
        max_file_size=max_file_size,
    )


def _type_name(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__) + (f" ({value!r})" if isinstance(value, (str, int, float)) else "")


def _size(value: Any, where: Path) -> int:
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
