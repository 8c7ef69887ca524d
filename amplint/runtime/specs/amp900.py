"""AMP900 unused-noqa: a stale suppression comment; the two loops compute the same thing."""

from ..spec import NO_EFFECT, Spec, identical

SPEC = Spec(
    code="AMP900",
    optimizer="sgd",
    effect=NO_EFFECT,
    check=identical("loss"),
    observable="loss curves (bad vs good)",
    note="a `# noqa` comment changes nothing at run time; the harm is the next real finding it hides",
)
