"""A reference for the standard normal CDF, shared by the erf and GELU tests."""
import math
from decimal import Decimal, localcontext

import numpy as np


def normal_cdf_reference(x):
    """erfc(-x / sqrt 2) / 2 by math.erfc, elementwise, in x's dtype (float32 or float64).

    Computed in float64, math.erfc takes the quotient t rounded, and erfc magnifies that
    error by 2 t^2 in the tail; for float64 results the reference corrects it to first
    order, erfc(t + d) = erfc(t) - d 2/sqrt(pi) exp(-t^2), with d computed in 50 digits.
    """
    x = np.asarray(x)
    values = [_float64_cdf(float(v)) if x.dtype == np.float64
              else 0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in x.ravel()]
    return np.array(values).astype(x.dtype).reshape(x.shape)


def _float64_cdf(v):
    if not math.isfinite(v):
        return 0.5 * math.erfc(-v)
    with localcontext() as context:
        context.prec = 50
        exact = -Decimal(v) / Decimal(2).sqrt()
        t = float(exact)
        d = float(exact - Decimal(t))
    return 0.5 * (math.erfc(t) - d * 2 / math.sqrt(math.pi) * math.exp(-t * t))
