"""Fix edits shared by the rules: the plans that insert, move, delete or rewrite statements and
calls. Rules decide *whether* a fix is offered from model facts; the edits are built here.

No LibCST import at module level: the CLI imports every rule before deciding to parse.
"""

from __future__ import annotations

from .base import FixPlan, NodeEdit

_JUMPS = ("Return", "Raise", "Break", "Continue")


def _cst():
    import libcst as cst

    return cst


# --- statements and blocks -----------------------------------------------------------------------


def block_of(model, stmt) -> tuple[list | None, int]:
    """(statement list, index) of the block holding ``stmt`` directly."""
    hit = model.blocks.get(stmt)
    return (hit[0], hit[1]) if hit is not None else (None, -1)


def is_line(stmt) -> bool:
    return isinstance(stmt, _cst().SimpleStatementLine)


def is_simple_statement(stmt, node) -> bool:
    """``stmt`` is a line holding only the expression statement ``node``."""
    cst = _cst()
    return (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)
            and stmt.body[0].value is node)


def jumps(line) -> bool:
    cst = _cst()
    return isinstance(line, cst.SimpleStatementLine) and any(type(x).__name__ in _JUMPS for x in line.body)


def straight_lines(body: list, start: int, end: int) -> bool:
    """``body[start:end]`` are simple lines with no return/raise/break/continue."""
    return all(is_line(s) and not jumps(s) for s in body[start:end])


def contains(root, target) -> bool:
    from ..model.syntax import contains as _contains

    return _contains(root, target)


def runs_before_in_block(model, anchor, stmt) -> bool:
    """``anchor`` sits in ``stmt``'s block (or inside a statement of it) before ``stmt``, and no
    ``return``/``raise``/``break``/``continue`` of the block between them leaves it (a step after a
    ``return`` never runs)."""
    cst = _cst()
    block, index = block_of(model, stmt)
    if block is None:
        return False
    first = next((i for i, s in enumerate(block[:index]) if contains(s, anchor)), None)
    if first is None:
        return False
    leaves = (cst.Return, cst.Raise, cst.Break, cst.Continue)
    return not any(isinstance(s, cst.SimpleStatementLine) and any(isinstance(x, leaves) for x in s.body)
                   for s in block[first:index])


def simple_receiver(node) -> bool:
    cst = _cst()
    return isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and not getattr(node, "lpar", None)


def paren(node, text: str) -> str:
    cst = _cst()
    return text if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) else f"({text})"


# --- calls -------------------------------------------------------------------------------------------


def arg_texts(model, call) -> list[tuple[str | None, str]] | None:
    """``[(keyword or None, value text)]`` for a call without ``*``/``**`` arguments."""
    out = []
    for a in call.args:
        if a.star:
            return None
        out.append((a.keyword.value if a.keyword is not None else None, model.code_for(a.value)))
    return out


def render_call(func_text: str, args: list[tuple[str | None, str]]) -> str:
    return f"{func_text}({', '.join(f'{k}={v}' if k is not None else v for k, v in args)})"


def replace(node, text: str, title: str, applicability: str = "safe") -> FixPlan:
    return FixPlan(applicability, title, [NodeEdit("replace", node, text)])


def delete_line(stmt, title: str, applicability: str = "unsafe") -> FixPlan:
    return FixPlan(applicability, title, [NodeEdit("delete_stmt", stmt)])


def insert_after(stmt, text: str, title: str, applicability: str = "safe") -> FixPlan:
    return FixPlan(applicability, title, [NodeEdit("insert_after", stmt, text)])


def insert_before(stmt, text: str, title: str, applicability: str = "safe") -> FixPlan:
    return FixPlan(applicability, title, [NodeEdit("insert_before", stmt, text)])


