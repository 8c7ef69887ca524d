"""Scalers built per iteration: a GradScaler constructed in the iteration of a loop that steps or
updates it (``recreate`` observations, read by AMP008), not where the iteration is a training run
of its own that builds its optimizer too (a scaler per fold or configuration is right)."""

from __future__ import annotations

from .state import State


class Recreations:
    """Mixin of :class:`~.interpret.Flow`: constructor observations and per-iteration scalers."""

    def created(self, frame, ckey: str, ctor, states) -> None:
        site = self.m.call_of.get(ctor)
        self._create_obs.setdefault(ctor, self.observe(frame, "create", ctor, site, ckey, None, states))

    def _builds_optimizer(self, func) -> bool:
        """A function of the loop's iteration that builds the scaler and binds an optimizer too:
        each call is a training run of its own (``for _ in range(generations): train(hyp)``)."""
        from ... import torch_api as T

        hit = self._run_funcs.get(func)
        if hit is None:
            hit = self._run_funcs[func] = any(
                b.func is func and b.kind in ("assign", "ann", "walrus") and (
                    T.optimizer_like_name(b.name) or b.value is not None
                    and any(v.kind == "optimizer" for v in self.m.values.of(func, b.value)))
                for b in self.m.bindings)
        return hit

    def per_iteration_creates(self, frame, back: set[State], loop=None) -> None:
        """A scaler built in this iteration of the loop (not in a nested one) and stepped or
        updated in it, also in a loop nested in it: a new GradScaler every iteration
        (``recreate``). Not where the iteration builds the optimizer too (a training run per fold
        or configuration: its own scaler is right)."""
        from ... import torch_api as T
        from .frames import Observation
        from .monitors import value

        d = self._loop_depth
        per_run = None
        for st in back:
            for key, node, depth, stepped in value(st, "fresh"):
                if depth != d or not stepped and st.facts(key).iters is None:
                    continue
                create = self._create_obs.get(node)
                if create is None:
                    continue
                if st.facts(key).iters is None:  # stepped in a nested loop only
                    if per_run is None:
                        per_run = loop is None or any(T.optimizer_like_name(n) for n in self.loop_assigned(loop))
                    if per_run or create.func is not frame.func and self._builds_optimizer(create.func):
                        continue
                okey = ("recreate", node, key)
                obs = self._obs_index.get(okey)
                if obs is None:
                    obs = Observation("recreate", node, create.site, key, None, create.regions, create.func, set(),
                                      inlined=create.func is not frame.func)
                    self._obs_index[okey] = obs
                    self.observations.append(obs)
                obs.states.add(st)

