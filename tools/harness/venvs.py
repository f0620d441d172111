"""Interpreters: another installed Python (pyenv's or on PATH), and throwaway venvs holding only numpy,
built on demand under .cache/portability/venvs and reused while numpy still imports."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from literate.runner import run_env

from .outcomes import Failure, Skip, last_line
from .variants import Venv

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "portability"
BUILD_TIMEOUT = 900  # seconds per venv build (pip downloads numpy)


def find_python(version: str) -> str | None:
    """A working python<version>: pyenv's installs first (its shims refuse without
    PYENV_VERSION), then PATH and the usual prefixes."""
    candidates = []
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "versions", "--bare"], capture_output=True, text=True)
        pattern = re.escape(version) + r"\.\d+"
        installed = [v for v in done.stdout.split() if re.fullmatch(pattern, v)]
        installed.sort(key=lambda v: int(v.rsplit(".", 1)[1]), reverse=True)
        root = subprocess.run([pyenv, "root"], capture_output=True, text=True).stdout.strip()
        candidates += [f"{root}/versions/{v}/bin/python{version}" for v in installed]
    candidates += [shutil.which(f"python{version}") or "", f"/usr/local/bin/python{version}",
                   f"/usr/bin/python{version}"]
    for path in filter(None, candidates):
        if _python_version(path, major_minor=True) == version:
            return path
    return None


def _python_version(python: str, major_minor: bool = False) -> str | None:
    code = f"import sys; print(*sys.version_info[:{2 if major_minor else 3}], sep='.')"
    env = {k: v for k, v in os.environ.items() if k != "PYENV_VERSION"}
    try:
        done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                              timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


_venv_locks: dict[Path, threading.Lock] = {}
_venv_locks_guard = threading.Lock()
_venvs_ready: set[Path] = set()  # checked in this run: numpy imports


def venv_python(venv: Venv, progress) -> str:
    """The venv's interpreter, built (or rebuilt, if it no longer imports numpy) on demand."""
    if venv.python:
        base = find_python(venv.python)
    else:
        base = getattr(sys, "_base_executable", sys.executable)
    if base is None:
        raise Skip(f"Python {venv.python} is not installed here (looked in pyenv and PATH)")
    version = _python_version(base) or "unknown"
    path = CACHE / "venvs" / f"{version}-{venv.numpy}"
    python = path / "bin" / "python"
    with _venv_locks_guard:
        lock = _venv_locks.setdefault(path, threading.Lock())
    with lock:
        if path in _venvs_ready or _imports_numpy(python) == venv.numpy:
            _venvs_ready.add(path)
            return str(python)
        shutil.rmtree(path, ignore_errors=True)
        progress(f"building venv {path.relative_to(ROOT)}")
        steps = ([base, "-m", "venv", str(path)],
                 [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  "--no-input", f"numpy=={venv.numpy}"])
        env = run_env(None)
        for step in steps:
            try:
                done = subprocess.run(step, env=env, capture_output=True, timeout=BUILD_TIMEOUT)
            except subprocess.TimeoutExpired:
                raise Failure(f"building {path.name} timed out after {BUILD_TIMEOUT} s") from None
            if done.returncode != 0:
                shutil.rmtree(path, ignore_errors=True)
                raise Failure(f"building {path.name}: {last_line(done.stderr or done.stdout)}")
        if _imports_numpy(python) != venv.numpy:
            raise Failure(f"{path.name}: numpy {venv.numpy} installed but does not import")
        _venvs_ready.add(path)
    return str(python)


def _imports_numpy(python: Path) -> str | None:
    if not python.exists():
        return None
    try:
        done = subprocess.run([str(python), "-c", "import numpy; print(numpy.__version__)"],
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