def wrap_in_scale(model, site, scaler: str | None, title: str) -> FixPlan | None:
    """``loss.backward(...)`` -> ``S.scale(loss).backward(...)``."""
    recv = site.recv_node
    if scaler is None or site.method != "backward" or recv is None or not simple_receiver(recv):
        return None
    return replace(recv, f"{scaler}.scale({model.code_for(recv)})", title)


# --- the sequencing fixes ------------------------------------------------------------------------


def insert_update(model, site, scaler: str, title: str) -> FixPlan | None:
    """AMP001: ``S.update()`` after the step, when it is the function's only step or update of
    ``S`` and nothing in the file updates a scaler of that name (where else the update belongs
    needs a human)."""
    if _steps_and_updates(model, site.func).get(site.recv, 0) != 1 or site.stmt is None or not is_simple_statement(site.stmt, site.node):
        return None
    last = (site.recv or "").rsplit(".", 1)[-1]
    if any(c.method == "update" and (c.recv or "").rsplit(".", 1)[-1] == last for c in model.calls):
        return None
    if _call_counts(model).get(site.func, 0) > 1 or model.has_external_callers(site.func):
        return None  # a helper (``with amp_step(scaler, opt_g): ...``) stepping for several callers
    opt = site.arg(0, "optimizer")
    head = (model.code_for(opt.value) if opt is not None else "").split(".", 1)[0].split("[", 1)[0]
    if any(b.kind == "for" and b.name == head and b.node is not None and any(loop in site.loops for loop in b.loops + (b.stmt,))
           for b in model.bindings if b.func is site.func):
        return None  # ``for opt in optimizers: scaler.step(opt)``: the update belongs after the loop
    return insert_after(site.stmt, f"{scaler}.update()", title, "unsafe")


def _call_counts(model) -> dict:
    """How often the file calls each of its functions (once per model)."""
    hit = model.__dict__.get("_edit_call_counts")
    if hit is None:
        hit = model.__dict__["_edit_call_counts"] = {}
        for c in model.calls:
            callee = model.callee_of(c)
            if callee is not None:
                hit[callee] = hit.get(callee, 0) + 1
    return hit


def _steps_and_updates(model, func) -> dict:
    """How many ``step``/``update`` calls of each receiver ``func`` makes (once per function)."""
    memo = model.__dict__.setdefault("_edit_step_counts", {})
    counts = memo.get(id(func))
    if counts is None:
        counts = memo[id(func)] = {}
        for c in func.calls:
            if c.method in ("step", "update"):
                counts[c.recv] = counts.get(c.recv, 0) + 1
    return counts


def insert_unscale(model, site, scaler: str, opt: str | None, title: str) -> FixPlan | None:
    """AMP002: ``S.unscale_(O)`` before the clip (before the clip's own loop, for a per-parameter
    edit), when the function steps exactly one optimizer through S, nothing unscales it yet, and
    the clip runs before that step in its block."""
    if opt is None or not is_line(site.stmt):
        return None
    func = site.func
    if any(c.method == "unscale_" and c.recv == scaler for c in func.calls):
        return None
    steps = [c for c in func.calls if c.method == "step" and c.recv == scaler]
    if len(steps) != 1:
        return None
    inner = [loop for loop in site.loops if loop not in steps[0].loops]
    anchor = inner[0] if inner else site.stmt
    if not runs_before_in_block(model, anchor, steps[0].stmt):
        return None  # a clip on every micro-step with the step gated: unscale_ would run twice
    return insert_before(anchor, f"{scaler}.unscale_({opt})", title)


def step_through_scaler(model, site, scaler: str | None, opt: str, title: str) -> FixPlan | None:
    """AMP003: ``O.step()`` -> ``S.step(O)`` when the function updates S after it (in the loops it
    is in) and does not step O through S already."""
    if scaler is None or site.node.args or site.recv_node is None:
        return None
    if not any(c.method == "update" and c.recv == scaler and c.order > site.order
               and all(loop in c.loops for loop in site.loops) for c in site.func.calls):
        # a step after the last update would be left for the next iteration's update, and one
        # in a loop the update is not in would step again before it (AMP001)
        return None
    for c in site.func.calls:
        if c.method == "step" and c.recv == scaler:
            a = c.arg(0, "optimizer")
            if a is not None and model.code_for(a.value) == opt:
                return None
    return replace(site.node, f"{scaler}.step({opt})", title)


