"""Argument parsing and console output for ``hookgrad train``."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Iterable
from typing import Any

from hookgrad.cli.compile_timing import describe
from hookgrad.cli.data import UserError
from hookgrad.cli.trace_cmd import add_trace_parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hookgrad", description="hookgrad command line")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    t = sub.add_parser("train", help="train a small model while hooks watch it",
                       description="Train an MLP or CNN (default: the 8x8 digits shipped with "
                                   "hookgrad) with hooks monitoring every layer.",
                       epilog="Errors are one line on stderr. Exit codes: 0 success; 2 a user "
                              "mistake (options, data, files, a loss that became non-finite: "
                              "lower --lr); 1 a run that failed otherwise (a rank of --nproc "
                              "lost or killed, an internal error); 130 interrupted.")
    t.add_argument("--model", choices=["mlp", "cnn"], default="cnn")
    t.add_argument("--epochs", type=int, default=12)
    t.add_argument("--batch-size", type=int, default=32)
    t.add_argument("--lr", type=float, default=None, help="default: 3e-3 (adam), 0.05 (sgd)")
    t.add_argument("--optimizer", choices=["sgd", "adam"], default="adam")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--data", default=None, help=".npz with x and y, or CSV (last column label)")
    t.add_argument("--checkpoint", default=None, help="save a checkpoint here every epoch")
    t.add_argument("--resume", default=None, help="continue from this checkpoint")
    t.add_argument("--report", default=None, help="write metrics.json, plots and the graph here")
    t.add_argument("--quiet", action="store_true", help="no progress bars")
    from hookgrad.cli.ddp import add_arguments as add_ddp_arguments
    add_ddp_arguments(t)  # --ddp, --nproc, --comm-hook (hookgrad/cli/ddp.py)
    t.add_argument("--compile", action="store_true",
                   help="run the model through hookgrad.compile (hooks keep their meaning)")
    t.set_defaults(subparser=t)
    add_trace_parser(sub)
    from hookgrad.cli.package_cmd import add_parser as add_package_parser

    add_package_parser(sub)
    return p


def _progress(quiet: bool) -> Any:
    if quiet:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        def simple(items: Iterable, desc: str) -> Iterable:
            print(desc, "...", end=" ", flush=True, file=sys.stderr)
            yield from items
            print("done", file=sys.stderr)
        return simple

    def bar(items: Iterable, desc: str) -> Iterable:
        return tqdm(items, desc=desc, unit="batch", leave=False, file=sys.stderr)

    return bar


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``hookgrad`` console script.

    Every error is one line on stderr: exit code 2 for a user mistake (arguments, data,
    files), 1 for a run that started and failed (a lost rank, an internal error), 130 when
    interrupted.
    """
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if args.command == "trace" and not extra:
        return _guard("hookgrad trace", lambda: args.run(args))
    if extra:  # reported by the subcommand, so the line reads "hookgrad train: error: ..."
        args.subparser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "package":
        from hookgrad.cli.package_cmd import run as run_package

        return _guard("hookgrad package inspect", lambda: run_package(args))
    return _guard("hookgrad train", lambda: _train(args, argv))


def _one_line_warnings(prog: str) -> Any:
    """Python's warning format for the command's duration: one stderr line per warning
    (the default prints the warning's source line under it)."""
    def formatwarning(message: Any, category: type, *args: Any, **kwargs: Any) -> str:
        return f"{prog}: warning: {category.__name__}: {_first_line(Warning(message))}\n"
    return formatwarning


def _guard(prog: str, run: Any) -> int:
    """Run a command; turn every escaping error into one stderr line and an exit code."""
    from hookgrad.cli import ddp

    saved_format = warnings.formatwarning
    warnings.formatwarning = _one_line_warnings(prog)
    try:
        return run()
    except UserError as e:
        code, text = 2, str(e)
    except KeyboardInterrupt:
        code, text = 130, "interrupted"
    except Exception as e:  # noqa: BLE001 - a failed run: one line, not a traceback
        code, text = 1, f"the run failed: {type(e).__name__}: {_first_line(e)}"
    finally:
        warnings.formatwarning = saved_format
    ddp.note_failure(text)  # peers of a DDP run learn why this rank left (named in theirs)
    if ddp.is_main() or code == 130:
        print(f"{prog}: {'error: ' if code != 130 else ''}{text}", file=sys.stderr)
    return code


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [""])[0]


def _train(args: argparse.Namespace, argv: list[str] | None) -> int:
    from hookgrad.cli import ddp
    from hookgrad.cli.report import write_report
    from hookgrad.cli.train import TrainConfig, train

    cfg = TrainConfig(model=args.model, epochs=args.epochs, batch_size=args.batch_size,
                      lr=args.lr, optimizer=args.optimizer, seed=args.seed, data=args.data,
                      checkpoint=args.checkpoint, resume=args.resume, report=args.report,
                      ddp=args.ddp, comm_hook=args.comm_hook,
                      compile=args.compile)
    if args.nproc is not None:
        return ddp.launch(sys.argv[1:] if argv is None else list(argv), args.nproc)
    lead = ddp.setup(args.ddp)  # only rank 0 shows progress, prints and reports
    result = train(cfg, progress=_progress(args.quiet or not lead))
    for e in result.epochs if lead else []:
        print(f"epoch {e['epoch']:>3}  loss {e['loss']:.4f}  train acc {e['train_acc']:.3f}"
              f"  test acc {e['test_acc']:.3f}  ({e['seconds']:.1f}s)")
    if lead:
        print(f"final test accuracy: {result.test_accuracy:.4f} on {result.data}")
        if result.compile_timing is not None:
            print(describe(result.compile_timing))
    if cfg.report and lead:
        for note in write_report(result, cfg.report):
            print(note)
    return 0
