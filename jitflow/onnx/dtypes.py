"""jitflow's five dtypes and ONNX's element types, both ways."""
import numpy as np
from onnx import helper

from ..ir.types import SUPPORTED_DTYPES


def onnx_type(dtype):
    """The TensorProto element type of a jitflow dtype."""
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def jitflow_dtype(elem_type, where):
    """The jitflow dtype of an ONNX element type, or a TypeError naming `where`."""
    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"{where}: ONNX element type {dtype} is not supported; jitflow "
                        f"supports {', '.join(str(d) for d in SUPPORTED_DTYPES)}")
    return dtype
