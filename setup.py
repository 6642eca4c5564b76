"""Build the Cython kernels.

Every ``asapgraph/**/*.pyx`` becomes an extension module.  A module names the
C helpers it needs from ``csrc/`` in its own header with
``# distutils: sources = csrc/asap_xxx.c`` so this file never changes when a
kernel is added.

Environment switches:

``ASAPGRAPH_CYTHON_DEBUG=1``
    turn bounds/wraparound/initialized checks back on (slow, for debugging).
``ASAPGRAPH_BUILD_ONLY=mod1,mod2``
    build only these modules (dotted names), for quick rebuilds while developing.
``ASAPGRAPH_NO_OPENMP=1``
    build without OpenMP.
``ASAPGRAPH_BUILD_JOBS=N``
    translate and compile N modules at a time (default: every core this process may use;
    ``python setup.py build_ext -j N`` also sets the compile jobs).

Build speed (issue 13): the modules are translated by Cython in parallel and compiled by
the C compiler in parallel (``build_ext`` with one job per core, the largest C file first),
with one set of optimisation flags (Python's own ``-g``/``-O`` flags are dropped: no debug
information, which tripled the objects and cost a third of the compile time).  pip hides a
build's output unless ``-v``; a line per module (``asapgraph: compiling ... [i/n]``) goes to
the terminal (``/dev/tty``) when there is one, else to stderr.
"""
import glob
import os
import sys
import threading
import time

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEBUG = os.environ.get("ASAPGRAPH_CYTHON_DEBUG", "0") == "1"
OPENMP = os.environ.get("ASAPGRAPH_NO_OPENMP", "0") != "1" and sys.platform != "darwin"

compiler_directives = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "nonecheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
    "binding": False,
}

cflags = ["-O3", "-g0", "-std=gnu11", "-fno-strict-aliasing"]
ldflags = []
if OPENMP:
    cflags.append("-fopenmp")
    ldflags.append("-fopenmp")
if DEBUG:
    cflags = ["-O0", "-g"] + [f for f in cflags if not f.startswith(("-O", "-g"))]


def build_jobs():
    """Jobs for translating and compiling: ``ASAPGRAPH_BUILD_JOBS`` or the usable cores."""
    env = os.environ.get("ASAPGRAPH_BUILD_JOBS", "").strip()
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _progress_stream():
    """Where the per-module lines go: stderr if it is a terminal, else the terminal itself
    (pip captures a build's stdout and stderr), else stderr (pip -v, logs, CI)."""
    if sys.stderr.isatty() or os.environ.get("ASAPGRAPH_BUILD_QUIET", "0") == "1":
        return sys.stderr
    try:
        return open("/dev/tty", "w")
    except OSError:
        return sys.stderr


class ParallelBuildExt(build_ext):
    """``build_ext`` compiling the modules concurrently, one line per module."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:  # ``-j N`` on the command line wins
            self.parallel = build_jobs()

    def build_extensions(self):
        # Python's CFLAGS bring their own -g and -O levels; ours (cflags above) decide alone
        for attr in ("compiler_so", "compiler", "linker_so"):
            cmd = getattr(self.compiler, attr, None)
            if isinstance(cmd, list):
                setattr(self.compiler, attr,
                        [a for a in cmd if not (a.startswith("-O") or a.startswith("-g"))])
        # longest first: with more modules than cores the last one to start is a short one
        self.extensions.sort(key=lambda e: -sum(os.path.getsize(s) for s in e.sources
                                                if os.path.exists(s)))
        self._done, self._lock, self._t0 = 0, threading.Lock(), time.perf_counter()
        self._out = _progress_stream()
        if self._out is not sys.stderr:  # after pip's spinner, on a line of its own
            self._say("")
        self._say(f"asapgraph: compiling {len(self.extensions)} modules, "
                  f"{self.parallel if self.parallel is not True else os.cpu_count()} at a time")
        try:
            super().build_extensions()
        finally:
            self._say(f"asapgraph: compiled {self._done} modules in "
                      f"{time.perf_counter() - self._t0:.0f} s")
            if self._out is not sys.stderr:
                self._out.close()

    def _say(self, line):
        if os.environ.get("ASAPGRAPH_BUILD_QUIET", "0") == "1":
            return
        with self._lock:
            try:
                self._out.write(line + "\n")
                self._out.flush()
            except OSError:
                pass

    def build_extension(self, ext):
        t0 = time.perf_counter()
        self._say(f"asapgraph: compiling {ext.name}")
        super().build_extension(ext)
        with self._lock:
            self._done += 1
            i = self._done
        self._say(f"asapgraph: compiled {ext.name} in {time.perf_counter() - t0:.0f} s "
                  f"[{i}/{len(self.extensions)}]")


def module_name(path):
    return os.path.splitext(path)[0].replace(os.sep, ".")


only = {m.strip() for m in os.environ.get("ASAPGRAPH_BUILD_ONLY", "").split(",") if m.strip()}
pyx_files = sorted(glob.glob(os.path.join("asapgraph", "**", "*.pyx"), recursive=True))
extensions = [
    Extension(
        module_name(p),
        [p],
        include_dirs=["csrc", np.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=cflags,
        extra_link_args=ldflags,
    )
    for p in pyx_files
    if not only or module_name(p) in only
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=compiler_directives,
        include_path=["asapgraph", "csrc"],
        nthreads=build_jobs(),
        quiet=True,
    ),
    cmdclass={"build_ext": ParallelBuildExt},
)
