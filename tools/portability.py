"""Prove that a program's stdout is byte-identical across environments.

Runs PROGRAM once as the reference (this interpreter, the environment and interpreter
options tangle.py check runs programs with: run_env and RUN_FLAGS in literate/runner.py)
and then under a
matrix of variants: OpenBLAS thread counts and kernels (OPENBLAS_CORETYPE), numpy's
SIMD code switched off by level (NPY_DISABLE_CPU_FEATURES), other numpy versions and
other Pythons (in venvs cached under .cache/portability/venvs), C and ASCII locales,
other hash seeds, another working directory. Every variant's stdout is compared with
the reference byte for byte; one row per variant, then a total. Progress goes to
stderr. Before each run a small probe in the variant's interpreter reports what the
variant really switched (OpenBLAS core and threads, numpy's enabled SIMD targets,
stdout encoding), so a row says "verified" only when the switch took effect.

A row is skipped, not failed, when the variant cannot exist here: a Python that is
not installed, a SIMD level that numpy compiled into its baseline (numpy refuses to
switch it off), OpenBLAS's SkylakeX kernels on a CPU without AVX-512 (SIGILL). The
ASCII-stdout row fails for a program that prints non-ASCII text through a stdout it
did not set to UTF-8 itself (sys.stdout.reconfigure(encoding="utf-8")).

Examples:
  python tools/portability.py                          # the full matrix
  python tools/portability.py --only CORETYPE          # rows whose name contains it
  python tools/portability.py --program /tmp/t.py --jobs 1
  python tools/portability.py --list                   # the variants, nothing run

Exit status: 0 every variant identical (skips allowed), 1 a variant differs or
failed, 2 bad usage. Linux only (reads /proc). The harness itself needs only the
standard library; the interpreters it runs need numpy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # literate/ and the harness, however this file is loaded
from harness.outcomes import Failure, Outcome, Skip, report  # noqa: E402
from harness.runs import Run, describe_reference, judge, run_variant  # noqa: E402
from harness.variants import Variant, all_variants  # noqa: E402


def attempt(variant: Variant, program: Path, progress) -> Run | Outcome:
    try:
        return run_variant(variant, program, progress)
    except Skip as why:
        return Outcome("skipped", str(why))
    except Failure as why:
        return Outcome("FAILED", str(why))
    except (OSError, subprocess.SubprocessError) as why:  # e.g. a venv's python vanished
        return Outcome("FAILED", f"{type(why).__name__}: {why}")


def check(program: Path, variants: list[Variant], jobs: int, progress) -> int:
    """Run the reference and the variants, print the table; the exit status."""
    baseline = Variant("reference")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        reference_job = pool.submit(attempt, baseline, program, progress)
        counter = iter(range(1, len(variants) + 1))
        lock = threading.Lock()

        def one(variant: Variant) -> Outcome:
            result = attempt(variant, program, progress)
            reference = reference_job.result()
            if isinstance(result, Run) and isinstance(reference, Run):
                result = judge(variant, result, reference)
            elif isinstance(result, Run):
                result = Outcome("skipped", "no reference")
            with lock:
                progress(f"[{next(counter)}/{len(variants)}] {variant.name}: {result}")
            return result

        outcomes = list(pool.map(one, variants))
    reference = reference_job.result()
    if isinstance(reference, Run) and reference.returncode != 0:
        reference = judge(baseline, reference, reference)
    if isinstance(reference, Outcome):
        print(f"reference run FAILED, nothing to compare with: {reference.detail}")
        return 1
    print(f"reference: {describe_reference(reference)}")
    return report([(v.name, o) for v, o in zip(variants, outcomes, strict=True)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="portability.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--program", default="generated/attention.py", help="the program to check")
    parser.add_argument("--only", metavar="SUBSTR", help="run only variants whose name contains it")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="runs in parallel (default: the number of CPUs)")
    parser.add_argument("--list", action="store_true", help="print the variants and exit")
    args = parser.parse_args(argv)

    variants = all_variants()
    if args.only:
        variants = [v for v in variants if args.only.lower() in v.name.lower()]
    if args.list:
        for v in variants:
            print(v.name)
        print(f"{len(variants)} variants")
        return 0
    if not variants:
        print(f"portability.py: error: no variant name contains {args.only!r}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("portability.py: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    program = Path(args.program).resolve()
    if not program.is_file():
        print(f"portability.py: error: {args.program}: no such file", file=sys.stderr)
        return 2

    started = time.monotonic()

    def progress(message: str) -> None:
        elapsed = time.monotonic() - started
        print(f"portability: {elapsed:6.1f} s  {message}", file=sys.stderr, flush=True)

    return check(program, variants, args.jobs, progress)


if __name__ == "__main__":
    raise SystemExit(main())
