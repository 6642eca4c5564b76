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
"""
import glob
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

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

cflags = ["-O3", "-std=gnu11", "-fno-strict-aliasing"]
ldflags = []
if OPENMP:
    cflags.append("-fopenmp")
    ldflags.append("-fopenmp")
if DEBUG:
    cflags = ["-O0", "-g"] + [f for f in cflags if not f.startswith("-O")]


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
        nthreads=int(os.environ.get("ASAPGRAPH_BUILD_JOBS", "2")),
        quiet=True,
    ),
)
