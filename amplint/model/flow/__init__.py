"""The typestate flow: GradScaler's protocol followed through branches, loops and calls.

- :mod:`.state`       the abstract state and its lattice (join, leq, widen);
- :mod:`.monitors`    per-rule path properties attached to the interpreter;
- :mod:`.conditions`  correlated conditions (condition atoms, ``assume``, exclusive arms);
- :mod:`.atoms`       the text of a condition atom (AMP switch? mentions a name?);
- :mod:`.interpret`   statements, loops to a fixpoint, ``try``/``finally``;
- :mod:`.calls`       events as transitions;
- :mod:`.interproc`   calls into the analysed code, keys and aliases;
- :mod:`.queries`     the named facts rules read.
"""

from .frames import Observation
from .interpret import Flow
from .state import CLEAN, IMPLIED, READY, SCALED, STEPPED, UNSCALED, State

__all__ = ["Flow", "Observation", "State", "READY", "UNSCALED", "STEPPED", "SCALED", "CLEAN", "IMPLIED"]
