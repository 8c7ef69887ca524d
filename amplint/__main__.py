"""``python -m amplint`` and the ``amplint`` command.

Two things happen before anything else is imported:

- ``python -m`` puts the current folder first on ``sys.path``. amplint imports standard modules
  lazily (``json``, ``ast``, ``tokenize``...), so a ``json.py`` in the linted folder would be
  imported, and run, in their place. Linting never runs the code it reads: the folder is taken
  off the path (``amplint bench --model`` adds it back, on purpose, for the model it loads).
- the signal handlers go in first: Ctrl-C (or SIGTERM, SIGHUP) while the command-line modules
  load exits 130 (143, 129) with one line, like later.
"""

import os
import sys


def _drop_current_folder() -> None:
    if sys.flags.safe_path or not sys.path:
        return
    first = sys.path[0]
    try:
        here = os.getcwd()
    except OSError:
        here = None
    if first == "" or (here is not None and os.path.abspath(first) == here):
        del sys.path[0]


def run() -> None:
    from . import signals

    signals.install()
    try:
        from .cli import main
    except KeyboardInterrupt as e:
        try:
            sys.stderr.write("amplint: interrupted\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        sys.exit(e.exit_code if isinstance(e, signals.Interrupted) else 130)
    main(prog_name="amplint")


if __name__ == "__main__":  # pragma: no cover
    _drop_current_folder()
    run()
