"""Section 3, the floor: what one training round asks numpy to do (calls of each kind, elements of the
product temporaries), counted by instrumenting the module, and the unit prices to weigh it with."""

import contextlib
import functools
import math
import statistics
import time
import timeit
import types

import numpy as np

COUNT_ROUNDS = 20                    # rounds of each training run under the counters
CALL_KINDS = ("ufunc", "function", "method")   # operators and reductions are ufuncs


class CallCounter:
    """Counts entries into numpy from the lesson's code, by kind; what numpy calls inside
    one of them (np.mean calling add.reduce, say) is part of that call, not counted again."""

    def __init__(self):
        self.calls = dict.fromkeys(CALL_KINDS, 0)
        self.product_elements = 0
        self._depth = 0

    @contextlib.contextmanager
    def call(self, kind):
        if self._depth == 0:
            self.calls[kind] += 1
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1


COUNTER = CallCounter()
RANDOM_STATES = (np.random.RandomState, np.random.Generator)   # their draws are counted too


def _plain(x):
    return x.view(np.ndarray) if isinstance(x, Counted) else x


def _counted(x):
    """Results handed back to the lesson's code: arrays become Counted, so that what the
    lesson does with them next (operators, methods, indexing) is counted too."""
    if type(x) is np.ndarray:
        return x.view(Counted)
    if isinstance(x, (tuple, list)):
        return type(x)(_counted(item) for item in x)
    if isinstance(x, RANDOM_STATES):
        return CountingProxy(x)
    return x


class Counted(np.ndarray):
    """An ndarray that counts every ufunc (operators and reductions included), every
    array function (np.concatenate, …) and the common methods called on it."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        with COUNTER.call("ufunc"):
            if "out" in kwargs:
                kwargs["out"] = tuple(map(_plain, kwargs["out"]))
            return _counted(getattr(ufunc, method)(*map(_plain, inputs), **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        with COUNTER.call("function"):
            return _counted(super().__array_function__(func, types, args, kwargs))

    @property
    def T(self):
        return self.transpose()


def _counting_method(method):
    @functools.wraps(method)
    def counting(self, *args, **kwargs):
        with COUNTER.call("method"):
            return _counted(method(self.view(np.ndarray), *args, **kwargs))
    return counting


for _name in ("__getitem__", "__setitem__", "astype", "reshape", "ravel", "transpose",
              "swapaxes", "copy", "argmax", "argmin", "argsort", "sum", "mean", "max", "min",
              "any", "all", "cumsum", "nonzero", "tolist", "item"):
    setattr(Counted, _name, _counting_method(getattr(np.ndarray, _name)))


class CountingProxy:
    """Stands in for numpy (or a random generator) in the lesson's module: each call made
    through it is counted, and the arrays it returns are Counted."""

    def __init__(self, target):
        self._target = target

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if isinstance(value, type):               # dtypes and np.ndarray stay themselves
            return CountingProxy(value) if issubclass(value, RANDOM_STATES) else value
        if isinstance(value, types.ModuleType) or callable(value):
            return CountingProxy(value)
        return value                              # constants

    def __call__(self, *args, **kwargs):
        is_ufunc = isinstance(getattr(self._target, "__self__", self._target), np.ufunc)
        with COUNTER.call("ufunc" if is_ufunc else "function"):
            return _counted(self._target(*args, **kwargs))


def product_elements(a, b):
    """Elements of mm's product temporary for a @ b: batch × M × K × N."""
    if a.ndim < 2 or b.ndim < 2:
        return a.size * b.size
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return math.prod(batch) * a.shape[-2] * a.shape[-1] * b.shape[-1]


@contextlib.contextmanager
def instrumented(lesson):
    """Swap the module's numpy, its two product functions (mm, and right_multiplier for the
    recurrence) and its array constants for counting stand-ins."""
    original_mm, original_right_multiplier = lesson.mm, lesson.right_multiplier

    def counting_mm(a, b):
        COUNTER.product_elements += product_elements(a, b)
        return original_mm(a, b)

    def counting_right_multiplier(W, batch):
        times_W = original_right_multiplier(W, batch)

        def counting_times_W(xT):
            COUNTER.product_elements += W.size * batch         # K × N × batch
            return times_W(xT)
        return counting_times_W

    swaps = {"np": CountingProxy(np), "mm": counting_mm, "right_multiplier": counting_right_multiplier}
    swaps.update({name: value.view(Counted) for name, value in vars(lesson).items()
                  if type(value) is np.ndarray})
    saved = {name: getattr(lesson, name) for name in swaps}
    vars(lesson).update(swaps)
    try:
        yield COUNTER
    finally:
        vars(lesson).update(saved)


def count_training(lesson, length, attention, rounds, test, query="after", lr=0.003):
    """Numpy calls of each kind and product elements of train(...), set-up included."""
    setting = lesson.Setting(attention=attention, query=query, lr=lr)
    COUNTER.__init__()
    with instrumented(lesson):
        lesson.train(setting, test, rounds)
    return dict(COUNTER.calls, elements=COUNTER.product_elements)


def count_per_round(lesson, length, attention, rounds=COUNT_ROUNDS, query="after", lr=0.003):
    """Per training round: the counts of `rounds` rounds less those of the set-up alone."""
    test = lesson.make_test_set(length)
    setup = count_training(lesson, length, attention, 0, test, query, lr)
    total = count_training(lesson, length, attention, rounds, test, query, lr)
    return {key: (total[key] - setup[key]) / rounds for key in total}


def median_cpu_seconds(statement, number, namespace):
    """CPU seconds of one execution of statement: the median of 7 repeats."""
    return statistics.median(timeit.repeat(statement, number=number, repeat=7, globals=namespace,
                                           timer=time.process_time)) / number


def small_call_seconds():
    """One small numpy call: x + y on 512 float64 (the size of a (32, 16) state)."""
    x, y = np.ones(512), np.ones(512)
    return median_cpu_seconds("x + y", 20000, {"x": x, "y": y})


def element_seconds(lesson):
    """One element of a large product temporary: the lesson's mm on (512, 16) @ (16, 16),
    131072 elements multiplied and summed."""
    a, b = np.full((512, 16), 0.5), np.full((16, 16), 0.25)
    namespace = {"mm": lesson.mm, "a": a, "b": b}
    return median_cpu_seconds("mm(a, b)", 200, namespace) / (512 * 16 * 16)
