"""numpy dtypes matching ``_typedefs.pxd``."""
import numpy as np

EID = np.dtype(np.int64)
VID32 = np.dtype(np.int32)
VID64 = np.dtype(np.int64)
ORIG = np.dtype(np.int64)
WEIGHT = np.dtype(np.float64)


def vid_dtype(n):
    """Smallest vertex-id dtype that can index ``n`` vertices."""
    return VID32 if n < 2**31 - 1 else VID64
