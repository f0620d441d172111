"""Put the repository root on sys.path so the tests can `import tangle`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
