"""Positions computed per top-level statement (anchored on CPython's line numbers) equal
LibCST's whole-module PositionProvider, for every node."""

from __future__ import annotations

import ast

import libcst as cst
import pytest
from helpers import CASES, FIXTURES
from libcst.metadata import MetadataWrapper, PositionProvider

from amplint.engine import Resolver, decode
from amplint.literals import blank_magics

TRICKY = [
    "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n\n\n# a comment\nimport torch  # trailing\n\n\n@dec\n# between\n@dec2(\n    1,\n)\n\ndef f(x):\n    return x\n",
    "import torch\r\n\r\n# c\r\nclass A(object):\r\n    '''doc\r\n    string'''\r\n\r\n    @property\r\n    def x(self): return 1\r\n",
    "x = 1; y = 2\nif x:\n\tz = (\n\t\t1 +\n\t\t2)\nelse: pass\n",
    'x = """\nmulti\nline\n""" ; s = torch.amp.GradScaler()\n\n\n\nasync def g():\n    async with a as b:\n        pass\n',
    "def f():\n    pass\n# trailing comment at the end\n\n",
    "\n\n\n",
    "match x:\n    case [1, *rest]:\n        pass\n    case {'a': b}:\n        pass\n",
    "x = 'é😀'; y = f(a, b)\n",
    # nested bodies: each has its own indentation, comments dedented or not, continuation lines
    "class T:\n   # c\n   @staticmethod\n\n   @dec(\n  1)\n   async def f(x):\n    if x:\n      a = 1; b = (2,\n 3)\n"
    "# dedented\n      for i in x:\n         while i:\n          with a as b:\n             try:\n               s.step(o)\n"
    "             except E:\n               pass\n             # trailing in block\n    else:\n        g()\n   x = 1\n",
    "class T:\n\tdef f(self):\n\t\tif x:\n\t\t\ts.step(o)  # c\n\t\t# dedent\n\t# more\n\n\tasync def g(self): pass\n",
    "def f():\n    if a: b()\n    elif c:\n        d()\n    else:\n        e = [\n1,\n]\n    class C: pass\n"
    "    try:\n        pass\n    finally:\n        q()\n",
    "def f():\r\n    x = 1\r\n\r\n    # c\r\n    def g():\r\n        return x\r\n",
]


def _all_nodes(module):
    from amplint.model.syntax import child_fields

    stack = [module]
    while stack:
        n = stack.pop()
        yield n
        for name in child_fields(type(n)):
            v = getattr(n, name)
            if isinstance(v, (list, tuple)):
                stack.extend(x for x in v if isinstance(x, cst.CSTNode))
            elif isinstance(v, cst.CSTNode):
                stack.append(v)


def _check(text: str) -> None:
    module = cst.parse_module(text)
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    resolver = Resolver(module, decode(text.encode()), ast.parse(text))
    checked = 0
    for node in _all_nodes(module):
        if node is module or node not in full:
            continue
        r = full[node]
        assert resolver.position(node) == (r.start.line, r.start.column, r.end.line, r.end.column), (type(node), node)
        checked += 1
    assert not resolver._full or not module.body, "fell back to the whole-module provider"
    # every anchor statement placed on its own (a fresh resolver each), its whole subtree
    for anchor in {id(a): a for a in resolver._index().values()}.values():
        alone = Resolver(module, decode(text.encode()), ast.parse(text))
        alone.position(anchor)
        assert not alone._full
        for node, got in alone._positions.items():
            r = full[node]
            assert got == (r.start.line, r.start.column, r.end.line, r.end.column), (type(anchor), type(node), node)


@pytest.mark.parametrize("text", TRICKY)
def test_tricky_layouts(text):
    _check(text)


def test_a_node_in_a_method_is_placed_without_generating_the_class():
    text = "class T:\n    def a(self):\n        x = 1\n\n    def b(self):\n        if y:\n            s.step(o)\n"
    module = cst.parse_module(text)
    resolver = Resolver(module, decode(text.encode()), ast.parse(text))
    method_b = module.body[0].body.body[1]
    call = method_b.body.body[0].body.body[0].body[0].value
    assert resolver.position(call) == (7, 12, 7, 21)
    method_a = module.body[0].body.body[0]
    assert method_a not in resolver._positions and module.body[0] not in resolver._positions


SOURCES = sorted(FIXTURES.glob("AMP*/*.py")) + sorted(CASES.rglob("*.py"))[:40]


@pytest.mark.parametrize("path", SOURCES, ids=[f"{p.parent.name}/{p.name}" for p in SOURCES])
def test_real_files(path):
    text = path.read_text(encoding="utf-8")
    try:
        compile(text, str(path), "exec")
    except SyntaxError:
        text = blank_magics(text)[0]  # a notebook exported as a script: linted as the engine reads it
    _check(text)
