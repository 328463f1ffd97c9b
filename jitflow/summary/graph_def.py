"""Pictures (jitflow.drawing) as TensorBoard's GraphDef, made with the tensorboard
package's own protocol buffers.

TensorBoard groups nodes by the scopes in their names, so a Picture's scopes (name
scopes, fused regions, control-flow bodies) are the groups it shows. Each node carries
its dtype and `_output_shapes`, which TensorBoard writes on the edges.
"""
from tensorboard.compat.proto import attr_value_pb2, graph_pb2, node_def_pb2
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.tensorflow_stub import dtypes


def graph_def(picture):
    """The GraphDef of a Picture."""
    result = graph_pb2.GraphDef()
    for node in picture.nodes:
        result.node.append(_node_def(node))
    return result


def _node_def(node):
    proto = node_def_pb2.NodeDef(
        name=node.name, op=node.op,
        input=list(node.inputs) + [f"^{name}" for name in node.control_inputs])
    shapes = [_shape(output.shape) for output in node.outputs]
    proto.attr["_output_shapes"].CopyFrom(
        attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(shape=shapes)))
    dtypes_known = [output.dtype for output in node.outputs if output.dtype is not None]
    if dtypes_known:
        proto.attr["T"].CopyFrom(attr_value_pb2.AttrValue(type=_data_type(dtypes_known[0])))
    for key, value in node.attrs.items():
        proto.attr[key].CopyFrom(attr_value_pb2.AttrValue(s=value.encode("utf-8")))
    return proto


def _shape(shape):
    if shape is None:
        return TensorShapeProto(unknown_rank=True)
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=-1 if d is None else d)
                                 for d in shape])


def _data_type(dtype):
    try:
        return dtypes.as_dtype(dtype).as_datatype_enum
    except TypeError:
        return 0  # DT_INVALID: a dtype TensorBoard has no name for
