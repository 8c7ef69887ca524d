"""Ignore files, as git and ruff read them: ``.gitignore``, ``.ignore``, ``.git/info/exclude`` and
the global excludes file (``core.excludesFile``, by default ``~/.config/git/ignore``).

Like ruff (and ripgrep, whose rules ruff uses), the git files count inside a git repository
only, while ``.ignore`` files count everywhere; a deeper file overrides a shallower one, and
``.ignore`` overrides ``.gitignore`` in the same folder; a folder that is ignored is not
entered, so a file below it cannot be re-included. Patterns are matched with ``pathspec``'s
implementation of git's rules. Paths named on the command line are linted even when ignored.
"""

from __future__ import annotations

import os
import re

_Spec = tuple  # (base folder, compiled spec)


def _read(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read().splitlines()
    except (OSError, UnicodeError):
        return None


def _compile(lines: list[str]):
    import pathspec

    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # noqa: BLE001 - a pattern pathspec cannot read: skip that file's patterns
        kept = []
        for line in lines:
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
                kept.append(line)
            except Exception:  # noqa: BLE001
                continue
        return pathspec.GitIgnoreSpec.from_lines(kept)


def _git_dir(root: str) -> str | None:
    """The git directory of the repository whose work tree is ``root`` (a worktree's ``.git``
    is a file naming it)."""
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    lines = _read(dot)
    if lines and lines[0].startswith("gitdir:"):
        d = lines[0][len("gitdir:"):].strip()
        return d if os.path.isabs(d) else os.path.normpath(os.path.join(root, d))
    return None


def _common_dir(git_dir: str) -> str:
    lines = _read(os.path.join(git_dir, "commondir"))
    if lines:
        d = lines[0].strip()
        return d if os.path.isabs(d) else os.path.normpath(os.path.join(git_dir, d))
    return git_dir


_EXCLUDES = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.I)
_SECTION = re.compile(r"^\s*\[\s*([^\]\s\"]+)")


def _excludes_file_from(config: str) -> str | None:
    lines = _read(config)
    if not lines:
        return None
    section = None
    found = None
    for line in lines:
        m = _SECTION.match(line)
        if m is not None:
            section = m.group(1).lower()
            continue
        if section == "core":
            m = _EXCLUDES.match(line)
            if m is not None:
                value = m.group(1)
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = value[1:-1]
                found = os.path.expanduser(value)
    return found


def global_excludes_file(git_dir: str | None) -> str | None:
    """``core.excludesFile`` from the repository's, the user's and the XDG git config (the most
    specific wins), else git's default ``$XDG_CONFIG_HOME/git/ignore``."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = [os.path.join(xdg, "git", "config"), os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig")]
    if git_dir is not None:
        configs.append(os.path.join(_common_dir(git_dir), "config"))
    found = None
    for c in configs:
        v = _excludes_file_from(c)
        if v:
            found = v
    return found or os.path.join(xdg, "git", "ignore")


class IgnoreFiles:
    """Ignore specs, read once per folder."""

    def __init__(self) -> None:
        self._own: dict[str, list[_Spec]] = {}
        self._repo: dict[str, str | None] = {}
        self._repo_specs: dict[str, list[_Spec]] = {}

    def repo_root(self, d: str) -> str | None:
        if d in self._repo:
            return self._repo[d]
        if os.path.exists(os.path.join(d, ".git")):
            root: str | None = d
        else:
            parent = os.path.dirname(d)
            root = self.repo_root(parent) if parent and parent != d else None
        self._repo[d] = root
        return root

    def _repo_level(self, repo: str) -> list[_Spec]:
        """Global excludes and ``.git/info/exclude`` (the lowest precedence)."""
        hit = self._repo_specs.get(repo)
        if hit is None:
            hit = []
            git_dir = _git_dir(repo)
            for path in (global_excludes_file(git_dir),
                         os.path.join(_common_dir(git_dir), "info", "exclude") if git_dir else None):
                lines = _read(path) if path else None
                if lines:
                    hit.append((repo, _compile(lines)))
            self._repo_specs[repo] = hit
        return hit

    def own(self, d: str, names: set[str] | None, in_repo: bool) -> list[_Spec]:
        """The specs of the ignore files in folder ``d``."""
        key = d + ("\0g" if in_repo else "")
        hit = self._own.get(key)
        if hit is None:
            hit = []
            for fname in ((".gitignore", ".ignore") if in_repo else (".ignore",)):
                if names is not None and fname not in names:
                    continue
                lines = _read(os.path.join(d, fname))
                if lines:
                    hit.append((d, _compile(lines)))
            self._own[key] = hit
        return hit

    def above(self, d: str) -> list[_Spec]:
        """The specs that apply to the entries of ``d`` from the folders above it (and the
        repository-wide files), outermost first; ``d``'s own files are added by the walk."""
        repo = self.repo_root(d)
        specs: list[_Spec] = []
        if repo is not None:
            specs.extend(self._repo_level(repo))
            chain = []
            p = os.path.dirname(d) if d != repo else None
            while p is not None and len(p) >= len(repo):
                chain.append(p)
                if p == repo:
                    break
                q = os.path.dirname(p)
                p = q if q != p else None
            for folder in reversed(chain):
                specs.extend(self.own(folder, None, True))
        return specs


def ignored(specs: list[_Spec], abs_path: str, is_dir: bool) -> bool:
    """The innermost spec with a verdict on ``abs_path`` decides."""
    for base, spec in reversed(specs):
        if not abs_path.startswith(base.rstrip(os.sep) + os.sep):
            continue
        rel = os.path.relpath(abs_path, base).replace(os.sep, "/")
        if is_dir:
            rel += "/"
        result = spec.check_file(rel)
        if result.include is not None:
            return bool(result.include)
    return False
