"""The torch version a project targets: ``target-torch-version``, or its declared requirement.

Where the setting is absent, amplint reads the project's own declaration of torch, from the
folder of the linted file upwards (stopping at the repository root): ``[project]
dependencies`` and ``optional-dependencies``, ``[dependency-groups]`` and ``[tool.poetry]``
dependencies in ``pyproject.toml``, and ``requirements*.txt``. The target is the oldest torch the
declaration allows: ``torch==2.2.2`` is 2.2.2, ``torch>=2.1,<3`` is 2.1, ``torch~=2.3.0`` is
2.3.0, poetry's ``^2.2`` is 2.2; a declaration with only an upper bound (``torch<2.4``) targets
the versions below it. A bare ``torch`` says nothing, and neither does no declaration: rules
then assume a current torch.
"""

from __future__ import annotations

import os
import re

# a version just below ``(2, 4)``: what ``torch<2.4`` allows at most
_BELOW = 10**6

_VERSION = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$", re.S)


def parse_version(text: str) -> tuple[int, ...] | None:
    m = _VERSION.match(text)
    if m is None:
        return None
    return tuple(int(x) for x in m.group(1).split("."))


def format_version(v: tuple[int, ...]) -> str:
    if len(v) >= 3 and v[-1] >= _BELOW:
        nxt = list(v[:-1])
        nxt[-1] += 1
        return "<" + ".".join(str(x) for x in nxt)
    return ".".join(str(x) for x in v)


def _below(v: tuple[int, ...]) -> tuple[int, ...]:
    """The greatest version that is less than ``v``, as a tuple that compares right."""
    v = tuple(v) + (0,) * max(0, 2 - len(v))
    if v[-1] > 0:
        return v[:-1] + (v[-1] - 1, _BELOW)
    for k in range(len(v) - 1, -1, -1):
        if v[k] > 0:
            return v[:k] + (v[k] - 1,) + (_BELOW,) * (len(v) - k - 1) + (_BELOW,)
    return (0,)


def target_of_specifier(spec: str) -> tuple[int, ...] | None:
    """The oldest version a PEP 440 (or poetry) specifier allows; None when it has no bound."""
    lower: list[tuple[int, ...]] = []
    upper: list[tuple[int, ...]] = []
    spec = spec.split(";", 1)[0].split("#", 1)[0].strip().strip("()")
    if spec.startswith("@"):
        return None  # a direct URL
    for part in re.split(r"[,|]", spec):
        part = part.strip()
        m = re.match(r"^(===|==|~=|>=|<=|!=|>|<|\^|~|=)?\s*(.+)$", part)
        if not m:
            continue
        op, rest = m.group(1) or "==", m.group(2)
        if rest.strip() in ("*", ""):
            continue
        v = parse_version(rest)
        if v is None:
            continue
        if op in ("==", "===", "=", "~=", ">=", "^", "~"):
            lower.append(v)
        elif op == ">":
            lower.append(v + (1,))
        elif op == "<=":
            upper.append(v)
        elif op == "<":
            upper.append(_below(v))
    if lower:
        return max(lower)
    if upper:
        return min(upper)
    return None


def _torch_requirement(line: str) -> str | None:
    """The specifier of a requirement line naming ``torch`` (not torchvision), else None."""
    line = line.strip()
    if not line or line.startswith(("#", "-")):
        return None
    m = _NAME.match(line)
    if m is None or re.sub(r"[-_.]+", "-", m.group(1)).lower() != "torch":
        return None
    return m.group(3)


def _from_pyproject(path: str) -> list[tuple[int, ...] | None] | None:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None
    found: list[tuple[int, ...] | None] = []

    def lines(value) -> list[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    reqs = lines(project.get("dependencies"))
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for v in optional.values():
            reqs.extend(lines(v))
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for v in groups.values():
            reqs.extend(lines(v))
    for r in reqs:
        spec = _torch_requirement(r)
        if spec is not None:
            found.append(target_of_specifier(spec))
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    poetry = tool.get("poetry") if isinstance(tool.get("poetry"), dict) else {}
    tables = [poetry.get("dependencies")]
    group = poetry.get("group")
    if isinstance(group, dict):
        tables.extend(g.get("dependencies") for g in group.values() if isinstance(g, dict))
    for table in tables:
        if isinstance(table, dict) and "torch" in table:
            v = table["torch"]
            if isinstance(v, dict):
                v = v.get("version", "")
            found.append(target_of_specifier(v) if isinstance(v, str) else None)
    return found or None


def _from_requirements(path: str) -> list[tuple[int, ...] | None] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    found = []
    for line in text.splitlines():
        spec = _torch_requirement(line)
        if spec is not None:
            found.append(target_of_specifier(spec))
    return found or None


def declared_in(directory: str, names: set[str] | None = None) -> tuple[tuple[int, ...] | None, str] | None:
    """The torch target declared by the files of one folder: (oldest version or None for a
    bare ``torch``, the file), or None when no file there names torch."""
    if names is None:
        try:
            names = set(os.listdir(directory))
        except OSError:
            return None
    candidates = []
    if "pyproject.toml" in names:
        candidates.append(("pyproject.toml", _from_pyproject))
    candidates.extend((n, _from_requirements) for n in sorted(names)
                      if n.startswith("requirements") and n.endswith(".txt"))
    for name, reader in candidates:
        path = os.path.join(directory, name)
        found = reader(path)
        if found:
            bounded = [v for v in found if v is not None]
            return (min(bounded) if bounded else None), path
    return None
