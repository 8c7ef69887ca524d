"""AMP101 deprecated-amp-namespace: the old names still work in torch 2.13; they warn. The harm is
the removal to come (and the argument order of a naive migration), not a number."""

from ..signs import Warns
from ..spec import MECHANISM_ONLY, Spec

SPEC = Spec(
    code="AMP101",
    signs=(Warns("FutureWarning", "is deprecated"),),
    expect=MECHANISM_ONLY,
    note="the device-specific namespaces still work (FutureWarning since torch 2.4)",
)
