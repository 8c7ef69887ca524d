"""Loops over optimizers: ``for opt in optimizers: scaler.step(opt)`` (or a helper handed the
scaler and the loop's optimizer) steps one optimizer per pass of one training iteration,
instead of running an iteration per pass."""

from __future__ import annotations

import libcst as cst

from ..syntax import expr_key


class PerOptimizer:
    """Mixin of :class:`~.interpret.Flow`."""

    def over_optimizers(self, frame, s: cst.For, variant: frozenset[str]) -> bool:
        """A loop whose variant names are the optimizer a scaler steps or unscales in its body (or
        that a helper handed the scaler steps), and that scales no loss itself (a loop whose
        every pass runs a whole scaled iteration, one objective after another, is a training
        loop) unless the iteration's one update follows the loop."""
        from .atoms import mentions_any

        calls = frame.func.calls
        if any(s in c.loops and c.method == "scale" and self.is_scaler(frame, c.recv) for c in calls) and not (
                # (unless the one update of the iteration follows the loop: ``for name in order:
                # opt = opts[name]; ...scale(loss).backward(); step(opt)`` then ``update()``)
                any(c.method == "update" and s not in c.loops and self.is_scaler(frame, c.recv) for c in calls)
                and not any(c.method == "update" and s in c.loops and self.is_scaler(frame, c.recv) for c in calls)):
            return False
        for c in calls:
            if s not in c.loops:
                continue
            if c.method in ("step", "unscale_") and self.is_scaler(frame, c.recv):
                a = c.arg(0, "optimizer")
                k = expr_key(a.value) if a is not None else None
                if k is not None and mentions_any(k, variant):
                    return True
            elif (c.recv is None or not self.is_scaler(frame, c.recv)) and self._steps_variant(frame, c, variant):
                return True
        return False

    def _steps_variant(self, frame, c, variant: frozenset[str]) -> bool:
        """A helper handed the scaler and the loop's optimizer (``step_optimizer(opt,
        scaler=self.scaler)``) that steps or unscales that parameter: one optimizer per pass."""
        from .atoms import mentions_any

        keys = [expr_key(a.value) for a in c.node.args]
        if not any(k is not None and self.is_scaler(frame, k) for k in keys):
            return False
        hit = self.resolve(frame, c)
        callee = hit[0] if hit is not None else None
        if callee is None:
            return False
        params = [p for p in callee.params if p not in ("self", "cls")] if callee.cls is not None else list(callee.params)
        stepped = {a.value.value for x in callee.calls if x.method in ("step", "unscale_")
                   for a in [x.arg(0, "optimizer")] if a is not None and isinstance(a.value, cst.Name)}
        positional = [a for a in c.node.args if a.keyword is None and not a.star]
        for a in c.node.args:
            k = expr_key(a.value)
            if k is None or not mentions_any(k, variant):
                continue
            name = a.keyword.value if a.keyword is not None else (
                params[positional.index(a)] if a in positional and positional.index(a) < len(params) else None)
            if name is not None and name in stepped:
                return True
        return False
