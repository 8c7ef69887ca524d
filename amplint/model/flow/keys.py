"""The names of a path's objects: the flow key a name or expression has in a frame (a callee's
locals prefixed by its frame's tag, parameters by what the caller bound), the class of the
object a key holds, and the key of the optimizer a scaler call names."""

from __future__ import annotations

import re

import libcst as cst

from ..scopes import owner_class
from ..structure import CallSite, FunctionInfo
from ..syntax import expr_key
from .objects import Objects

_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAG = re.compile(r"[^#]*#(\d+)\.")  # a callee frame's prefix of its locals' keys


class Keys(Objects):
    """Mixin of :class:`~.interpret.Flow` (through :class:`~.interproc.Interproc`): flow keys."""

    def instance(self, func, scope, key: str):
        """The class of the object ``key`` holds in ``scope`` (a function, None for a module
        name, a class for ``self.<attr>``), from the bindings of ``func``'s module."""
        return self._object_tables(func)[0].get((scope, key))

    def held_instance(self, frame, key: str | None):
        """The class of the object a canonical key of this call chain names (a parameter bound
        to the caller's ``loss_scaler = NativeScaler()``): the key's frame is the one its tag
        names (none: the root)."""
        if key is None:
            return None
        mt = _TAG.match(key)
        if mt is None:
            fn, name = frame.stack[0], key
        else:
            depth = int(mt.group(1))
            if depth >= len(frame.stack):
                return None
            fn, name = frame.stack[depth], key[mt.end():]
        if name.startswith("self."):
            return self.instance(fn, owner_class(fn), name)
        if not name.isidentifier():
            return None
        return self.instance(fn, fn, name) or self.instance(fn, None, name)

    def _object_tables(self, func) -> tuple[dict, dict]:
        model = getattr(func, "owner_model", None) or getattr(self.m, "primary", self.m)
        hit = self._tables.get(id(model))
        if hit is None:
            self._tables[id(model)] = ({}, {})  # a class table asking for itself: nothing
            inst = self._instance_vars(model)
            self._tables[id(model)] = (inst, {})
            hit = self._tables[id(model)] = (inst, self._class_aliases(model, inst))
        return hit

    def owner(self, func):
        return owner_class(func)

    def canon(self, frame, text: str | None, _depth: int = 0) -> str | None:
        if text is None:
            return None
        mt = _HEAD.match(text)
        head = mt.group(0) if mt else text
        rest = text[len(head):]
        alias = self.scalers.aliases.get(frame.func, {}).get(head)
        if alias is not None and _depth < 4:
            return self.canon(frame, alias + rest, _depth + 1)
        if head == "self" and _depth < 4:
            table = self._object_tables(frame.func)[1].get(owner_class(frame.func), {})
            for prefix, src in table.items():
                if text == prefix or text.startswith(prefix + "."):
                    return self.canon(frame, src + text[len(prefix):], _depth + 1)
        if head in frame.env:
            out = frame.env[head] + rest
        elif frame.tag and (frame.func.is_local(head) or head == "self"):
            out = frame.tag + text
        else:
            out = text
        return self._object_alias(out) if self.object_aliases else out

    def _object_alias(self, key: str) -> str:
        for _ in range(4):
            for prefix, src in self.object_aliases.items():
                if key == prefix or key.startswith(prefix + "."):
                    key = src + key[len(prefix):]
                    break
            else:
                return key
        return key

    def is_scaler(self, frame, text: str | None) -> bool:
        if text is None:
            return False
        if text in frame.scaler_params:
            return True
        return self.scalers.is_scaler(frame.func, text)

    def is_scaler_in(self, func: FunctionInfo, text: str) -> bool:
        return self.scalers.is_scaler(func, text)

    def opt_key(self, frame, cs: CallSite) -> str:
        """The optimizer a scaler call (``S.step(O)``, ``S.unscale_(O)``) names, as a flow key."""
        arg = cs.arg(0, "optimizer")
        node = arg.value if arg is not None else None
        if node is None:
            return "?"
        if type(node) is cst.Name and frame.env:
            # ``opt = self.optimizers[name]`` once in a helper called with ``"d"`` and ``"g"``
            binds = self.m.scopes.local(frame.func, node.value)
            if len(binds) == 1 and binds[0].kind == "assign" and not binds[0].unpack \
                    and type(binds[0].value) is cst.Subscript and binds[0].order < cs.order:
                node = binds[0].value
        key = self._literal_index(frame, node) if type(node) is cst.Subscript else None
        key = key or expr_key(node)
        if key is None:
            return self.anonymous(node)
        return self.canon(frame, key) or key

    def _literal_index(self, frame, node: cst.Subscript) -> str | None:
        """``X[name]`` with ``name`` a parameter the caller passed a literal (``"d"``, ``0``):
        ``X["d"]``, so the helper's two calls step two optimizers."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        index = node.slice[0].slice.value
        lit = frame.env.get(index.value) if type(index) is cst.Name else None
        head = expr_key(node.value)
        if lit is None or head is None or not (lit[:1] in "\"'" or lit.isdigit()):
            return None
        return f"{head}[{lit}]"

    def anonymous(self, node) -> str:
        """A key of its own for an expression no name reaches (a call's result), numbered in the
        order the flow meets them (not by address, so that keys sort the same in every run)."""
        names = self._anonymous
        key = names.get(node)
        if key is None:
            key = names[node] = f"?{len(names)}"
        return key
