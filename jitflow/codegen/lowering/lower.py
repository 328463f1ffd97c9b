"""Graph -> LLVM module: one entry function that runs the whole graph.

    i32 jitflow_entry(ptr args)

args holds pointers to the inputs, then the outputs (fresh C-contiguous arrays), then
the workspace for intermediates; the result is 0 or an error code (errors.py). Each node
becomes one loop nest writing a contiguous buffer, except the view primitives (reshape,
transpose, broadcast_to, slice), which only re-describe their input's layout.
"""
from dataclasses import replace

import numpy as np
from llvmlite import ir

from ...ir.graph import Lit
from ...ir.primitive import VIEW_OPS
from ...ir.types import is_bfloat16, is_floating
from ..emitter import I8, I32, I64, PTR, Emitter, declared_in, ltype
from ..errors import ErrorState
from ..jit.engine import SHORT_PIPELINE
from ..jit.threads import thread_count
from ..jit.caches import streaming_bytes
from ..loops.vector_loops import (store_fence, streaming_vector_loop, vector_lanes,
                                  vector_loop)
from ..memory import MemoryPlan
from ..sizes import sizes_from
from ..views import View, collapse
from .aliasing import AliasScopes
from ..constants import global_for
from .elementwise import ElementwiseLowering
from .kernels import SharedKernels
from .node_clock import NodeClock
from .numerics import NumericsChecks
from .parallel import BODY, Workers, body_type, define_entry, split_axis
from .runtime_sizes import RuntimeSizes
from .structural import STRUCTURAL

ENTRY = "jitflow_entry"
# Instructions in a segment's function before a new segment starts (see _open_segment).
SEGMENT_INSTRUCTIONS = 300
# A streamed nest's rows are at least this many vectors (Lowering._streamed).
STREAMED_ROW_VECTORS = 4


