"""Hooks called by name: a runner's ``for cb in self.callbacks: getattr(cb, event)(self)`` (the
event a constant its caller passes), where the hook objects come from code the flow cannot see
(the runner's constructor argument).
The classes of the analysed modules that override that method of a base class that also has it
(a ``Callback`` base with no-op hooks) are the candidates: each path runs one of them, and which
one is a condition of the path (see :meth:`~.calls.Calls.dispatch`)."""

from __future__ import annotations

import libcst as cst

from ..structure import CallSite
from ..syntax import expr_key

#: the most hook classes one call is followed into
MAX_HOOK_CLASSES = 8


class Hooks:
    """Mixin of :class:`~.interpret.Flow`: calls of hooks by name."""

    def hook_call(self, frame, cs: CallSite) -> tuple[str, str] | None:
        """``(receiver key, method name)`` of a hook called by name on the target of a ``for`` of
        this function: ``getattr(R, "name")(...)``, or the name a constant argument of the
        caller binds. (``R.on_backward(...)`` on an object of unknown class stays unknown code: a
        union over every class with that hook loses what the hook returns, allennlp's
        ``backward_called``, and made false findings.)"""
        f = cs.node.func
        if isinstance(f, cst.Name):
            # ``handler = getattr(cb, event, None)`` ... ``handler(self)``: the one binding of the name
            bound = [b for b in self.m.scopes.local(frame.func, f.value) if b.kind != "param"]
            f = bound[0].value if len(bound) == 1 and bound[0].kind == "assign" and not bound[0].unpack else None
        if isinstance(f, cst.Call) and isinstance(f.func, cst.Name) and f.func.value == "getattr" and len(f.args) in (2, 3) \
                and all(a.keyword is None and not a.star for a in f.args):
            recv = expr_key(f.args[0].value)
            name = _constant_name(frame, f.args[1].value)
            if recv is None or name is None or not self._loop_target(frame.func, recv):
                return None
            return recv, name
        return None

    def _loop_target(self, func, name: str) -> bool:
        return any(b.kind == "for" for b in self.m.scopes.local(func, name))

    def hook_classes(self, name: str) -> list:
        """The classes of the analysed modules whose ``name`` overrides a base class's ``name``,
        and those bases; empty when no class overrides it, or more than :data:`MAX_HOOK_CLASSES`."""
        hit = self._hook_memo.get(name)
        if hit is None:
            out: list = []
            scopes = self.m.scopes
            for cls in self._visible_classes():
                if name not in cls.methods:
                    continue
                bases = [b for b in scopes.mro(cls)[1:] if name in b.methods]
                if bases:
                    for c in [cls] + bases:
                        if c not in out:
                            out.append(c)
            hit = self._hook_memo[name] = out if 1 < len(out) <= MAX_HOOK_CLASSES else []
        return hit

    def _visible_classes(self) -> list:
        """The classes of the analysed modules, and the project classes they import by name (the
        callbacks a training script builds and hands to the runner)."""
        models = list(getattr(self.m, "models", [self.m]))
        out = [c for m in models for c in m.classes]
        for m in models:
            link = getattr(m, "project", None)
            if link is None:
                continue
            for local, qual in m.imports.names.items():
                if not local[:1].isupper():
                    continue
                hit = link.symbol(qual)
                if hit is not None and hasattr(hit[1], "methods") and hit[1] not in out:
                    out.append(hit[1])
        return out

    _hook_memo: dict


def _constant_name(frame, node) -> str | None:
    if isinstance(node, cst.SimpleString):
        text = node.value
    elif isinstance(node, cst.Name):
        text = frame.env.get(node.value, "")
    else:
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and text[1:-1].isidentifier():
        return text[1:-1]
    return None
