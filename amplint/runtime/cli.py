from __future__ import annotations

import click


@click.command("verify")
def verify() -> None:
    """Run every rule's fixture pair and confirm its failure mode (work in progress)."""
    raise click.ClickException("amplint verify is not built yet")


@click.command("bench")
def bench() -> None:
    """Measure FP32 vs float16 vs bfloat16 on a model (work in progress)."""
    raise click.ClickException("amplint bench is not built yet")
