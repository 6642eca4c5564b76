"""Peak resident memory of this process.

Linux keeps ``ru_maxrss`` across ``execve``: a child started by ``subprocess`` (vfork)
inherits the *parent's* high-water mark, so a small job launched from a big process
(pytest, a notebook) would report the parent's size.  ``VmHWM`` in ``/proc/self/status``
belongs to the process's own address space and starts afresh at exec; it is used where
it exists, ``ru_maxrss`` elsewhere.
"""
import resource
import sys


def peak_rss_bytes():
    """Peak resident set size of this process, in bytes."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(r if sys.platform == "darwin" else r * 1024)