def delete_duplicate(model, site, first_site, title: str) -> FixPlan | None:
    """AMP005: delete the second of two identical ``unscale_`` lines of one straight-line block."""
    if first_site is None or first_site is site or first_site.func is not site.func:
        return None
    if not is_simple_statement(site.stmt, site.node) or not is_simple_statement(first_site.stmt, first_site.node):
        return None
    if model.code_for(site.node) != model.code_for(first_site.node):
        return None
    body, i = block_of(model, site.stmt)
    if body is None or first_site.stmt not in body:
        return None
    j = body.index(first_site.stmt)
    if j >= i or not straight_lines(body, j, i):
        return None
    return delete_line(site.stmt, title, "safe")


def move_under_previous_guard(model, site, title: str) -> FixPlan | None:
    """AMP006: move ``S.update()`` to the end of the ``if`` right before it that steps S."""
    cst = _cst()
    if not is_simple_statement(site.stmt, site.node):
        return None
    body, i = block_of(model, site.stmt)
    if body is None or i < 1:
        return None
    guard = body[i - 1]
    if not isinstance(guard, cst.If) or guard.orelse is not None or not isinstance(guard.body, cst.IndentedBlock):
        return None
    inner = [c for c in site.func.calls if contains(guard.body, c.node)]
    if not any(c.method == "step" and c.recv == site.recv and model.is_scaler_call(c.node) for c in inner):
        return None
    if any(c.method == "update" and c.recv == site.recv for c in inner):
        return None
    last = guard.body.body[-1]
    if not is_line(last) or jumps(last):
        return None
    return FixPlan("unsafe", title, [NodeEdit("insert_after", last, model.code_for(site.node)),
                                     NodeEdit("delete_stmt", site.stmt)])


def delete_first_update(model, first, site, title: str) -> FixPlan | None:
    """AMP007: with exactly two updates of S in the block, the earlier ``first`` and ``site``,
    delete the first one."""
    cst = _cst()
    updates = [c for c in site.func.calls if c.method == "update" and c.recv == site.recv]
    if len(updates) != 2 or updates[1] is not site or updates[0] is not first:
        return None
    if not is_simple_statement(first.stmt, first.node) or not is_simple_statement(site.stmt, site.node):
        return None
    body, i = block_of(model, site.stmt)
    if body is None or first.stmt not in body:
        return None
    for s in body[body.index(first.stmt):i]:
        if isinstance(s, cst.With):
            if not all(is_line(x) for x in getattr(s.body, "body", ())):
                return None
        elif not is_line(s) or jumps(s):
            return None
    return delete_line(first.stmt, title)


def hoist_out_of_loop(model, site, title: str) -> FixPlan | None:
    """AMP008: move ``scaler = GradScaler(...)`` before the loop it sits in directly."""
    cst = _cst()
    if not site.loops or not isinstance(site.stmt, cst.SimpleStatementLine) or len(site.stmt.body) != 1:
        return None
    assign = site.stmt.body[0]
    if not isinstance(assign, cst.Assign) or assign.value is not site.node:
        return None
    loop = site.loops[-1]
    if not isinstance(loop.body, cst.IndentedBlock) or site.stmt not in loop.body.body:
        return None
    return FixPlan("unsafe", title, [NodeEdit("insert_before", loop, model.code_for(assign).strip()),
                                     NodeEdit("delete_stmt", site.stmt)])


