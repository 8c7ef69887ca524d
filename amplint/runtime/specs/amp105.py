"""AMP105 backward-inside-autocast: no numerical effect in eager mode (probe i5)."""

from ..spec import NO_EFFECT, Spec, identical

SPEC = Spec(
    code="AMP105",
    optimizer="sgd",
    effect=NO_EFFECT,
    check=identical("loss"),
    observable="loss curves (bad vs good)",
    note="backward ops run in the dtype of their forward op either way; the docs advise against it and "
         "torch.compile's backward_pass_autocast assumes the documented layout",
)
