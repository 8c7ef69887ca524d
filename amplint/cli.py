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


class DefaultGroup(click.Group):
    """``amplint PATHS`` runs ``check``; ``amplint verify`` / ``amplint bench`` run those."""

    default_command = "check"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
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
        formatter.write_usage("amplint", "[OPTIONS] [PATHS]...\n       amplint verify [OPTIONS]\n       amplint bench [OPTIONS]")


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
def main() -> None:
    """amplint: find PyTorch mixed-precision (AMP) misuse before it ruins a training run.

    Run `amplint [OPTIONS] [PATHS]...` to lint (the `check` command; see `amplint check --help`),
    `amplint verify` to prove each rule's failure mode by running its fixture loops, and
    `amplint bench` to measure FP32 against float16 and bfloat16 on your model.
    """


@main.command("check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to enable (e.g. AMP0, ALL).")
@click.option("--extend-select", multiple=True, metavar="CODES", help="Enable these on top of the selection.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rule codes or prefixes to disable.")
@click.option("--per-file-ignores", "per_file_ignores", multiple=True, metavar="GLOB:CODES",
              help="Ignore codes in files matching a glob, e.g. 'tests/*:AMP001'.")
@click.option("--output-format", type=click.Choice(FORMAT_CHOICES), default=None, help="Output format (default: concise).")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when fixes were applied, even if nothing remains.")
@click.option("--fix", "fix", is_flag=True, help="Apply safe fixes (and unsafe ones with --unsafe-fixes).")
@click.option("--unsafe-fixes", is_flag=True, help="Include unsafe fixes in --fix and --diff.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing files.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` comments to every line with a finding.")
@click.option("--explain", metavar="CODE", help="Print the documentation of a rule.")
@click.option("--list-rules", is_flag=True, help="List every rule: code, name, default, fix availability.")
@click.option("--config", "config", type=click.Path(dir_okay=False), help="Read settings from this TOML file.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Replace the default exclude list.")
@click.option("--extend-exclude", multiple=True, metavar="GLOB", help="Exclude these on top of the defaults.")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to paths named on the command line (pre-commit).")
@click.option("--stdin-filename", metavar="PATH", help="The name of the file read from stdin (with `-`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: available cores).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False), help="Where to keep the cache (default: .amplint_cache).")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.version_option(__version__, "--version", prog_name="amplint", message="%(prog)s %(version)s")
def check(paths, select, extend_select, ignore, per_file_ignores, output_format, statistics, exit_zero,
          exit_non_zero_on_fix, fix, unsafe_fixes, diff, add_noqa, explain, list_rules, config, isolated, exclude,
          extend_exclude, force_exclude, stdin_filename, jobs, no_cache, cache_dir, quiet) -> None:
    """Lint PATHS (files or directories; default: the current directory). Use `-` for stdin."""
    from .config import CliOverrides, ConfigError, build_settings
    from .files import PathError
    from .rules import all_rules

    rules = all_rules()
    if explain is not None:
        sys.exit(_explain(explain, rules))
    if list_rules:
        _list_rules(rules, output_format)
        sys.exit(0)
    paths = list(paths) or ["."]
    if select and not _codes(select):
        _usage_error("--select needs at least one code or prefix (use --ignore ALL to disable every rule)")
    if isolated and config:
        _usage_error("--config cannot be used with --isolated (which ignores every configuration file)")
    if add_noqa and fix:
        _usage_error("--add-noqa cannot be used with --fix (add the directives, or fix the findings; not both)")
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
        config=config,
        isolated=isolated,
    )
    try:
        settings = build_settings(paths, cli, rules)
    except ConfigError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    fmt = output_format or "concise"
    try:
        if paths == ["-"]:
            results = _lint_stdin(settings, stdin_filename, fix=fix, diff=diff, unsafe=unsafe_fixes)
        elif fix or diff or add_noqa:
            from .fixer import fix_paths

            results = fix_paths(paths, settings, unsafe=unsafe_fixes, diff=diff, add_noqa=add_noqa, jobs=jobs)
        else:
            from .runner import run

            results = run(paths, settings, jobs=jobs, use_cache=not no_cache)
    except PathError as e:
        from .printable import printable

        click.echo(f"amplint: error: {printable(str(e))}", err=True)
        sys.exit(2)
    sys.exit(_report(results, fmt, statistics, exit_zero, exit_non_zero_on_fix, fix, diff, unsafe_fixes, quiet, add_noqa,
                     err=paths == ["-"] and fix and not diff))


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
            err: bool = False) -> int:
    """Print the results; ``err``: everything on stderr (stdout holds the fixed source)."""
    from .diagnostics import Diagnostic
    from .output import RenderContext, render, summary

    diagnostics = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    errors = [e for r in results for e in r.errors]
    warnings = [w for r in results for w in r.warnings]
    fixed = sum(r.fixes_applied for r in results)
    from .printable import printable

    for w in warnings:
        click.echo(f"amplint: warning: {printable(w)}", err=True)
    for e in errors:
        click.echo(f"amplint: error: {printable(e)}", err=True)
    if diff:
        from .fixer import render_diff

        text = render_diff(results)
        if text:
            click.echo(text, nl=False, err=err)
        code = 1 if any(r.fixed_text is not None for r in results) else 0
        return 2 if errors else code
    if add_noqa:
        n = sum(r.fixes_applied for r in results)
        click.echo(f"Added {n} noqa directive{'s' if n != 1 else ''}.", err=True)
        return 2 if errors else 0
    ctx = RenderContext(unsafe_fixes=unsafe, fix_mode=fix, fixed_count=fixed, read_source=_read_source)
    if statistics:
        click.echo(_statistics(diagnostics, fmt), nl=False, err=err)
    else:
        out = render(fmt, diagnostics, ctx)
        if out:
            click.echo(out, nl=False, err=err)
        if fmt in ("concise", "full") and not quiet:
            click.echo(summary(diagnostics, ctx), err=err)
    if errors:
        return 2
    if diagnostics and not exit_zero:
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
             "summary": r.summary()} for r in rules
        ], indent=2))
        return
    w = max(len(r.name) for r in rules)
    click.echo(f"{'code':<7} {'name':<{w}}  {'default':<7}  {'fix':<9}  summary")
    for r in rules:
        click.echo(f"{r.code:<7} {r.name:<{w}}  {'on' if r.default_enabled else 'off':<7}  {r.fix_availability:<9}  {r.summary()}")


def _usage_error(message: str) -> None:
    click.echo(f"amplint: error: {message}", err=True)
    sys.exit(2)


# --- runtime commands (torch is imported inside them only) -------------------------------


def _register_runtime() -> None:
    from .runtime.cli import bench, verify

    main.add_command(verify)
    main.add_command(bench)


_register_runtime()
