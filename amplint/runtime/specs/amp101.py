"""AMP101 deprecated-amp-namespace: the old names still work in torch 2.13; they only warn."""

from ..spec import NO_EFFECT, Spec, warns

SPEC = Spec(
    code="AMP101",
    optimizer="sgd",
    effect=NO_EFFECT,
    check=warns("FutureWarning", "is deprecated"),
    observable="FutureWarning (deprecated torch.*.amp names)",
    evidence="bad.py emitted {bad_count} FutureWarnings ({messages_md}) and good.py {good_count}; "
             "otherwise the runs matched: {loss_text}.",
    note="the device-specific namespaces still work (FutureWarning since torch 2.4); the harm is the "
         "removal to come and the positional-argument order of a naive migration",
)
