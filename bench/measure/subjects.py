"""What is measured: generated/attention.py, the three scripts measured beside it, and the program's four
trainings (bench/torch_reference.py reads the same list)."""

import collections
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, "generated", "attention.py")
PLAIN_SCRIPT = os.path.join(ROOT, "bench", "plain_numpy.py")
TORCH_SCRIPT = os.path.join(ROOT, "bench", "torch_reference.py")
TRAININGS_SCRIPT = os.path.join(ROOT, "bench", "our_trainings.py")   # the lesson's four trainings alone

Model = collections.namedtuple("Model", "length attention rounds query lr")
MODELS = [Model(5, False, 2000, "after", 0.003), Model(5, True, 2000, "after", 0.003),
          Model(10, True, 3000, "after", 0.003), Model(10, True, 3000, "before", 0.02)]


def model_name(model):
    if not model.attention:
        return "length %d, no attention" % model.length
    return "length %d, attention, query %s, lr %g" % (model.length, model.query, model.lr)


def scaled_models(fraction):
    return [model._replace(rounds=max(1, round(model.rounds * fraction))) for model in MODELS]
