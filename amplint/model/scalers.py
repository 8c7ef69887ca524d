"""Which names hold a GradScaler: a verdict per (scope, key), read from the value layer.

A name (or ``self.<attr>``, or a dotted chain such as ``trainer.scaler``) is a scaler when, in
order of strength:

1. the user configured its name (``scaler-names``);
2. some binding of it holds a GradScaler (:mod:`.values`): a constructor of the GradScaler
   family (torch's own, the deprecated and sharded spellings, an imported ``*GradScaler``, a
   class of this file deriving from one, also as one arm of ``GradScaler(...) if amp else None``
   or returned by a factory of this file), another scaler (``scaler = self.scaler``), or an
   annotation with a GradScaler type (``Optional[GradScaler]``);
3. no binding holds something else (another class's instance such as sklearn's
   ``StandardScaler()``, a literal, an annotation naming another class such as a project's own
   ``ActivationScaler``), and its use proves it: ``X.scale(loss).backward()``, ``X.unscale_(opt)``,
   or the protocol methods called on a receiver whose name says scaler (``grad_scaler.step(opt)``).

Scopes follow :mod:`.scopes`: a local name is a scaler in its function, ``self.<attr>`` in its
class (and subclasses), other names at module level.
"""

from __future__ import annotations

import libcst as cst

from .. import torch_api as T
from .scopes import Scopes, owner_class
from .structure import Binding, CallSite, ClassInfo, FunctionInfo
from .syntax import expr_key
from .values import Values

SCALER_METHODS = T.SCALER_PROTOCOL
_NEGATIVE = frozenset({"other", "container", "optimizer", "device", "dtype", "bce", "instance", "scheduler", "fsdp",
                       "function", "class", "import"})