def unscaled_metric(model, site) -> FixPlan | None:
    """AMP201: ``S.scale(x).item()`` -> ``x.item()``, ``float(S.scale(x))`` -> ``float(x)``."""
    parent = model.parent_call_of(site.node)
    arg = site.arg(0, "outputs")
    if arg is None or parent is None:
        return None
    inner = model.code_for(arg.value)
    if parent.method == "item" and parent.recv_node is site.node:
        return replace(site.node, paren(arg.value, inner), "Report the unscaled value")
    if parent.text == "float" and len(parent.node.args) == 1 and parent.node.args[0].value is site.node:
        return replace(site.node, inner, "Report the unscaled value")
    return None


def init_scale_by_keyword(model, ctor, head: str) -> FixPlan | None:
    """AMP016: ``GradScaler(1024.0, ...)`` -> ``GradScaler(init_scale=1024.0, ...)`` (every positional
    argument named by the old ``init_scale``-first order)."""
    from ..torch_api import INIT_SCALE_FIRST

    args = arg_texts(model, ctor.site.node)
    if args is None:
        return None
    positional = [v for k, v in args if k is None]
    keywords = [(k, v) for k, v in args if k is not None]
    if ctor.family == "sharded" and len(positional) > 1:
        return None  # ShardedGradScaler swaps growth/backoff: the intent is unclear
    if len(positional) > len(INIT_SCALE_FIRST):
        return None
    named = list(zip(INIT_SCALE_FIRST, positional))
    if {k for k, _ in named} & {k for k, _ in keywords}:
        return None
    return replace(ctor.site.node, render_call(head, named + keywords), "Pass the number as `init_scale=`")


# --- AMP015 ----------------------------------------------------------------------------------------


def unscaled_inline_metric(model, site, use, title) -> FixPlan | None:

    arg = site.arg(0, "outputs")
    if arg is None:
        return None
    text = model.code_for(arg.value)
    if not simple_receiver(arg.value):
        cst = _cst()

        parent, _ = use.parent()
        if not isinstance(parent, cst.Arg):
            text = f"({text})"
    return FixPlan("safe", title, [NodeEdit("replace", site.node, text)])


def unscaled_bound_metric(model, site, target, assign, kinds, uses, title) -> FixPlan | None:
    cst = _cst()

    if any(k == "other" for _, k in kinds):
        return None
    arg = site.arg(0, "outputs")
    if arg is None or not isinstance(arg.value, cst.Name):
        return None
    source = arg.value.value
    name = target.value
    if name != source:
        # metric uses read the unscaled ``source`` instead, if nothing rebinds it afterwards
        start = next(u.index for u in uses if u.node is target)
        if any(u.name == source and u.store and u.index > start for u in uses):
            return None
        edits = [NodeEdit("replace", u.node, source) for u, k in kinds if k == "metric"]
        return FixPlan("safe", title, edits)
    # ``loss = scaler.scale(loss)``: bind the scaled value to a new name used by backward only
    new = "scaled_loss" if name != "scaled_loss" else None
    if new is None or any(u.name == new for u in uses) or new in site.func.assigned or new in site.func.params:
        return None
    edits = [NodeEdit("replace", target, new)]
    edits += [NodeEdit("replace", u.node, new) for u, k in kinds if k == "backward"]
    return FixPlan("safe", title, edits)


# --- AMP014 ----------------------------------------------------------------------------------------


def remove_fp16_conversion(model, site, title) -> FixPlan | None:
    from ..model.usage import block_of as _func_block

    recv = site.recv_node
    recv_text = model.code_for(recv)
    if site.method == "to":
        if any(a.star for a in site.node.args):
            return None
        rest = [a for a in site.node.args if not _is_fp16_dtype(model, a.value)]
        if rest:
            inner = ", ".join(
                f"{a.keyword.value}={model.code_for(a.value)}" if a.keyword is not None else model.code_for(a.value) for a in rest
            )
            return FixPlan("unsafe", title, [NodeEdit("replace", site.node, f"{recv_text}.to({inner})")])
    if is_simple_statement(site.stmt, site.node) or _assigns_back(model, site, recv_text):
        block = _func_block(site.func, site.stmt)
        sole = block is not None and len(block) == 1
        return FixPlan("unsafe", title, [NodeEdit("delete_stmt", site.stmt, "pass" if sole else "")])
    return FixPlan("unsafe", title, [NodeEdit("replace", site.node, recv_text)])


