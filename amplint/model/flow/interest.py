"""Which condition atoms the flow remembers (see :mod:`.conditions`): those tested more than once
in the file, the AMP switches of the modules a call reaches, and an object's own flags that guard
protocol events in its methods, counted over every module the flow has seen."""

from __future__ import annotations

from .atoms import amp_switch, mentions_any


class Interest:
    """Mixin of :class:`~.conditions.Conditions`: the atoms worth remembering."""

    def admit(self, model) -> None:
        """Let the flow see another project module (a call reached it): its facts, and the AMP
        switches its own tests make worth remembering (``if self.cfg.amp:`` tested in several
        places of the trainer that an importing script drives)."""
        if model in self.m.models:
            return
        self.m.add(model)
        if getattr(self, "interesting", None) is not None:  # (else counted with the others at init)
            # only the switches that can choose the AMP path (each atom splits the paths)
            self.interesting |= {k for k in self._interesting_conditions(model.tests) if amp_switch(k)}
            # and an object's own flag that picks between protocol arms in its methods
            # (``if self.activated:`` in an AMP helper's ``backward`` and again in its ``step``):
            # read through the receiver (``amp.activated``), it correlates the two calls
            self.interesting |= self._object_flags(model)

    def _object_flags(self, model) -> set[str]:
        """``self.<flag>`` tests guarding protocol events, counted over every module the flow
        has seen: one tested in a base class's hook and again in the subclass's override
        (``if self.max_grad_norm:`` around the clip in ``base.py`` and around ``unscale_`` in
        ``amp.py``) correlates the two."""
        guarding = [t for t in model.tests if self._guards_events(t) and self.test_text(t).startswith("self.")]
        counts = self._object_flag_counts
        for test in guarding:
            for key, _v in self.cond_facts(self.root_frame(self._test_function(test)), test, True, raw=True):
                counts[key] = counts.get(key, 0) + 1
        return {k for k, n in counts.items() if n > 1}

    def _interesting_conditions(self, tests=None) -> set[str]:
        """Atoms tested more than once in the file: only those can correlate two branches."""
        counts: dict[str, int] = {}
        for test in self.m.tests if tests is None else tests:
            func = self._test_function(test)
            frame = self.root_frame(func)
            # an AMP switch around protocol events in a loop is tested again on the next pass:
            # where it reads nothing the loop rebinds (``if cfg.amp:`` around the scaled
            # backward and, again, around the boundary step), an iteration takes the arm the
            # last one took (other conditions are not remembered across passes: a path per
            # combination of a long loop's unrelated branches would cost more than it shows)
            invariant = None
            loops = self.m.test_loops.get(test) if tests is None else None
            if loops and amp_switch(self.test_text(test)) and self._guards_events(test):
                invariant = self.loop_assigned(loops[-1])
            for key, _v in self.cond_facts(frame, test, True, raw=True):
                counts[key] = counts.get(key, 0) + (
                    2 if invariant is not None and amp_switch(key) and not mentions_any(key, invariant) else 1)
        if tests is None:
            # ``GradScaler(enabled=use_fp16)`` reads the flag as a branch on it does: the arm where
            # it is false runs a disabled scaler (see :meth:`disabled`)
            for node, func in self._enabled_of.values():
                for key, _v in self.cond_facts(self.root_frame(func), node, True, raw=True):
                    if key in counts:
                        counts[key] += 1
            # a flag set to literals on two paths (``bad_batch = False`` ... ``bad_batch = True;
            # break``) and read by a later test (``if bad_batch: ... continue``) correlates them
            # (a name only initialised to a literal, ``best = None``, does not: remembering it
            # would split every path for nothing)
            literal_sets: dict[str, int] = {}
            for b in self.m.bindings:
                if (b.kind == "assign" and not b.unpack and b.name.isidentifier() and b.name in counts
                        and self.flag_truth(b.value) is not None):
                    literal_sets[b.name] = literal_sets.get(b.name, 0) + 1
            for name, n in literal_sets.items():
                if n > 1:
                    counts[name] += 1
        return {k for k, n in counts.items() if n > 1}
