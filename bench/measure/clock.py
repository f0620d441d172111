"""Wall and CPU time (user + system, child processes included), page faults and the load average; progress
on stderr when it is a terminal."""

import collections
import os
import resource
import statistics
import subprocess
import sys
import time

from .subjects import ROOT


def progress(message):
    if sys.stderr.isatty():
        print(message, file=sys.stderr, flush=True)


def load_now():
    return os.getloadavg()[0]


class MeasuredProgramFailed(Exception):
    pass


# cpu = user + system seconds, sys = the system part of it, faults = minor page faults
Timing = collections.namedtuple("Timing", "wall cpu sys faults")


def median_timing(timings):
    return Timing._make(map(statistics.median, zip(*timings, strict=True)))


def total_timing(timings):
    return Timing._make(map(sum, zip(*timings, strict=True)))


def median_ratios(timings, others):
    """timings[i] / others[i], pair by pair (a pair ran in the same turn, under nearly the same load): the
    median over the pairs of the CPU ratio and of the wall ratio."""
    pairs = list(zip(timings, others, strict=True))
    return (statistics.median(a.cpu / b.cpu for a, b in pairs), statistics.median(a.wall / b.wall for a, b in pairs))


def difference(later, earlier):
    return Timing._make(a - b for a, b in zip(later, earlier, strict=True))


def usage_now(who):
    """A Timing since the start of this process (RUSAGE_SELF) or of the waited-for
    descendants (RUSAGE_CHILDREN)."""
    usage = resource.getrusage(who)
    return Timing(time.perf_counter(), usage.ru_utime + usage.ru_stime, usage.ru_stime,
                  usage.ru_minflt)


def timed(function, *args, **kwargs):
    """(result, Timing) of function(*args, **kwargs) in this process."""
    before = usage_now(resource.RUSAGE_SELF)
    result = function(*args, **kwargs)
    return result, difference(usage_now(resource.RUSAGE_SELF), before)


def run_timed(command, stdout, timeout=None, env=None):
    """(completed process, Timing); the Timing includes the command's own children."""
    before = usage_now(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=env, check=False)
    return done, difference(usage_now(resource.RUSAGE_CHILDREN), before)
