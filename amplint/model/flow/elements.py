"""Scalers of a container, one per pass of a loop over it.

A loop variable that holds another scaler of one container each pass (``for opt, scaler in
zip(opts, scalers)``, ``scaler = scalers[name]``) is one scaler per pass: each pass starts from
the facts the container's elements had when the loop began (``scalers[next]``), and what a pass
leaves its scaler in is what the loop leaves the container's other elements in (``scalers[*]``),
so ``scaler.update()`` after the loop updates only the last one, and the others meet their next
``step()`` un-updated.
"""

from __future__ import annotations

import libcst as cst

from ..syntax import expr_key
from .frames import Frame
from .state import NOFACTS, State


class Elements:
    """Mixin of :class:`~.loops.Loops`."""

    #: scaler keys bound to one element of a container per pass of the loops being followed
    elements: dict[str, str] = {}

    def take_element(self, st: State, key: str) -> State:
        """``scaler = scalers[name]`` in a loop over the container: an element not run yet."""
        return element_take(st, {key: self.elements[key]})

    def element_scalers(self, frame: Frame, s: cst.For, variant: frozenset[str]) -> dict[str, str]:
        """Scaler keys the loop binds to one element of a container per pass -> the key of that
        container's elements (``scalers[*]``); the container must be a name or attribute."""
        sources = _element_sources(s.target, s.iter)
        for b in self.loop_bindings(s):
            # ``scaler = scalers[name]``, ``scaler = scalers.get(name)`` with a variant key
            if b.func is frame.func and b.kind == "assign" and not b.unpack and b.name in variant:
                v = b.value
                if isinstance(v, cst.Subscript) and mentions(v.slice[0] if v.slice else v, variant):
                    sources.setdefault(b.name, v.value)
                elif (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "get"
                      and v.args and mentions(v.args[0].value, variant)):
                    sources.setdefault(b.name, v.func.value)
        out = {}
        for name, src in sources.items():
            ckey = expr_key(src)
            if name in variant and ckey is not None and self.is_scaler(frame, name):
                out[self.canon(frame, name) or name] = (self.canon(frame, ckey) or ckey) + "[*]"
        return out


def mentions(node: cst.CSTNode, names) -> bool:
    from ..syntax import children

    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name) and n.value in names:
            return True
        if isinstance(n, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(children(n))
    return False


def _element_sources(target: cst.BaseExpression, it: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
    """Loop variables bound to one element of a container per pass -> the container
    (``for k, (m, opt, scaler) in enumerate(zip(models, opts, scalers))``, ``for name, scaler in
    scalers.items()``, ``for scaler in scalers.values()``)."""
    items = target.elements if isinstance(target, (cst.Tuple, cst.List)) else None
    if items is not None and any(isinstance(e, cst.StarredElement) for e in items):
        return {}
    if isinstance(it, cst.Call) and it.args and all(a.keyword is None and not a.star for a in it.args):
        fn = it.func
        if isinstance(fn, cst.Name) and fn.value == "enumerate":
            return _element_sources(items[1].value, it.args[0].value) if items is not None and len(items) == 2 else {}
        if isinstance(fn, cst.Name) and fn.value in ("reversed", "list", "tuple", "sorted"):
            return _element_sources(target, it.args[0].value)
        if isinstance(fn, cst.Name) and fn.value == "zip":
            out: dict = {}
            if items is not None and len(items) == len(it.args):
                for e, a in zip(items, it.args):
                    out.update(_element_sources(e.value, a.value))
            return out
        return {}
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Attribute) and not it.args:
        if it.func.attr.value == "values":
            return _element_sources(target, it.func.value)
        if it.func.attr.value == "items" and items is not None and len(items) == 2 and isinstance(items[1].value, cst.Name):
            return {items[1].value.value: it.func.value}
        return {}
    if isinstance(target, cst.Name) and isinstance(it, (cst.Name, cst.Attribute)):
        return {target.value: it}
    return {}


def is_elements(key: str) -> bool:
    """The key of a container's elements (their optimizers' stages are each element's own)."""
    return key.endswith(("[*]", "[next]"))


def _next(container: str) -> str:
    return container[:-3] + "[next]"


def elements_begin(st: State, elements: dict[str, str]) -> State:
    """Loop entry: the elements' facts as the loop finds them, for every pass to start from."""
    for container in set(elements.values()):
        st = st.with_facts(_next(container), st.facts(container))
    return st


def element_take(st: State, elements: dict[str, str]) -> State:
    """A pass starts: its scaler is an element the loop has not run yet."""
    for key, container in elements.items():
        f = st.facts(_next(container))
        st = st.with_facts(key, f.but(iters=None) if f.iters is not None else f)
    return st


def element_leave(st: State, elements: dict[str, str]) -> State:
    """A pass ends: its scaler joins the elements the loop has run (their gradients and scaled
    backwards are their own models', not facts about the container)."""
    for key, container in elements.items():
        f = st.facts(key)
        if f != NOFACTS:
            f = f.but(grads=None, sbw=frozenset(), iters=None)
        st = st.with_facts(container, f)
    return st


def elements_end(st: State, elements: dict[str, str]) -> State:
    for container in set(elements.values()):
        if st.has(_next(container)):
            st = st.with_facts(_next(container), NOFACTS)
    return st
