"""One runtime spec per rule: ``ampNNN.py`` defines ``SPEC = Spec(...)`` (see ``..spec``).

Adding a rule to `amplint verify` = adding one module here. Importing a spec imports no torch.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from ..spec import Spec

_MODULE = re.compile(r"^amp\d{3}$")


@cache
def all_specs() -> dict[str, Spec]:
    specs: dict[str, Spec] = {}
    for info in pkgutil.iter_modules(__path__):
        if not _MODULE.match(info.name):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(mod, "SPEC", None)
        if not isinstance(spec, Spec):
            raise RuntimeError(f"{mod.__name__} must define SPEC = Spec(...)")
        if spec.code.lower() != info.name:
            raise RuntimeError(f"{mod.__name__} defines the spec of {spec.code}")
        specs[spec.code] = spec
    return dict(sorted(specs.items()))


def spec_for(code: str) -> Spec | None:
    return all_specs().get(code)