def _assigns_back(model, site, recv_text: str) -> bool:
    """``model = model.half()``: removing the conversion leaves ``model = model``."""
    cst = _cst()

    stmt = site.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    small = stmt.body[0]
    return (
        isinstance(small, cst.Assign)
        and small.value is site.node
        and len(small.targets) == 1
        and model.code_for(small.targets[0].target) == recv_text
    )


def _is_fp16_dtype(model, node) -> bool:
    from ..torch_api import FLOAT16

    return model.imports.qualify(node) in FLOAT16


# --- AMP101 ----------------------------------------------------------------------------------------


def deprecation_fix(model, ref, dev: str, sym: str) -> FixPlan | None:
    """``torch.cuda.amp.X(...)`` -> ``torch.amp.X("cuda", ...)`` with the old positional arguments
    passed by keyword; an unused deprecated ``from`` import removed (unsafe)."""
    from ..model import autocast_facts as AF

    fixer = getattr(model, "_deprecation_fixer", None)
    if fixer is None:
        fixer = model._deprecation_fixer = _DeprecationFixer(model, AF.tree(model))
    return fixer.fix(ref, dev, sym)


class _DeprecationFixer:
    """Builds the AMP101 fixes.  Each fix removes its own finding and nothing else: a use is
    rewritten to the fully qualified ``torch.amp`` call (so it no longer depends on the
    deprecated import), and a deprecated ``from`` import is removed once nothing uses it."""

    def __init__(self, model, view) -> None:
        self.model = model
        self.view = view

    def fix(self, ref, dev: str, sym: str) -> FixPlan | None:
        cst = _cst()

        from ..model import autocast_facts as AF

        node = ref.node
        if isinstance(node, cst.ImportAlias):
            return self._remove_import(node)
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        head = AF.ref_head(ref)
        if head is None:
            return None
        extra: list[NodeEdit] = []
        if isinstance(node, cst.Attribute) and self.model.imports.names.get(head) == "torch":
            callee = f"{head}.amp.{sym}"
        elif AF.shadowed(ref.func, "torch"):
            return None
        elif self.view.torch_bound_before(node):
            callee = f"torch.amp.{sym}"
        else:
            line = self._import_line_to_precede(head)
            if line is None:
                return None
            callee = f"torch.amp.{sym}"
            extra.append(NodeEdit("insert_before", line, "import torch"))
        edits = self._use_edits(node, dev, sym, callee)
        if edits is None:
            return None
        return FixPlan("safe", _title(callee, dev, sym), edits + extra)

    # --- one use ------------------------------------------------------------------------

    def _use_edits(self, node, dev: str, sym: str, callee: str) -> list[NodeEdit] | None:
        cst = _cst()

        parent = self.view.parent_of(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return _call_edits(self.model, parent, dev, sym, callee)
        if isinstance(parent, cst.Decorator) and parent.decorator is node and sym in ("custom_fwd", "custom_bwd"):
            return [NodeEdit("replace", node, f'{callee}(device_type="{dev}")')]
        return None

    def _import_line_to_precede(self, head: str):
        """The top-level import line binding ``head``, when ``torch`` is bound and used nowhere:
        ``import torch`` may then be added right before it."""
        cst = _cst()

        if self.view.bindings.get("torch") or self.view.uses("torch"):
            return None
        bindings = self.view.bindings.get(head, [])
        if len(bindings) != 1:
            return None
        _q, _alias, stmt = bindings[0]
        line = self.view.parent_of(stmt)
        if not isinstance(line, cst.SimpleStatementLine) or line not in self.model.module.body:
            return None
        return line

    # --- the import line ----------------------------------------------------------------

    def _remove_import(self, alias) -> FixPlan | None:
        """Delete a deprecated ``from`` import that nothing in the file uses any more."""
        cst = _cst()

        stmt = self.view.parent_of(alias)
        if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
            return None
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else (
            alias.name.value if isinstance(alias.name, cst.Name) else None)
        if local is None or self.view.uses(local) or local in _exported_names(self.model):
            return None
        if len(self.view.bindings.get(local, [])) != 1:
            return None
        title = f"Remove the unused deprecated import of `{local}`"
        names = list(stmt.names)
        if len(names) == 1:
            line = self.view.parent_of(stmt)
            block = self.view.parent_of(line) if line is not None else None
            alone = isinstance(block, cst.Module) or (isinstance(block, cst.IndentedBlock) and len(block.body) > 1)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and _no_comments(line) and alone:
                return FixPlan("unsafe", title, [NodeEdit("delete_stmt", line)])
            return None
        rest = [a for a in names if a is not alias]
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        text = self.model.module.code_for_node(stmt.with_changes(names=rest))
        return FixPlan("unsafe", title, [NodeEdit("replace", stmt, text)])


def _no_comments(line) -> bool:
    tw = line.trailing_whitespace
    return tw.comment is None


def _title(callee: str, dev: str, sym: str) -> str:
    if sym in ("custom_fwd", "custom_bwd"):
        return f'Use `{callee}(device_type="{dev}")`'
    return f'Use `{callee}("{dev}", ...)` with keyword arguments'


def _exported_names(model) -> set[str]:
    cst = _cst()

    out: set[str] = set()
    for a in model.assignments:
        if not a.func.is_module or "__all__" not in a.targets:
            continue
        v = a.value
        if isinstance(v, (cst.List, cst.Tuple, cst.Set)):
            for e in v.elements:
                if isinstance(e.value, cst.SimpleString):
                    try:
                        out.add(str(e.value.evaluated_value))
                    except Exception:  # pragma: no cover
                        pass
        else:
            out.add("*")  # computed __all__: anything may be exported
    if "*" in out:
        out |= {"autocast", "GradScaler", "custom_fwd", "custom_bwd"}
    return out


def _call_edits(model, call, dev: str, sym: str, callee: str | None) -> list[NodeEdit] | None:
    """Rewrite ``old(args)`` to the ``torch.amp`` call: device first, positionals as keywords."""
    from ..model import autocast_facts as AF

    args = list(call.args)
    if any(a.star for a in args):
        return None
    pos = [a for a in args if a.keyword is None]
    kws = [a for a in args if a.keyword is not None]
    if pos and kws and args.index(pos[-1]) > args.index(kws[0]):
        return None  # a positional after a keyword: not valid Python anyway
    new_callee = callee if callee is not None else model.code_for(call.func)
    edits: list[NodeEdit] = []
    if callee is not None:
        edits.append(NodeEdit("replace", call.func, callee))
    if sym in AF.OLD_PARAMS:
        params = AF.OLD_PARAMS[sym]
        if len(pos) > len(params):
            return None
        used = set(params[: len(pos)])
        for k in kws:
            name = k.keyword.value
            if name not in params or name in used:
                return None
            used.add(name)
        if sym == "autocast" and not _plausible_enabled(model, pos[0].value if pos else None):
            return None  # ``autocast("cuda")``: already broken, AMP102 says so
        device = f'"{dev}"'
        if not args:
            return [NodeEdit("replace", call, f"{new_callee}({device})")]
        for i, a in enumerate(pos):
            text = f"{params[i]}={model.code_for(a.value)}"
            if i == 0:
                text = f"{device}, {text}"
            edits.append(NodeEdit("replace", a, text))
        if not pos:
            edits.append(NodeEdit("replace", kws[0].keyword, f"{device}, {kws[0].keyword.value}"))
        return edits
    # custom_fwd(fwd=None, *, cast_inputs=None) / custom_bwd(bwd)
    allowed = {"custom_fwd": ("fwd", "cast_inputs"), "custom_bwd": ("bwd",)}[sym]
    if len(pos) > 1 or any(k.keyword.value not in allowed for k in kws):
        return None
    if sym == "custom_bwd" and len(args) != 1:
        return None
    device = f'device_type="{dev}"'
    if not args:
        return [NodeEdit("replace", call, f"{new_callee}({device})")]
    first = args[0]
    if first.keyword is None:
        edits.append(NodeEdit("replace", first, f"{model.code_for(first.value)}, {device}"))
    else:
        edits.append(NodeEdit("replace", first.keyword, f"{device}, {first.keyword.value}"))
    return edits


def _plausible_enabled(model, node) -> bool:
    """The old first positional (``enabled``) is not a string or a dtype literal."""
    cst = _cst()

    if node is None:
        return True
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    if isinstance(node, (cst.Name, cst.Attribute)):
        q = model.imports.qualify(node)
        from ..torch_api import dtype_kind

        if dtype_kind(q) is not None:
            return False
    return True


# --- AMP103 --------------------------------------------------------------------------------


def bce_with_logits(model, site, kind: str, title: str) -> FixPlan | None:
    """AMP103: ``F.binary_cross_entropy(torch.sigmoid(z), y)`` -> ``..._with_logits(z, y)``."""
    from ..model import autocast_facts as AF
    from ..model.losses import sigmoid_arg

    cst = _cst()
    call = site.node
    if AF.has_star(call):
        return None
    inp = AF.arg_node(call, 0, "input")
    if inp is None:
        return None
    z = sigmoid_arg(model, inp.value)
    if z is None:
        return None
    edits = [NodeEdit("replace", inp.value, model.code_for(z))]
    if kind == "functional":
        if site.qual != "torch.nn.functional.binary_cross_entropy" or not isinstance(call.func, cst.Attribute):
            return None
        edits.append(NodeEdit("replace", call.func.attr, "binary_cross_entropy_with_logits"))
    elif kind == "inline":
        ctor = call.func
        if not isinstance(ctor.func, cst.Attribute) or ctor.func.attr.value != "BCELoss" or AF.has_star(ctor):
            return None
        edits.append(NodeEdit("replace", ctor.func.attr, "BCEWithLogitsLoss"))
    else:
        return None
    return FixPlan("safe", title, edits)

def add_scaler_state(model, node, scaler: str, title: str) -> FixPlan | None:
    """AMP013: add ``\"scaler\": <scaler>.state_dict()`` to a checkpoint dict literal or ``dict(...)`` call
    (keeping the quotes of its keys); nothing for a comprehension or a record."""
    cst = _cst()
    value = f"{scaler}.state_dict()"
    if isinstance(node, cst.Dict):
        quote = '"'
        for el in node.elements:
            if isinstance(el, cst.DictElement) and isinstance(el.key, cst.SimpleString):
                quote = el.key.value[-1]
                break
        entry = f"{quote}scaler{quote}: {value}"
        if not node.elements:
            edit = NodeEdit("replace", node, "{" + entry + "}")
        else:
            last = node.elements[-1]
            edit = NodeEdit("replace", last.value, f"{model.code_for(last.value)}, {entry}")
    elif isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "dict":
        if not node.args:
            edit = NodeEdit("replace", node, f"dict(scaler={value})")
        else:
            last = node.args[-1]
            edit = NodeEdit("replace", last.value, f"{model.code_for(last.value)}, scaler={value}")
    else:
        return None  # a comprehension, or a record (``Snapshot(...)``) without such a field
    return FixPlan("safe", title.format(scaler=scaler), [edit])


def backward_out_of_autocast(model, site, region, title: str) -> FixPlan | None:
    """AMP105: move a backward that ends its autocast block (and the bookkeeping calls after
    it) out of the ``with``."""
    cst = _cst()

    from ..model import autocast_facts as AF

    stmt = site.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or site.regions[-1] is not region:
        return None
    view = AF.tree(model)
    block = view.parent_of(stmt)
    with_stmt = view.parent_of(block) if block is not None else None
    if not isinstance(block, cst.IndentedBlock) or not isinstance(with_stmt, cst.With):
        return None
    if len(with_stmt.items) != 1 or with_stmt.items[0].item is not region.node or with_stmt.items[0].asname is not None:
        return None
    body = list(block.body)
    i = next((k for k, s in enumerate(body) if s is stmt), None)
    if i is None or i == 0 or not model.is_simple_statement(stmt, site.node):
        return None
    tail = body[i:]
    if not all(_is_step_call(model, s) for s in tail[1:]):
        return None  # only the optimizer/scaler bookkeeping may follow: nothing that computes
    nl = model.module.default_newline
    indent = view.indent.get(id(with_stmt))
    if indent is None:
        return None
    lines = []
    for s in tail:
        if any(not (ll.comment is None and ll.whitespace.value == "") for ll in s.leading_lines):
            return None  # comments above a moved line: leave it to a human
        text = model.module.code_for_node(s.with_changes(leading_lines=[])).rstrip("\r\n")
        if "\n" in text or "\r" in text:
            return None  # a statement over several lines keeps its own indentation
        lines.append(text)
    moved = (nl + indent).join(lines)
    edits = [NodeEdit("delete_stmt", s) for s in tail]
    edits.append(NodeEdit("insert_after", with_stmt, moved))
    return FixPlan("safe", title, edits)


_BOOKKEEPING = frozenset({"step", "update", "zero_grad", "unscale_"})


def _is_step_call(model, stmt) -> bool:
    cst = _cst()

    """``X.step(opt)`` / ``X.update()`` / ``X.zero_grad()`` / ``X.unscale_(opt)`` alone on a line,
    with plain names as arguments."""

    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return False
    call = stmt.body[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in _BOOKKEEPING:
        return False
    if not isinstance(call.func.value, (cst.Name, cst.Attribute)):
        return False
    return all(
        isinstance(a.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)) and not a.star
        for a in call.args
    )


def sharded_scaler(model, ctor, title: str) -> FixPlan | None:
    """AMP902: ``GradScaler(...)`` -> ``ShardedGradScaler(...)`` (device first), importing it after
    the module's last import line when needed."""
    cst = _cst()
    from .. import torch_api as T

    args = arg_texts(model, ctor.site.node)
    if args is None:
        return None
    positional = [v for k, v in args if k is None]
    keywords = [(k, v) for k, v in args if k is not None]
    if ctor.family == "init_scale_first":
        if positional:
            return None
        device = '"cpu"' if (ctor.qual or "").startswith("torch.cpu.") else '"cuda"'
        new_args = [(None, device)] + keywords
    else:
        if len(positional) > 2:
            return None
        new_args = [(None, v) for v in positional] + keywords
    local = model.imports.names.get("ShardedGradScaler")
    edits = [NodeEdit("replace", ctor.site.node, render_call("ShardedGradScaler", new_args))]
    if local is None:
        if any(f.is_local("ShardedGradScaler") for f in model.functions) or "ShardedGradScaler" in model.top.assigned:
            return None
        anchor = None
        for s in model.module.body:
            if isinstance(s, cst.SimpleStatementLine) and any(isinstance(x, (cst.Import, cst.ImportFrom)) for x in s.body):
                anchor = s
        if anchor is None:
            return None
        edits.append(NodeEdit("insert_after", anchor, T.SHARDED_SCALER_IMPORT))
    elif not local.endswith("ShardedGradScaler"):
        return None
    return FixPlan("safe", title, edits)
