"""What a class does with the scaler it owns, over its whole MRO (bases in other project modules
included): the methods an instance really runs (its own and the inherited ones it does not
override, and those its ``super()`` calls reach) and whether any of them updates the scaler.

A subclass that overrides ``optimizer_step`` and drops the base's ``self.scaler.update()`` never
updates: every ``self.scaler.step`` it runs is AMP001, whoever drives it.
"""

from __future__ import annotations

import libcst as cst

from .scopes import owner_class


def runs(model, cls) -> list:
    """The methods an instance of ``cls`` can run: for each name in its MRO the one that wins,
    and the overridden ones a ``super().name(...)`` call reaches."""
    scopes = model.scopes
    mro = scopes.mro(cls)
    names: list[str] = []
    for c in mro:
        names.extend(n for n in c.methods if n not in names)
    out = [m for m in (scopes.method(cls, n) for n in names) if m is not None]
    todo = list(out)
    while todo:
        fn = todo.pop()
        for c in fn.calls:
            name = _super_call(c.node)
            if name is None or fn.cls is None:
                continue
            after = mro[mro.index(fn.cls) + 1:] if fn.cls in mro else ()
            target = next((b.methods[name] for b in after if name in b.methods), None)
            if target is not None and target not in out:
                out.append(target)
                todo.append(target)
    return out


def never_updates(model, site) -> bool:
    """``self.<attr>.step(...)`` in a method of a class that owns that scaler (every binding of
    ``self.<attr>`` in its MRO is a GradScaler constructor or None), has no subclass the project
    shows, never hands itself or the scaler to other code, and runs no ``self.<attr>.update()``."""
    recv = site.recv or ""
    cls = owner_class(site.func)
    if cls is None or not recv.startswith("self.") or "." in recv[5:]:
        return False
    attr = recv[5:]
    scopes = model.scopes
    if len(scopes.mro(cls)) < 2 or _subclassed(model, cls):
        return False  # a class of its own is the per-file check's; a base may be completed below
    bindings = scopes.attr(cls, attr)
    if not bindings or not all(_builds_scaler(b) or _handed_in(b) for b in bindings):
        return False
    if not all(_builds_scaler(b) for b in bindings) and _importers_update(model, bindings):
        return False  # the code that hands the scaler in may update it itself
    methods = runs(model, cls)
    if site.func not in methods:
        return False
    for fn in methods:
        owner = getattr(fn, "owner_model", None) or model
        texts = owner.value_texts.get(fn, ())
        if "self" in texts or recv in texts:
            return False  # the object or its scaler goes to other code, which may update it
        if any(c.method == "update" and c.recv == recv for c in fn.calls):
            return False
    return True


def _builds_scaler(b) -> bool:
    owner = getattr(b.func, "owner_model", None)
    if owner is None or b.kind not in ("assign", "ann"):
        return False
    if isinstance(b.value, cst.Name) and b.value.value == "None":
        return True
    return owner.scalers.ctor_in(b.value) is not None


def _handed_in(b) -> bool:
    """``self.scaler = scaler``: a parameter of ``__init__`` (the constructor's caller built it)."""
    return (b.func.name == "__init__" and b.kind in ("assign", "ann") and isinstance(b.value, cst.Name)
            and b.value.value in b.func.params)


def _importers_update(model, bindings) -> bool:
    """A module importing this one, or the one that binds the scaler, updates a scaler itself
    (``trainer.optimizer_step(); scaler.update()`` in the script that builds the trainer)."""
    owners = [model] + [getattr(b.func, "owner_model", None) or model for b in bindings]
    seen: set[int] = set()
    for owner in owners:
        if owner.project is None:
            continue
        for m in owner.project.importer_models(owner):
            if id(m) in seen:
                continue
            seen.add(id(m))
            if any(c.method == "update" and c.recv is not None and m.is_scaler(c.func, c.recv) for c in m.calls):
                return True
    return False


def _subclassed(model, cls) -> bool:
    models = [model]
    if model.project is not None:
        models += model.project.importer_models(model)
    for m in models:
        for c in m.classes:
            if c is not cls and cls in m.scopes.mro(c):
                return True
    return False


def _super_call(node) -> str | None:
    f = node.func
    if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Call) and isinstance(f.value.func, cst.Name)
            and f.value.func.value == "super"):
        return f.attr.value
    return None
