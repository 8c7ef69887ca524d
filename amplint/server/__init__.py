"""``amplint server``: a Language Server for editors (the optional extra ``amplint[lsp]``).

The command is registered without importing pygls; the server itself is :mod:`amplint.server.lsp`.
"""

from __future__ import annotations

import importlib.util
import sys

import click


@click.command("server", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--stdio", is_flag=True, help="Speak LSP over stdin/stdout (the default; editors pass it).")
@click.option("--log-file", type=click.Path(dir_okay=False), help="Write the server's log to this file.")
def server(stdio: bool, log_file: str | None) -> None:
    """Run the amplint language server over stdio.

    Diagnostics on open, change and save; quick fixes, `# noqa` code actions and "fix all" for
    the safe fixes. Each file gets its nearest configuration, as on the command line. Needs
    the `lsp` extra (pygls): pip install 'amplint[lsp]'.
    """
    if importlib.util.find_spec("pygls") is None or importlib.util.find_spec("lsprotocol") is None:
        click.echo("amplint: error: `amplint server` needs pygls and lsprotocol, which are not installed.\n"
                   "Install the language-server extra: pip install 'amplint[lsp]' "
                   "(from a clone: pip install '.[lsp]').", err=True)
        sys.exit(2)
    from .lsp import serve

    serve(log_file=log_file)
