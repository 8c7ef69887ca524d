"""Command line: ``amplint [OPTIONS] [PATHS]...`` plus the ``verify`` and ``bench`` commands.

Exit status: 0 no findings, 1 findings (or fixes with ``--exit-non-zero-on-fix``),
2 usage, configuration or internal error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import __version__

FORMAT_CHOICES = ("concise", "full", "json", "json-lines", "github", "sarif")


def _codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


COMMAND_RULE = """\
`amplint check [PATHS]...` always lints. `amplint [OPTIONS] [PATHS]...` without a command
lints too. A first argument that names a command (verify, bench, server) runs it, unless a
file or folder of that name exists in the current folder and the next argument is not an
option of the command: then it is a path to lint (`amplint bench` lints ./bench/;
`amplint bench --device cuda` runs the benchmark)."""


def _is_option_of(cmd: click.Command, arg: str) -> bool:
    name = arg.split("=", 1)[0]
    if name in ("-h", "--help"):
        return True
    for p in cmd.params:
        if isinstance(p, click.Option) and (name in p.opts or name in p.secondary_opts):
            return True
    return False


class DefaultGroup(click.Group):
    """``amplint PATHS`` runs ``check``; ``amplint verify`` / ``bench`` / ``server`` run those
    (see :data:`COMMAND_RULE` for a word that names both a command and a path)."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] in self.commands and args[0] != self.default_command and os.path.lexists(args[0]):
            cmd = self.commands[args[0]]
            nxt = args[1] if len(args) > 1 else None
            if nxt is None or not nxt.startswith("-") or not _is_option_of(cmd, nxt):
                if not any(a in ("-q", "--quiet", "-s", "--silent") for a in args):
                    kind = "folder" if os.path.isdir(args[0]) else "file"
                    sys.stderr.write(
                        f"amplint: note: `{args[0]}` is a {kind} here, so it is linted (as `amplint check {args[0]}`); "
                        f"to run the `{args[0]}` command, give one of its options (`amplint {args[0]} --help`)\n")
                args = [self.default_command, *args]
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, **kwargs)
        except OSError as e:
            # the output cannot be written (a full disk, a closed pipe) or a report file cannot
            # be created: one line, exit 2, no traceback
            try:
                sys.stderr.write(f"amplint: error: {e}\n")
                sys.stderr.flush()
            except OSError:
                pass
            if isinstance(e, BrokenPipeError):
                os._exit(2)  # a closed pipe: exit without flushing into it again
            sys.exit(2)

    def invoke(self, ctx: click.Context):
        # Ctrl-C, SIGTERM and SIGHUP: stop cleanly (no half-written file, quiet workers) and exit
        # with 128 + the signal (130 for Ctrl-C), not 1, which means "findings"
        from . import signals

        signals.install()
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as e:
            code = e.exit_code if isinstance(e, signals.Interrupted) else 130
            try:
                sys.stderr.write("amplint: interrupted\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            sys.exit(code)

    def format_usage(self, ctx, formatter):
        prefix = "Usage: "
        lines = ["amplint [OPTIONS] [PATHS]...", "amplint check [OPTIONS] [PATHS]...", "amplint verify [OPTIONS]",
                 "amplint bench [OPTIONS]", "amplint server [OPTIONS]"]
        formatter.write(prefix + lines[0] + "\n")
        for line in lines[1:]:
            formatter.write(" " * len(prefix) + line + "\n")


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
def main() -> None:
    """amplint: find PyTorch mixed-precision (AMP) misuse before it ruins a training run.

    `amplint check [PATHS]...` (or just `amplint [PATHS]...`) lints; see `amplint check --help`.
    `amplint verify` proves each rule's failure mode by running its fixture loops,
    `amplint bench` measures FP32 against float16 and bfloat16 on your model, and
    `amplint server` is a language server for editors.

    \b
    A first argument that names both a command and a file or folder of the current folder is
    a path to lint (`amplint bench` lints ./bench/), unless the next argument is an option of
    the command (`amplint bench --device cuda` runs the benchmark).
    """


def _color_enabled(choice: str, stream) -> bool:
    """``--color``: always / never, or auto: FORCE_COLOR forces colour, NO_COLOR turns it off
    (https://no-color.org), otherwise colour when the output is a terminal."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    force = os.environ.get("FORCE_COLOR") or os.environ.get("CLICOLOR_FORCE")
    if force and force != "0":
        return True
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):
        return False


@main.command("check", context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable (e.g. AMP0, ALL).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Enable these on top of the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@click.option("--per-file-ignores", "per_file_ignores", multiple=True, metavar="GLOB:CODES",
              help="Ignore codes in files matching a glob, e.g. 'tests/**:AMP001'.")
@click.option("--output-format", type=click.Choice(FORMAT_CHOICES), default=None, metavar="FORMAT",
              help="concise (default), full, json, json-lines, github or sarif.")
@click.option("-o", "--output-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the findings to FILE instead of stdout.")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when fixes were applied, even if nothing remains.")
@click.option("--fix", "fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Include unsafe fixes in --fix and --diff.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing files.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` comments to every line with a finding.")
@click.option("--baseline", "baseline", type=click.Path(dir_okay=False), metavar="FILE",
              help="Report only findings that are not recorded in FILE.")
@click.option("--write-baseline", is_flag=True, help="Record the current findings in the --baseline FILE and exit 0.")
@click.option("--explain", metavar="CODE", help="Print the documentation of a rule.")
@click.option("--list-rules", is_flag=True, help="List every rule: code, name, default, fix availability.")
@click.option("--show-settings", is_flag=True, help="Print the settings used for the first path, then exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be linted, then exit.")
@click.option("--config", "config", multiple=True, metavar="FILE|KEY=VALUE",
              help="A configuration file to use for every file, or a `KEY = VALUE` TOML pair overriding one setting.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Replace the default exclude list.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB", help="Exclude these on top of the defaults.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths named on the command line (pre-commit).")
@click.option("--respect-gitignore/--no-respect-gitignore", "respect_gitignore", default=None,
              help="Skip files ignored by .gitignore, .ignore and git's excludes (default: on).")
@click.option("--stdin-filename", metavar="PATH", help="Read the source from stdin; PATH names it (config, output).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: available cores).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), metavar="DIR",
              help="Where to keep the cache (default: .amplint_cache).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", metavar="WHEN",
              help="Colour the output: auto (default; honours NO_COLOR and FORCE_COLOR), always or never.")
@click.option("-v", "--verbose", is_flag=True, help="Also say which configuration each file uses, cache hits, timings.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("-s", "--silent", is_flag=True, help="Print nothing; the exit status tells.")
@click.version_option(__version__, "--version", prog_name="amplint", message="%(prog)s %(version)s")
def check(paths, select, extend_select, ignore, per_file_ignores, output_format, output_file, statistics, exit_zero,
          exit_non_zero_on_fix, fix, unsafe_fixes, diff, add_noqa, baseline, write_baseline, explain, list_rules,
          show_settings, show_files, config, isolated, exclude, extend_exclude, force_exclude, respect_gitignore,
          stdin_filename, jobs, no_cache, cache_dir, color, verbose, quiet, silent) -> None:
    """Lint PATHS (files or folders; default: the current folder). `-` or --stdin-filename reads stdin.

    Each file gets the settings of its nearest configuration file (.amplint.toml, amplint.toml, or
    a pyproject.toml with [tool.amplint]); the options here override them.
    """
    import time

    from .config import CliOverrides, ConfigError, Workspace
    from .files import PathError
    from .rules import all_rules

    t0 = time.perf_counter()
    rules = all_rules()
    if explain is not None:
        sys.exit(_explain(explain, rules))
    if list_rules:
        _list_rules(rules, output_format)
        sys.exit(0)
    stdin_mode = paths == ("-",) or (stdin_filename is not None and not paths)
    if stdin_filename is not None and paths and paths != ("-",):
        _usage_error("--stdin-filename reads the source from stdin: give no PATHS (or `-`)")
    paths = list(paths) or ["."]
    if stdin_mode:
        paths = ["-"]
    if select and not _codes(select):
        _usage_error("--select needs at least one code or prefix (use --ignore ALL to disable every rule)")
    config_files = [c for c in config if not _is_override(c)]
    overrides = [c for c in config if _is_override(c)]
    if len(config_files) > 1:
        _usage_error("--config: give at most one configuration file (and any number of KEY=VALUE pairs)")
    if isolated and config_files:
        _usage_error("--config cannot be used with --isolated (which ignores every configuration file)")
    if write_baseline and not baseline:
        _usage_error("--write-baseline needs --baseline FILE (where to record the findings)")
    if write_baseline and (fix or diff or add_noqa):
        _usage_error("--write-baseline cannot be combined with --fix, --diff or --add-noqa")
    if add_noqa and fix:
        _usage_error("--add-noqa cannot be used with --fix (add the directives, or fix the findings; not both)")
    if add_noqa and stdin_mode:
        _usage_error("--add-noqa writes the directives into files: it cannot read stdin")
    if silent:
        quiet = True
    pfi: dict[str, list[str]] = {}
    for item in per_file_ignores:
        glob, sep, codes = item.rpartition(":")
        if not sep or not glob:
            _usage_error(f"--per-file-ignores expects GLOB:CODES, got `{item}`")
        pfi.setdefault(glob, []).extend(_codes((codes,)))
    cli = CliOverrides(
        select=_codes(select) if select else None,
        extend_select=_codes(extend_select),
        ignore=_codes(ignore),
        per_file_ignores=pfi,
        exclude=list(exclude) if exclude else None,
        extend_exclude=list(extend_exclude),
        cache_dir=cache_dir,
        force_exclude=force_exclude,
        config=config_files[0] if config_files else None,
        isolated=isolated,
        respect_gitignore=respect_gitignore,
        overrides=overrides,
    )
    try:
        ws = Workspace(cli, rules)
        first = stdin_filename if stdin_mode and stdin_filename else paths[0]
        settings = ws.for_path(first if first != "-" else ".")
        if show_settings:
            click.echo(_show_settings(first, settings, rules))
            sys.exit(0)
        if show_files:
            from .files import discover

            from .printable import printable

            for c in sorted(discover(paths, ws), key=lambda c: c.name):
                click.echo(printable(c.name))
            sys.exit(0)
    except ConfigError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    except PathError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    fmt = output_format or "concise"
    stats = None
    try:
        if stdin_mode:
            results = _lint_stdin(settings, stdin_filename, fix=fix, diff=diff, unsafe=unsafe_fixes)
        elif fix or diff or add_noqa:
            from .fixer import fix_paths

            results = fix_paths(paths, ws, unsafe=unsafe_fixes, diff=diff, add_noqa=add_noqa, jobs=jobs,
                                use_cache=not no_cache)
        else:
            from .runner import run

            results = run(paths, ws, jobs=jobs, use_cache=not no_cache)
        if not stdin_mode:
            from . import runner

            stats = runner.LAST_RUN
    except PathError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    except ConfigError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    if verbose:
        _verbose(results, stats, ws, time.perf_counter() - t0)
    out_stream = None
    if output_file:
        try:
            out_stream = open(output_file, "w", encoding="utf-8")
        except OSError as e:
            click.echo(f"amplint: error: --output-file {output_file}: {e.strerror or e}", err=True)
            sys.exit(2)
    to_err = stdin_mode and fix and not diff
    use_color = _color_enabled(color, out_stream or (sys.stderr if to_err else sys.stdout))
    try:
        code = _report(results, fmt, statistics, exit_zero, exit_non_zero_on_fix, fix, diff, unsafe_fixes, quiet,
                       add_noqa, err=to_err, out=out_stream, color=use_color, silent=silent, baseline=baseline,
                       write_baseline=write_baseline)
    finally:
        if out_stream is not None:
            out_stream.close()
    sys.exit(code)


def _is_override(value: str) -> bool:
    """``--config`` takes a file, or a ``KEY = VALUE`` pair (a value that is not a file and
    has an ``=``)."""
    return "=" in value and not os.path.isfile(value)


def _show_settings(first: str, s, rules) -> str:
    from .requirements import format_version

    def patterns(items) -> str:
        return "\n".join(f"    {p}  (from {a})" if "/" in p else f"    {p}" for a, p in items) or "    (none)"

    target = s.options.target_torch_version
    lines = [
        f"Settings for: {first}",
        f"config file: {s.config_file or '(none: defaults)'}",
    ]
    if len(s.config_chain) > 1:
        lines.append("extends: " + " <- ".join(str(p) for p in s.config_chain))
    lines += [
        f"project root: {s.root}",
        f"enabled rules ({len(s.enabled)}): {', '.join(sorted(s.enabled))}",
        f"disabled rules: {', '.join(sorted(r.code for r in rules if r.code not in s.enabled)) or '(none)'}",
        "per-file-ignores:",
        "\n".join(f"    {p}: {', '.join(c)}  (from {a})" for a, p, c in s.per_file_ignores) or "    (none)",
        "exclude:",
        patterns(s.exclude),
        "extend-exclude:",
        patterns(s.extend_exclude),
        f"force-exclude: {str(s.force_exclude).lower()}",
        f"respect-gitignore: {str(s.respect_gitignore).lower()}",
        f"scaler-names: {list(s.options.scaler_names)}",
        f"eval-function-patterns: {list(s.options.eval_patterns)}",
        f"target-torch-version: {format_version(target) + ' (from ' + str(s.target_source) + ')' if target else '(none: a current torch)'}",
        f"max-file-size: {s.max_file_size}",
        f"cache-dir: {s.cache_dir}",
    ]
    return "\n".join(lines)


def _verbose(results, stats, ws, elapsed: float) -> None:
    err = sys.stderr
    settings = stats.settings if stats is not None else []
    for s in settings:
        chain = " <- ".join(str(p) for p in s.config_chain) if s.config_chain else "(defaults)"
        err.write(f"amplint: config {chain}: root {s.root}, {len(s.enabled)} rules, cache {s.cache_dir}\n")
    if stats is not None:
        err.write(f"amplint: {stats.files} files, {stats.cache_hits} from the cache, {stats.linted} linted "
                  f"({stats.workers} worker{'s' if stats.workers != 1 else ''})\n")
    err.write(f"amplint: finished in {elapsed:.2f} s\n")


_STDIN_SOURCES: dict[str, str] = {}


def _lint_stdin(settings, stdin_filename, *, fix: bool = False, diff: bool = False, unsafe: bool = False):
    """Lint source read from stdin. With ``--fix`` the fixed source goes to stdout (the editor
    replaces its buffer with it) and the findings that remain to stderr; with ``--diff`` the
    diff goes to stdout."""
    from .engine import Linter

    data = sys.stdin.buffer.read()
    name = stdin_filename or "-"
    if stdin_filename and settings.force_exclude and settings.is_excluded(Path(stdin_filename)):
        if fix and not diff:
            sys.stdout.buffer.write(data)
        return []
    linter = Linter(settings)
    if name.endswith(".ipynb"):
        from .notebook import check_notebook

        result = check_notebook(linter, data, name)
        if fix and not diff:
            sys.stdout.buffer.write(data)  # notebooks from stdin are not fixed
        return [result]
    result = linter.check_bytes(data, name, explicit=True)
    if result.source is not None:
        _STDIN_SOURCES[name] = result.source.text
    if not (fix or diff):
        return [result]
    from .fixer import _is_syntax_error, encode_source, fix_source

    text = None
    if result.source is not None and result.analysed and not _is_syntax_error(result):
        text, fixed, n = fix_source(linter, result.source, name, result, unsafe)
        if text != result.source.text:
            fixed.source = result.source
            fixed.fixes_applied = n
            fixed.fixed_text = text
            if diff:
                fixed.diagnostics = result.diagnostics
            else:
                _STDIN_SOURCES[name] = text  # what the remaining findings point into
            result = fixed
    if fix and not diff:  # with --diff, only the diff goes to stdout
        sys.stdout.buffer.write(encode_source(text, result.source) if text is not None else data)
        sys.stdout.flush()
    return [result]


def _report(results, fmt, statistics, exit_zero, exit_non_zero_on_fix, fix, diff, unsafe, quiet, add_noqa,
            err: bool = False, out=None, color: bool = False, silent: bool = False, baseline: str | None = None,
            write_baseline: bool = False) -> int:
    """Print the results; ``err``: everything on stderr (stdout holds the fixed source);
    ``out``: the findings go to this file (``--output-file``)."""
    from .diagnostics import Diagnostic
    from .output import RenderContext, fails, render, summary

    def emit(text: str, nl: bool = True, to_err: bool = False) -> None:
        if silent:
            return
        if out is not None and not to_err:
            out.write(text + ("\n" if nl else ""))
        else:
            click.echo(text, nl=nl, err=err or to_err, color=color if color else None)

    diagnostics = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    errors = [e for r in results for e in r.errors]
    warnings = [w for r in results for w in r.warnings]
    fixed = sum(r.fixes_applied for r in results)
    from .printable import printable

    for w in warnings:
        if not silent:
            click.echo(f"amplint: warning: {printable(w)}", err=True)
    for e in errors:
        click.echo(f"amplint: error: {printable(e)}", err=True)
    if diff:
        from .fixer import render_diff

        text = render_diff(results)
        if text:
            emit(text, nl=False)
        code = 1 if any(r.fixed_text is not None for r in results) else 0
        return 2 if errors else code
    if add_noqa:
        n = sum(r.fixes_applied for r in results)
        emit(f"Added {n} noqa directive{'s' if n != 1 else ''}.", to_err=True)
        return 2 if errors else 0
    baselined = 0
    if baseline:
        from . import baseline as bl

        try:
            if write_baseline:
                n = bl.write(baseline, diagnostics, _read_source)
                emit(f"Recorded {n} finding{'s' if n != 1 else ''} in the baseline {baseline}.", to_err=True)
                return 2 if errors else 0
            diagnostics, baselined, stale = bl.filter_new(baseline, diagnostics, _read_source)
        except (bl.BaselineError, OSError) as e:
            click.echo(f"amplint: error: {e}", err=True)
            return 2
        if stale and not quiet:
            click.echo(f"amplint: note: {stale} baseline entr{'ies' if stale != 1 else 'y'} no longer "
                       f"match{'' if stale != 1 else 'es'} a finding "
                       "(fixed, or changed); --write-baseline records the current state", err=True)
    ctx = RenderContext(unsafe_fixes=unsafe, fix_mode=fix, fixed_count=fixed, read_source=_read_source, color=color,
                        baselined=baselined)
    if statistics:
        emit(_statistics(diagnostics, fmt), nl=False)
    else:
        text = render(fmt, diagnostics, ctx)
        if text:
            emit(text, nl=False)
        if fmt in ("concise", "full") and not quiet:
            emit(summary(diagnostics, ctx))
    if errors:
        return 2
    if any(fails(d) for d in diagnostics) and not exit_zero:
        return 1
    if fix and fixed and exit_non_zero_on_fix:
        return 1
    return 0


def _read_source(filename: str, cell: int | None = None) -> str | None:
    if filename in _STDIN_SOURCES and cell is None:
        return _STDIN_SOURCES[filename]
    try:
        from .files import read_regular

        data = read_regular(filename)
    except OSError:
        return None
    if cell is not None:
        from .notebook import cell_source

        return cell_source(data, cell)
    try:
        from .engine import decode

        return decode(data).text
    except Exception:  # noqa: BLE001 - a snippet is optional
        return None


def _statistics(diagnostics, fmt) -> str:
    import json

    counts: dict[str, list] = {}
    for d in diagnostics:
        entry = counts.setdefault(d.code, [0, d.name, False])
        entry[0] += 1
        entry[2] = entry[2] or (d.fix is not None and d.fix.applicability == "safe")
    rows = sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    if fmt in ("json", "json-lines", "sarif"):
        return json.dumps([{"code": c, "name": v[1], "count": v[0], "fixable": v[2]} for c, v in rows], indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(v[0])) for _c, v in rows)
    return "".join(f"{v[0]:>{width}}\t{c}\t{'[*]' if v[2] else '[ ]'} {v[1]}\n" for c, v in rows)


def _explain(code: str, rules) -> int:
    code = code.strip().upper()
    for r in rules:
        if r.code == code:
            click.echo(f"# {r.name} ({r.code})\n")
            default = "enabled by default" if r.default_enabled else "off by default (enable with --select)"
            fix = {"none": "no fix", "sometimes": "fix sometimes available", "always": "fix always available"}[r.fix_availability]
            click.echo(f"Derived from amplint; {default}; {fix}.\n")
            click.echo(r.doc())
            from .evidence import evidence_line

            line = evidence_line(r.code)
            if line:
                click.echo(f"\n## Measured evidence\n{line}")
            return 0
    if code == "AMP000":
        click.echo("# syntax-error (AMP000)\n\nThe file could not be decoded or parsed, so it was not analysed. "
                   "Always reported; the other files are still checked.")
        return 0
    click.echo(f"amplint: error: unknown rule code `{code}` (see `amplint --list-rules`)", err=True)
    return 2


def _list_rules(rules, fmt) -> None:
    if fmt == "json":
        import json

        click.echo(json.dumps([
            {"code": r.code, "name": r.name, "default": r.default_enabled, "fix": r.fix_availability,
             "severity": r.severity, "summary": r.summary()} for r in rules
        ], indent=2))
        return
    import shutil
    import textwrap

    width = min(max(shutil.get_terminal_size((100, 24)).columns, 60), 100)
    w = max(len(r.name) for r in rules)
    click.echo(f"{'code':<7} {'name':<{w}}  {'default':<9}  fix")
    for r in rules:
        default = ("on" if r.default_enabled else "off") + (" (info)" if r.severity == "info" else "")
        click.echo(f"{r.code:<7} {r.name:<{w}}  {default:<9}  {r.fix_availability}")
        for line in textwrap.wrap(r.summary(), width - 8):
            click.echo(" " * 8 + line)


def _usage_error(message: str) -> None:
    click.echo(f"amplint: error: {message}", err=True)
    sys.exit(2)


# --- runtime commands (torch is imported inside them only) -------------------------------


def _register_runtime() -> None:
    from .runtime.cli import bench, verify

    from .server import server

    main.add_command(verify)
    main.add_command(bench)
    main.add_command(server)


_register_runtime()