class Lowering(ElementwiseLowering, RuntimeSizes):
    """Lowers one graph into `modules` (see SEGMENT_INSTRUCTIONS); `memory.size` is the
    workspace it needs. With several threads the graph goes into body functions that
    each worker runs (parallel.py), and ENTRY starts them."""

    def __init__(self, graph, name="jitflow", on_segment=None, threads=None,
                 compile_graph=None, backward_step=None, profile=False, nan_checks=(),
                 size_input=None, typical_size=None):
        """on_segment(module, speed_level) is called with each segment's module as soon
        as it is complete, except the last: entry_module, which holds the entry points
        and may take more (the Python entry) before it is compiled.

        The layers above hand in what lowering control flow needs from them:
        compile_graph(graph, name, threads=, python_entry=) compiles a subgraph the
        generated code calls (control/callees.py), and backward_step(body) builds a
        while_grad's backward step (control/while_grad.py).

        profile: time each node's code into a counter (node_clock.py); `timed_nodes`
        lists the indices of the nodes timed. nan_checks: "NaN" and/or "inf": every
        elementwise operation's float results are checked for them where they are
        computed (inside fused loops too), and the float outputs at the end, flagging
        NAN_MADE or INF_MADE (config.debug_nans, debug_infs; numerics.py).

        size_input: for a graph whose shapes hold Sizes (ir/size_templates.py), the
        position of the input holding n, from which the code computes them; decisions
        that only tune speed take them at typical_size."""
        self.nan_checks = NumericsChecks(self, nan_checks) if nan_checks else None
        self.graph = graph
        self.name = name
        self._on_segment = on_segment
        self.threads = threads or thread_count()
        self.compile_graph = compile_graph or _not_given("compile_graph", "subgraphs")
        self.backward_step = backward_step or _not_given("backward_step", "while_grad")
        self.callees = []  # graphs compiled apart that this one calls (control/branches.py)
        self.callee_nodes = []  # the index of the node that calls each
        self.modules = []
        self.memory = MemoryPlan(graph, self._workspace_pointer, copies=self.threads)
        self.values = {}
        self._nest_depth = 0
        self._nests = 0  # loop nests lowered so far
        self._streamed_loops = 0  # innermost loops with non-temporal stores so far
        self._loops_for_llvm = 0  # in the segment: loops that need LLVM's loop passes
        self.speed_levels = []  # each module's (engine.SHORT_PIPELINE where it can)
        self._origins = {}  # id(buffer pointer) -> (pointer, how to make it again)
        self._placed = {}  # output Var of a later node -> its buffer, chosen ahead
        self._split_any = False
        self.kernels = SharedKernels(self)
        self.clock = NodeClock(self) if profile else None
        self.timed_nodes = []
        self._open_segment(serial_pending=False)
        self._segment_start = 0
        self._moved = {}
        self._used = None  # the values read, once is_used asks
        self.size_input, self.typical_size = size_input, typical_size
        with sizes_from(self._size_value):
            self._lower()

    # --- segments ---------------------------------------------------------------------------
    # A large graph is lowered into several modules, compiled at the same time on
    # separate cores (engine.Compilation). Each holds one function running a stretch
    # of consecutive nodes, which calls the next segment's function when done, handing
    # it the error status reached so far (one status for the chain); every worker runs
    # the whole chain. A segment ends at a node boundary once its function
    # holds SEGMENT_INSTRUCTIONS instructions, and can compile while the next is
    # lowered. Buffers stay where the memory plan put them; only the pointers to them
    # are made again in each function.
    def _open_segment(self, serial_pending):
        index = len(self.modules)
        self._loops_for_llvm = 0
        self.module = ir.Module(f"{self.name}.{index}" if index else self.name)
        self.modules.append(self.module)
        self.kernels.enter_module(self.module)
        self.enter_function(ir.Function(self.module, self._segment_type(index),
                                        self._segment_function(index)), serial_pending)
        self._args = self._function.args[0]
        if index:  # the status so far: code here (a callback) sees earlier errors
            ir.IRBuilder(self._allocas).store(self._function.args[-1], self.em.error.slot)
        self._workspace = self._slot(len(self.graph.inputs) + len(self.graph.outputs))

    def _close_segment(self, last):
        """Return from the segment's function, calling the next segment's first unless
        this is the `last`; returns whether worker 0 ran code since the last barrier."""
        serial_pending = self._end_serial()
        status = self.em.error.result()
        if not last:  # it starts from this status, and answers it if it was an error
            index = len(self.modules)
            following = ir.Function(self.module, self._segment_type(index),
                                    self._segment_function(index))
            arguments = list(self._function.args)[:len(self.function_type().args)]
            status = self.builder.call(following, arguments + [status])
        self._return(status)
        # A module whose every data loop is vector code already needs no loop vectorizer
        # and none of the passes that prepare loops for it.
        self.speed_levels.append(SHORT_PIPELINE if self._loops_for_llvm == 0 else 3)
        if not last and self._on_segment is not None:
            self._on_segment(self.module, self.speed_levels[-1])
        return serial_pending

    # --- the function being lowered ---------------------------------------------------
    # Code goes into a segment's function, or into a shared kernel's (kernels.py) for
    # the time one node is lowered; these are the attributes that change between them.
    FUNCTION_STATE = ("_function", "_allocas", "_entry", "builder", "em", "aliases",
                      "workers", "_size_values", "_n_pointer")

    def function_type(self):
        """A segment's or kernel's: (args) or, with threads, body_type (parallel.py)."""
        return body_type() if self.threads > 1 else ir.FunctionType(I32, [PTR])

    def enter_function(self, function, serial_pending):
        """Lower into `function` from here on; returns the state to give leave_function.
        serial_pending: whether worker 0 may have run code before that other workers
        have not waited for."""
        saved = {name: getattr(self, name, None) for name in self.FUNCTION_STATE}
        self._function = function
        self._allocas = function.append_basic_block("allocas")  # see entry_alloca
        self._entry = function.append_basic_block("entry")
        self._size_values = {}  # (per, const) -> the Size's value (_size_value)
        self._n_pointer = None  # where n is, once size_pointer made it (or a kernel's)
        self.builder = ir.IRBuilder(self._allocas)
        self.em = Emitter(self.builder)
        self.aliases = AliasScopes(self.module, function)
        self.em.error = ErrorState(self.em)  # its status slot is an alloca too
        self.builder.position_at_end(self._entry)
        self.workers = Workers(self.builder, function, self.threads, serial_pending) \
            if self.threads > 1 else None
        if self.workers is not None:
            self.workers.open_serial()
        return saved

    def leave_function(self, saved):
        """Return the function's status and go back to lowering where enter_function
        was called; returns whether worker 0 ran code since the function's last barrier
        (or, when it has none, since it began)."""
        serial_pending = self._end_serial()
        self._return(self.em.error.result())
        for name, value in saved.items():
            setattr(self, name, value)
        return serial_pending

    def _end_serial(self):
        if self.workers is None:
            return False
        self._split_any |= self.workers.used
        return self.workers.close_serial() or self.workers.serial_pending

    def _return(self, status):
        self.builder.ret(status)
        ir.IRBuilder(self._allocas).branch(self._entry)

    def _segment_type(self, index):
        """The first segment's is function_type(); each later one also takes the status
        its caller reached, and starts from it."""
        base = self.function_type()
        return base if index == 0 else ir.FunctionType(I32, [*base.args, I32])

    def _segment_function(self, index):
        name = BODY if self.threads > 1 else ENTRY
        return f"{name}.{index}" if index else name

    def _next_segment(self, node_index):
        """Start a segment at node `node_index`, carrying over the values still needed.
        Their pointers are made again in the new function only when a node uses them
        (`here`): most buffers of a large graph live on through many segments unused."""
        self._open_segment(self._close_segment(last=False))
        self._moved = {}  # id(an earlier segment's pointer) -> the one made again here
        self.values = {var: view for var, view in self.values.items()
                       if self.memory.last_use.get(var, -1) >= node_index}
        self._segment_start = self._instruction_count()

    def here(self, view):
        """`view`, its buffer's pointer made in the function being lowered."""
        if view.base is None:
            return view
        record = self._origins.get(id(view.base))
        if record is None or record[2] == len(self.modules) - 1:
            return view  # made in this segment (or not a buffer of the graph's)
        pointer = self._moved.get(id(view.base))
        if pointer is None:
            pointer = self._moved[id(view.base)] = self._make_again(record[1])
            self.memory.same_buffer(pointer, view.base)
        return replace(view, base=pointer)

    def _make_again(self, origin):
        kind, *details = origin
        if kind == "argument":
            return self._argument(*details)
        if kind == "workspace":
            return self._workspace_pointer(*details)
        return self._constant(*details).base

    def _segment_full(self):
        """Whether the segment's nodes made SEGMENT_INSTRUCTIONS instructions (counting
        the shared kernels defined in its module too). What a segment starts with, the
        pointers to the buffers still live, does not count: in a large graph that alone
        can pass the limit, and every node then got a segment of its own."""
        return self._instruction_count() - self._segment_start >= SEGMENT_INSTRUCTIONS

    def _instruction_count(self):
        return sum(len(block.instructions) for function in self.module.functions
                   for block in function.blocks)

    # --- arguments ------------------------------------------------------------------------
    # Argument and workspace pointers are computed in the first block, which dominates
    # every other: code that only worker 0 runs and parallel nests both use them.
    def _argument(self, index):
        """The buffer of input or output `index`: an allocation of its own."""
        return self._remember(self.aliases.register(self._slot(index)), "argument", index)

    def _remember(self, pointer, *origin):
        """Note how to make `pointer` again in a later segment, and in which it was made."""
        self._origins[id(pointer)] = (pointer, origin, len(self.modules) - 1)
        return pointer

    def _slot(self, index):
        b = ir.IRBuilder(self._allocas)
        slot = b.gep(self._args, [I64(index)], source_etype=PTR)
        return b.load(slot, typ=PTR)

    def _workspace_pointer(self, byte_offset, copy_bytes=0):
        """The workspace at `byte_offset`; scratch kept per worker (copy_bytes: the size
        of one copy) is at worker * copy_bytes from there."""
        # (Run-time sizes, _size_value, are added to the block first: a builder
        # inserts where the block ended when it was made.)
        offset, copy = I64(byte_offset), I64(copy_bytes)
        b = ir.IRBuilder(self._allocas)
        if copy_bytes and self.workers is not None:
            offset = b.add(offset, b.mul(self.workers.worker, copy))
        pointer = self.aliases.register(b.gep(self._workspace, [offset], source_etype=I8))
        return self._remember(pointer, "workspace", byte_offset, copy_bytes)

    def entry_alloca(self, type, align=64):
        """Stack memory for a kernel's own use, allocated in the function's first block
        so that LLVM can keep it in registers (SROA only promotes allocas there). That
        block holds nothing else but the error status's first store, and jumps to
        "entry" once everything is lowered."""
        slot = ir.IRBuilder(self._allocas).alloca(type)
        slot.align = align
        # llvmlite types an alloca as a typed pointer, which its store and gep checks
        # then hold against element stores; the IR is the same opaque `ptr` either way.
        slot.type = PTR
        # No alias scope: LLVM knows a stack slot whose address never escapes shares
        # no memory with anything else, and SROA keeps most of them in registers. (With
        # scopes, a row region's accumulators made its noalias lists 27 scopes long.)
        return slot

    # --- the walk -----------------------------------------------------------------------------
    def _lower(self):
        for i, var in enumerate(self.graph.inputs):
            self.values[var] = View.contiguous(self._argument(i), var.type.dtype,
                                               var.type.shape)
        self._outputs = self._output_buffers()
        for index, node in enumerate(self.graph.nodes):
            if self._segment_full():
                self._next_segment(index)
            self.node_index = index
            loops = self.loops_left_to_llvm
            if self.clock is not None:
                self._lower_node_timed(index, node)
            else:
                self._lower_node(node, self._outputs)
            self.annotate_aliases(loops)
            self.memory.release_after(index)
        loops = self.loops_left_to_llvm
        self._copy_outputs(self._outputs)
        if self.nan_checks is not None:
            first = len(self.graph.inputs)
            self.nan_checks.check_outputs(self.graph, lambda i: self._argument(first + i))
        self.annotate_aliases(loops)
        self._close_segment(last=True)
        self._define_entry()

    def _lower_node_timed(self, index, node):
        if node.op in VIEW_OPS:  # no code: a view re-describes its input's layout
            self._lower_node(node, self._outputs)
            return
        started = self.clock.start()
        self._lower_node(node, self._outputs)
        self.clock.stop(index, started)
        self.timed_nodes.append(index)

    # --- the entry point ------------------------------------------------------------------
    # The entry point goes into the last segment's module (entry_module): it depends on
    # the whole walk (whether any nest was split, and the workspace's size for the
    # Python entry), and every other segment can compile as soon as it is lowered.
    def _define_entry(self):
        self.entry_module = self.modules[-1]
        if self.threads == 1:
            return  # the first segment's function is the entry
        first = declared_in(self.entry_module, self.modules[0].get_global(BODY))
        if len(self.modules) == 1:
            first.linkage = "internal"  # inlined into the entry when nothing was split
        define_entry(self.entry_module, first, self.threads, self._split_any, ENTRY)

    def entry_function(self):
        """ENTRY in entry_module (declared there if another module defines it)."""
        return declared_in(self.entry_module, self.modules[0].get_global(ENTRY)
                           if self.threads == 1 else self.entry_module.get_global(ENTRY))

    def _output_buffers(self):
        """Graph outputs get their own argument buffers; a node that produces one writes
        straight into it (the first time it appears among the outputs)."""
        buffers = {}
        first = len(self.graph.inputs)
        for i, value in enumerate(self.graph.outputs):
            view = View.contiguous(self._argument(first + i), value.type.dtype,
                                   value.type.shape)
            buffers.setdefault(value if not isinstance(value, Lit) else ("lit", i), []).append(view)
        return buffers

    def _lower_node(self, node, outputs):
        inputs = [self.view(v) for v in node.inputs]
        if node.op in VIEW_OPS:
            view = self._view_op(node, inputs[0])
            self.memory.keep_alive(view, node.outputs[0])
            self.values[node.outputs[0]] = view
            return
        destinations = [self._destination(var, outputs) for var in node.outputs]
        if node.op == "fused":
            if all(var.type.size == 0 for var in node.outputs):
                # Nothing to compute (a vector loop over an empty axis meets zero
                # strides), but NumPy still raises for a Python int that does not fit.
                self._check_fused_python_ints(node.subgraphs[0], self._body_views(node, inputs))
            elif not self.kernels.lower(node, inputs, destinations):
                self._fused(node, inputs, destinations)
        elif node.prim.elementwise:
            self._elementwise(node, inputs, destinations[0])
        else:
            rule = STRUCTURAL.get(node.op)
            if rule is None:
                raise NotImplementedError(f"no lowering for primitive '{node.op}'")
            rule(self, node, inputs, destinations)
        for var, view in zip(node.outputs, destinations):
            self.values[var] = view

    def _destination(self, var, outputs):
        """The buffer node output `var` is written to: its graph output's argument
        buffer, else one of the workspace; the one placed ahead, if it was."""
        placed = self._placed.pop(var, None)
        if placed is not None:
            return self.here(placed)
        targets = outputs.get(var)
        return self.here(targets.pop(0)) if targets else self.memory.allocate(var)

    def place_ahead(self, var, until):
        """The buffer that `var`, the output of a later node, will be written to, chosen
        now and kept at least until node `until` is done: a collective's start hands
        MPI the buffer its wait will return (distributed/native.py)."""
        view = self._placed[var] = self._destination(var, self._outputs)
        self.memory.keep_until(view, until)
        return view

    def view(self, value):
        if isinstance(value, Lit):
            return self._constant(value)
        return self.here(self.values[value])

    def _constant(self, lit):
        array = lit.value
        flat = array.reshape(-1)
        if flat.size and np.all(flat == flat[0]) and (
                not is_floating(lit.type.dtype) or
                np.all(np.signbit(flat) == np.signbit(flat[0]))):
            return View(None, lit.type.dtype, array.shape, (0,) * array.ndim, 0, flat[0])
        data = np.ascontiguousarray(array, dtype=lit.type.dtype)
        if lit.type.dtype.kind == "b":
            data = data.astype(np.int8)
        if is_bfloat16(lit.type.dtype):
            data = data.view(np.uint16)  # its bits, as native code holds it
        storage = global_for(self.module, data, ltype(lit.type.dtype))
        return View.contiguous(self._remember(storage, "constant", lit), lit.type.dtype,
                               array.shape)

    def _view_op(self, node, source):
        params = node.params
        if node.op == "transpose":
            return source.transpose(params["perm"])
        if node.op == "broadcast_to":
            return source.broadcast_to(params["shape"])
        if node.op == "slice":
            return source.slice(params["starts"], params["steps"], params["sizes"])
        if not source.is_contiguous() and source.constant is None:  # reshape needs a copy
            copy = self.memory.allocate(node.outputs[0], shape=source.shape)
            self.copy(source, copy)
            source = copy
        return source.reshape(params["shape"])

    def _copy_outputs(self, outputs):
        for key, targets in outputs.items():
            source = self.view(key) if not isinstance(key, tuple) else \
                self._constant(self.graph.outputs[key[1]])
            for target in targets:
                self.copy(source, self.here(target))

    # --- loop nests -------------------------------------------------------------------------
    def loop_nest(self, shape, views, body, rolled=False, owner=None, work=None,
                  vector=False, stream=None, llvm_loops=True):
        """for every index of `shape`: body(element offsets of each view). The views are
        read as broadcast to `shape`; axes are collapsed where all layouts allow.
        rolled: keep LLVM from unrolling the innermost loop (Emitter.keep_rolled).
        owner: the position in `views` of a view each iteration writes only its own
        elements of (stride 0 on reduced axes): a large nest, not inside another, may
        then be split between threads along a loop the owner walks (parallel.py).
        work: the elements the nest handles in all, when each iteration runs a loop.
        vector: the body touches memory only through `read`, `em.load` and `em.store`
        at the offsets it is given, and stores only to views the innermost loop walks;
        it may then be run on vectors (loops/vector_loops.py).
        stream: the position of a view whose stores should stream past the caches (a
        row loop's output, when the whole region is large: touches_enough_to_stream);
        a nest not inside another streams its owner's stores when it is large.
        llvm_loops: an innermost loop left scalar gets LLVM's loop passes (the whole
        segment's module then takes its full pipeline); False for loops too short to
        be worth what that costs to compile."""
        if self.nan_checks is not None:
            body = self.nan_checks.gathered(body)
        stride_lists = [v.broadcast_to(shape).strides for v in views]
        loop_shape, stride_lists = collapse(shape, *stride_lists)
        lanes = vector_lanes(loop_shape, views, stride_lists) if vector else None
        offsets = [I64(v.offset) for v in views]
        self._nests += 1
        nests_before = self._nests
        axis = None
        if owner is not None and self.workers is not None and self._nest_depth == 0:
            axis = split_axis([self.typical(size) for size in loop_shape],
                              stride_lists[owner], self.threads, self.typical(work))
        if stream is None and owner is not None and self._nest_depth == 0 and \
                self.touches_enough_to_stream(views):
            stream = owner
        streamed = self._streamed(views, stream, loop_shape, stride_lists, lanes)
        outermost = self._nest_depth == 0
        self._nest_depth += 1

        def emit(chunk=None):
            streams_before = self._streamed_loops
            self._nest(loop_shape, stride_lists, offsets, 0, body, rolled, lanes, chunk,
                       streamed)
            if outermost and self._streamed_loops > streams_before:
                store_fence(self.em)  # once per nest and worker, not per row
        if axis is None:
            emit()
        else:
            self.workers.split(loop_shape[axis], axis == len(loop_shape) - 1,
                               lambda begin, count: emit((axis, begin, count)))
        self._nest_depth -= 1
        if lanes is None and loop_shape and 0 not in loop_shape and \
                self._nests == nests_before and llvm_loops:
            self.leave_loops_to_llvm()  # an innermost scalar loop over data

    @property
    def loops_left_to_llvm(self):
        """How many loops of the segment being lowered need LLVM's loop passes."""
        return self._loops_for_llvm

    def annotate_aliases(self, loops_before):
        """Alias scopes for the code emitted since loops_left_to_llvm was
        `loops_before`, if it left LLVM loops to vectorize (aliasing.py)."""
        self.aliases.annotate_new(needed=self._loops_for_llvm > loops_before)

    def leave_loops_to_llvm(self):
        """The segment being lowered has loops that need LLVM's loop passes (its
        vectorizer, its promotion of memory to registers): it gets LLVM's pipeline."""
        self._loops_for_llvm += 1

    def touches_enough_to_stream(self, views):
        """Whether a loop over `views` reads and writes at least streaming_bytes()
        (jit/caches.py): its stores should then bypass the caches. (At the typical
        size: streamed or not, the results are the same.)"""
        threshold = streaming_bytes()
        touched = self.typical(sum(v.size * v.dtype.itemsize for v in views
                                   if v.constant is None))
        return threshold > 0 and touched >= threshold

    @staticmethod
    def _streamed(views, position, loop_shape, stride_lists, lanes):
        """(position, base, dtype) of the view at `position` if a vector nest can
        stream its stores: it walks the rows contiguously, and they are several vectors
        long (a non-temporal store of part of a line costs more than it saves). No
        other view may reach its memory from another offset: the emitter makes every
        whole-vector store to that base pointer an aligned non-temporal one."""
        if position is None or lanes is None:
            return None
        target = views[position]
        if target.constant is not None or stride_lists[position][-1] != 1 or \
                loop_shape[-1] < STREAMED_ROW_VECTORS * lanes:
            return None
        if any(view.base is target.base and (view.offset, strides) !=
               (target.offset, stride_lists[position])
               for view, strides in zip(views, stride_lists)):
            return None
        return position, target.base, target.dtype

    def _nest(self, shape, stride_lists, offsets, axis, body, rolled, lanes, chunk=None,
              streamed=None):
        """lanes: run the innermost loop as vector code of that many lanes (or None).
        chunk: (axis, first index, count), run-time values, when only that part of
        one loop is this worker's. streamed: the view whose stores stream (_streamed)."""
        if axis == len(shape):
            body(offsets)
            return
        count = shape[axis]
        if not isinstance(count, int):  # a run-time size (ir/sizes.py)
            count = I64(count)
        if chunk is not None and chunk[0] == axis:
            _, first, count = chunk
            offsets = self.em.all_moved(offsets, first, [s[axis] for s in stride_lists])
        if lanes is not None and axis == len(shape) - 1:
            steps = [s[axis] for s in stride_lists]
            if streamed is None:
                vector_loop(self.em, count, steps, offsets, body, lanes, name=f"ax{axis}")
            else:
                streaming_vector_loop(self.em, count, steps, offsets, body, lanes,
                                      f"ax{axis}", streamed)
                self._streamed_loops += 1
            return
        with self.em.for_range(count, name=f"ax{axis}") as index:
            moved = self.em.all_moved(offsets, index, [s[axis] for s in stride_lists])
            self._nest(shape, stride_lists, moved, axis + 1, body, rolled, lanes, chunk,
                       streamed)
        if rolled and axis == len(shape) - 1:
            # With unrolling on (jit/engine.py turns it off), LLVM fully unrolls short
            # loops before its loop vectorizer runs, and the straight-line code left
            # behind calls the scalar math functions one by one
            # (16 expf calls for a row of 16); kept as a loop, it gets the vector ones.
            self.em.keep_rolled(index)

    def is_used(self, value):
        """Whether a node of the graph reads `value` (an output of one of its nodes) or
        the graph returns it: a factorization whose vectors nobody reads skips them."""
        if self._used is None:
            self._used = {v for node in self.graph.nodes for v in node.inputs
                          if not isinstance(v, Lit)}
            self._used.update(v for v in self.graph.outputs if not isinstance(v, Lit))
        return value in self._used

    def read(self, view, offset):
        if view.constant is not None:
            return self.em.const(view.constant, view.dtype)
        return self.em.load(view.base, view.dtype, offset)

    def fill(self, target, value):
        def body(offsets):
            self.em.store(self.em.const(value, target.dtype), target.base, target.dtype,
                          offsets[0])
        self.loop_nest(target.shape, [target], body, owner=0, vector=True)

    def copy(self, source, target, llvm_loops=True):
        """target[...] = source, converting the dtype; target is contiguous.
        llvm_loops: as loop_nest takes it."""
        def body(offsets):
            value = self.em.cast(self.read(source, offsets[0]), source.dtype, target.dtype)
            self.em.store(value, target.base, target.dtype, offsets[1])
        self.loop_nest(target.shape, [source, target], body, owner=1, vector=True,
                       llvm_loops=llvm_loops)


def _not_given(what, needed_by):
    def missing(*args, **kwargs):
        raise NotImplementedError(f"lowering {needed_by} needs the {what} the Lowering "
                                  f"was not given")
    return missing
