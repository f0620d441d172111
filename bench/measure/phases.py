"""Section 2: the phases of generated/attention.py in this process (the module imported, its main() not
run): the hand example, the four trainings and their evaluations."""

import importlib.util
import statistics

from . import subjects
from .clock import median_timing, progress, timed
from .floor import element_seconds, small_call_seconds
from .subjects import model_name


def load_lesson():
    """Import generated/attention.py as a module (its main() is not run); (module, Timing)."""
    spec = importlib.util.spec_from_file_location("attention_under_bench", subjects.PROGRAM)
    lesson = importlib.util.module_from_spec(spec)
    _, timing = timed(spec.loader.exec_module, lesson)
    return lesson, timing


def time_phases_once(lesson, models):
    """{phase: Timing} for one pass, and {model: (whole, per_token)} accuracies."""
    timings, accuracy = {}, {}
    _, timings["hand example"] = timed(lesson.hand_example)
    for model in models:
        name = model_name(model)
        progress("in-process: training %s, %d rounds" % (name, model.rounds))
        test = lesson.make_test_set(model.length)
        setting = lesson.Setting(attention=model.attention, query=model.query, lr=model.lr)
        (trained,), timings["train " + name] = timed(lesson.train, setting, test, model.rounds)
        result, timings["evaluate " + name] = timed(lesson.evaluate, trained, test)
        accuracy[name] = (float(result[0]), float(result[1]))
    return timings, accuracy


def time_phases(lesson, models, runs):
    """{phase: median Timing} over `runs` passes, the (deterministic) accuracies, and the
    unit prices of section 3 (median seconds per small call and per product element),
    measured after each pass so that under a changing load they see what the trainings saw."""
    passes, prices = [], []
    for _ in range(runs):
        timings, accuracy = time_phases_once(lesson, models)
        passes.append(timings)
        prices.append((small_call_seconds(), element_seconds(lesson)))
    phases = {phase: median_timing([p[phase] for p in passes]) for phase in passes[0]}
    return phases, accuracy, tuple(map(statistics.median, zip(*prices, strict=True)))
