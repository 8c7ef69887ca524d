"""AMP900 unused-noqa: a stale suppression comment; the two loops must compute the same thing."""

from ..signs import Identical
from ..spec import NO_RUNTIME_EFFECT, Spec

SPEC = Spec(
    code="AMP900",
    signs=(Identical(),),
    no_effect=True,
    expect=NO_RUNTIME_EFFECT,
    note="a `# noqa` comment changes nothing at run time; the harm is the next real finding it hides",
)