class ScalerTable:
    def __init__(self, builder, scopes: Scopes, values: Values, extra_names: tuple[str, ...] = ()) -> None:
        self.b = builder
        self.scopes = scopes
        self.values = values
        self.extra = tuple(extra_names)
        self.scaler_classes = values.scaler_classes
        self.ctor_sites: list[CallSite] = [c for c in builder.calls if self.is_ctor_call(c.node)]
        self._verdict: dict[tuple, bool] = {}
        self._use = self._use_evidence()
        # local alias -> the scaler key it holds (``scaler = self.scaler``), per function
        self.aliases: dict[FunctionInfo, dict[str, str]] = {}
        bound: dict[tuple, int] = {}
        for bnd in builder.bindings:
            bound[(id(bnd.func), bnd.name)] = bound.get((id(bnd.func), bnd.name), 0) + 1
        for bnd in builder.bindings:
            if bnd.kind not in ("assign", "ann", "walrus") or "." in bnd.name or bnd.unpack:
                continue
            src = _alias_source(bnd.value)
            if src is None or src == bnd.name:
                continue
            # ``scaler = self.scaler`` of a known scaler; or ``scaler = c.scaler``, the one binding
            # of a local the function uses as a scaler, of an attribute nothing else names as one
            # (a field of a parameter's dataclass): the local stands for the attribute
            if self.is_scaler(bnd.func, src) or (
                    "." in src and bound[(id(bnd.func), bnd.name)] == 1 and self.is_scaler(bnd.func, bnd.name)):
                self.aliases.setdefault(bnd.func, {})[bnd.name] = src

    # --- constructor recognition -----------------------------------------------------------

    def is_ctor_call(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        text = _dotted(node.func)
        if text is None:
            return False
        qual = self.b.imports.resolve(text)
        if qual is not None:
            return T.is_scaler_class(qual)
        return text in self.scaler_classes or T.is_scaler_class(text)

    def ctor_in(self, value: cst.BaseExpression | None) -> cst.Call | None:
        """The GradScaler constructor call a bound value is (or one arm of it is)."""
        if value is None:
            return None
        if self.is_ctor_call(value):
            return value  # type: ignore[return-value]
        if isinstance(value, cst.IfExp):
            return self.ctor_in(value.body) or self.ctor_in(value.orelse)
        if isinstance(value, cst.BooleanOperation):
            return self.ctor_in(value.left) or self.ctor_in(value.right)
        return None

    # --- scopes ------------------------------------------------------------------------------

    def scope_of(self, func: FunctionInfo, key: str) -> tuple[str, object]:
        head = key.split(".", 1)[0].split("[", 1)[0]
        owner = owner_class(func)
        if head == "self" and owner is not None and "." in key:
            return ("class", owner)
        if func.is_local(head):
            return ("local", func)
        return ("module", None)

    def _scope_key(self, func: FunctionInfo, key: str) -> tuple:
        kind, scope = self.scope_of(func, key)
        return (kind, id(scope), key)

    # --- the verdict -------------------------------------------------------------------------

    def is_scaler(self, func: FunctionInfo, key: str | None) -> bool:
        if key is None:
            return False
        sk = self._scope_key(func, key)
        hit = self._verdict.get(sk)
        if hit is None:
            self._verdict[sk] = False  # recursion through aliases: assume not
            hit = self._verdict[sk] = self._decide(func, key, sk)
        return hit

    def _decide(self, func: FunctionInfo, key: str, sk: tuple) -> bool:
        if self.extra and self._configured(key):
            return True
        if "[" in key:
            return sk in self._use
        kind, scope = self.scope_of(func, key)
        bindings = self._bindings(func, key, kind, scope)
        strong = negative = False
        for b in bindings:
            vals = self.values.binding(b)
            if any(v.kind == "scaler" for v in vals):
                strong = True
                break
            if b.kind == "param" and b.annotation is not None and not vals - {v for v in vals if v.kind == "param"}:
                continue  # an annotation that says nothing (``Any``)
            if _negative(b, vals):
                negative = True
        if strong:
            return True
        if negative:
            return False
        if sk in self._use:
            # (a parameter named and used like one, unless every caller hands it something else)
            return not (kind == "local" and any(b.kind == "param" and b.annotation is None for b in bindings)
                        and self._callers_pass_other(scope, key))
        if kind == "class":
            # evidence in a base class of this file
            for base in self.scopes.mro(scope)[1:]:  # type: ignore[arg-type]
                if ("class", id(base), key) in self._use:
                    return True
        return False

    def _callers_pass_other(self, func: FunctionInfo, name: str) -> bool:
        """``func`` is called in this file, and every call hands its parameter ``name`` an object
        that cannot be a GradScaler (``validate(model, loader, scaler)`` where ``scaler`` is the
        project's own task-loss weighter): the parameter is not one either, whatever its methods
        are called."""
        if name not in func.params or func.is_static or func.is_classmethod:
            return False
        index = func.params.index(name)
        by_text = self.__dict__.get("_calls_by_text")
        if by_text is None:
            by_text = self._calls_by_text = {}
            for c in self.b.calls:
                by_text.setdefault(c.text, []).append(c)
        if func.cls is not None:
            index -= 1  # the receiver
            sites = [c for c in by_text.get(f"self.{func.name}", ()) if owner_class(c.func) is func.cls]
        else:
            sites = [c for c in by_text.get(func.name, ()) if c.method is None]
        if index < 0 or not sites:
            return False
        for c in sites:
            if any(a.star for a in c.node.args):
                return False
            arg = c.arg(index, name)
            vals = self.values.of(c.func, arg.value) if arg is not None else frozenset()
            if not vals or not all(v.kind in _NEGATIVE for v in vals):
                return False
        return True

    def _bindings(self, func: FunctionInfo, key: str, kind: str, scope) -> list[Binding]:
        if kind == "class":
            if key.count(".") == 1:
                return self.scopes.attr(scope, key.split(".", 1)[1])  # type: ignore[arg-type]
            # ``self.state.scaler``: the attribute of the object ``self.state`` holds (a dataclass
            # field, an attribute its class binds)
            base, _, last = key.rpartition(".")
            return [b for v in self.values.of_key(func, base) if v.kind == "instance" and v.data is not None
                    for b in self.scopes.attr(v.data, last)]
        if kind == "local":
            return self.scopes.local(func, key)
        out = self.scopes.local(self.scopes.top, key)
        if "." in key:
            # a dotted chain (``trainer.scaler``): bindings of it in any function, and the
            # attribute of an object of this file's classes
            out = [b for b in self.b.bindings if b.name == key and b.kind != "item"]
            base = key.rsplit(".", 1)[0]
            for v in self.values.of_key(func, base):
                if v.kind == "instance" and v.data is not None:
                    out = out + self.scopes.attr(v.data, key.rsplit(".", 1)[1])
        return out

    def _configured(self, key: str) -> bool:
        last = key.rsplit(".", 1)[-1]
        return key in self.extra or last in self.extra

    def _use_evidence(self) -> set[tuple]:
        """(scope kind, scope id, key) of receivers whose use proves a GradScaler."""
        out: set[tuple] = set()
        for f in self.b.functions:
            for key in self._used_as_scaler(f):
                out.add(self._scope_key(f, key))
        return out

    def _used_as_scaler(self, f: FunctionInfo) -> set[str]:
        memo = self.__dict__.setdefault("_used_memo", {})
        hit = memo.get(f)
        if hit is None:
            hit = memo[f] = self._compute_used_as_scaler(f)
        return hit

    def _assignments_of(self, f: FunctionInfo) -> list:
        index = self.__dict__.get("_assign_index")
        if index is None:
            index = self._assign_index = {}
            for a in self.b.assignments:
                index.setdefault(a.func, []).append(a)
        return index.get(f, [])

    def _compute_used_as_scaler(self, f: FunctionInfo) -> set[str]:
        out: set[str] = set()
        scaled_names: dict[str, str] = {}
        by_recv: dict[str, set[str]] = {}
        for a in self._assignments_of(f):
            if isinstance(a.value, cst.Call):
                fn = a.value.func
                if isinstance(fn, cst.Attribute) and fn.attr.value == "scale":
                    recv = expr_key(fn.value)
                    if recv is not None:
                        for t in a.targets:
                            if t is not None:
                                scaled_names[t] = recv
        misfit: set[str] = set()  # ``x.step()``: GradScaler's step takes the optimizer, scale the outputs
        for c in f.calls:
            if c.method is None:
                continue
            if c.recv is not None and c.method in ("step", "scale") and not c.node.args:
                misfit.add(c.recv)
            if c.recv is not None and c.method in SCALER_METHODS:
                by_recv.setdefault(c.recv, set()).add(c.method)
            if c.method == "unscale_" and c.recv is not None:
                out.add(c.recv)
            elif c.method == "backward":
                inner = c.recv_node
                if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "scale":
                    recv = expr_key(inner.func.value)
                    if recv is not None:
                        out.add(recv)
                elif c.recv in scaled_names:
                    out.add(scaled_names[c.recv])
        for recv, methods in by_recv.items():
            if recv in misfit:
                continue
            if "scaler" in recv.rsplit(".", 1)[-1].lower() and methods & SCALER_METHODS:
                out.add(recv)
            elif self.extra and self._configured(recv) and methods & SCALER_METHODS:
                out.add(recv)
        return out

    # --- facts for rules ---------------------------------------------------------------------

    def _tables(self) -> tuple[set[str], dict, dict]:
        """Every scaler key, grouped by scope: module keys, class attributes, locals."""
        hit = getattr(self, "_tables_memo", None)
        if hit is not None:
            return hit
        module: set[str] = set()
        classes: dict[ClassInfo, set[str]] = {}
        local: dict[FunctionInfo, set[str]] = {}
        seen: set[tuple] = set()
        candidates = [(b.func, b.name) for b in self.b.bindings if b.kind != "item" and b.cls is None]
        candidates += [(b.func, b.name) for b in self.b.bindings if b.kind in ("ann", "assign") and b.cls is not None]
        for f in self.b.functions:
            candidates.extend((f, k) for k in self._used_as_scaler(f))
        for func, key in candidates:
            if func is None:
                continue
            kind, scope = self.scope_of(func, key)
            sk = (kind, id(scope), key)
            if sk in seen:
                continue
            seen.add(sk)
            if not self.is_scaler(func, key):
                continue
            if kind == "class":
                classes.setdefault(scope, set()).add(key)
            elif kind == "local":
                local.setdefault(scope, set()).add(key)
            else:
                module.add(key)
        for c in self.b.classes:
            for bnd in self.scopes._class_body.get(c, {}).values():
                for b in bnd:
                    if b.kind in ("ann", "assign") and any(v.kind == "scaler" for v in self.values.binding(b)):
                        classes.setdefault(c, set()).add(f"self.{b.name}")
        self._tables_memo = (module, classes, local)
        return self._tables_memo

    @property
    def module_keys(self) -> set[str]:
        return self._tables()[0]

    @property
    def class_attrs(self) -> dict:
        return self._tables()[1]

    @property
    def local_keys(self) -> dict:
        return self._tables()[2]

    def _base(self, cls: ClassInfo) -> ClassInfo | None:
        bases = self.scopes.base_classes(cls)
        return bases[0] if bases else None

    def keys_in(self, func: FunctionInfo) -> list[str]:
        """Scaler keys this function's code can name: its own locals, ``self.<attr>`` of its
        class, module names (sorted)."""
        out = set()
        for name in self.scopes._local.get(func, {}):
            if self.is_scaler(func, name):
                out.add(name)
        cls = owner_class(func)
        if cls is not None:
            for c in self.scopes.mro(cls):
                for attr in set(self.scopes._self_attrs.get(c, {})) | set(self.scopes._class_body.get(c, {})):
                    if self.is_scaler(func, f"self.{attr}"):
                        out.add(f"self.{attr}")
        if not func.is_module:
            out.update(n for n in self.module_scalers() if not func.is_local(n))
        return sorted(out)

    def module_scalers(self) -> list[str]:
        top = self.scopes.top
        return sorted(n for n in self.scopes._local.get(top, {}) if "." not in n and self.is_scaler(top, n))

    def escapes(self, key: str) -> bool:
        """``key`` is read as a value somewhere (passed, returned, aliased), or, for
        ``self.<attr>``, the owning object itself is handed to other code."""
        for f, texts in self.b.value_texts.items():
            if key in texts:
                return True
            if key.startswith("self.") and "self" in texts and owner_class(f) is not None:
                return True
        return False

    def owned(self, func: FunctionInfo, key: str) -> bool:
        """``key`` holds a scaler its scope made itself: every binding of it (in the function,
        the class for ``self.<attr>``, or the module) is a GradScaler constructor or None."""
        kind, scope = self.scope_of(func, key)
        found = False
        for a in self.b.assignments:
            if key not in a.targets:
                continue
            if kind == "local" and a.func is not scope:
                continue
            if kind == "class" and owner_class(a.func) is not scope:
                continue
            if kind == "module" and not a.func.is_module and a.func.is_local(key.split(".", 1)[0]):
                continue
            if self.ctor_in(a.value) is not None:
                found = True
            elif not (isinstance(a.value, cst.Name) and a.value.value == "None"):
                return False
        return found

    def any(self) -> bool:
        module, classes, local = self._tables()
        return bool(self.ctor_sites or self.extra or module or any(classes.values()) or any(local.values()))


def _negative(b: Binding, vals) -> bool:
    """A binding that cannot hold a GradScaler: another class's object, a literal (not None),
    an annotation naming another class. Factories (unknown results) are no evidence."""
    for v in vals:
        if v.kind == "literal" and v.data is not None:
            return True
        if v.kind in _NEGATIVE:
            return True
    return False


def _dotted(node: cst.BaseExpression) -> str | None:
    from .names import dotted_text

    return dotted_text(node)


def _alias_source(v) -> str | None:
    if isinstance(v, (cst.Name, cst.Attribute)):
        return expr_key(v)
    if isinstance(v, cst.IfExp):
        for arm in (v.body, v.orelse):
            if isinstance(arm, (cst.Name, cst.Attribute)) and not (isinstance(arm, cst.Name) and arm.value == "None"):
                return expr_key(arm)
    return None


__all__ = ["ScalerTable", "owner_class", "SCALER_METHODS", "ClassInfo"]
