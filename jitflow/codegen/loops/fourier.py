"""dft: Fourier transforms of rows, by a mixed-radix Stockham FFT run on tiles of rows.

A tile is TILE_BYTES of each row's elements side by side: element i of the tile's row b
sits at i * B + b of a buffer per part, so every butterfly works on B rows at once and
its loop over them (and over the stage's stride) is contiguous, which LLVM vectorizes at
the host's width; the twiddle factor is one number for the whole loop. The rows are
copied into that layout, transformed by a function of the module (one per length, tile,
dtype and sign), and copied out. Tiles are independent, so a large batch is split
between threads; the rows left after the whole tiles make one smaller tile.

Each stage of radix p takes x of sub-length L = p m at stride s and writes
    y[q + s (p j + k)] = w_L^(j k) sum_r x[q + s (j + r m)] w_p^(r k)
(w_L = e^(sign 2 pi i / L)), ping-ponging between two buffers; after the last stage the
result is in natural order. Radix 4 is used while it divides, then n's prime factors
(an odd one's butterfly pairs r with p - r, halving its products). Twiddles are computed in
float64 from exact integer phases and rounded once to the dtype; there is no fast-math,
so the arithmetic is the same in every lane and on every CPU.
"""
import numpy as np
from llvmlite import ir

from ..emitter import I64, PTR, Emitter, define_function, ltype, module_global
from ..constants import global_for
from ..views import View

TILE_BYTES = 32  # of each row per tile: 8 float32 or 4 float64 rows (measured best on AVX2)
LARGEST_RADIX = 31  # lengths with a larger prime factor are split before (transforms.py)


def radices(n):
    """The stages' radices for length n: fours while they divide, then n's prime
    factors. (Radix 8 was slower on AVX2: its sixteen values and seven twiddles do not
    fit in the registers.)"""
    found = []
    while n % 4 == 0:
        found.append(4)
        n //= 4
    factor = 2
    while n > 1:
        while n % factor == 0:
            found.append(factor)
            n //= factor
        factor += 1
    return found


def supported(n):
    """Whether native code transforms length n directly."""
    return n >= 1 and all(p <= LARGEST_RADIX for p in radices(n))


def dft_rows(lo, node, inputs, outputs):
    (xr, xi), (yr, yi) = inputs, outputs
    rows, n = yr.shape
    if yr.size == 0:
        return
    sign = node.params["sign"]
    parts = (xr, xi, yr, yi)
    tile = min(rows, TILE_BYTES // yr.dtype.itemsize)
    whole, left = divmod(rows, tile)
    buffers = [lo.memory.scratch((n * tile,), yr.dtype, until=lo.node_index,
                                 per_worker=True) for _ in range(4)]
    transform = _tile_transform(lo, parts, tile, sign, buffers)
    steps = [View(v.base, v.dtype, (whole,), (v.strides[0] * tile,), v.offset, v.constant)
             for v in parts]
    lo.loop_nest((whole,), steps, transform, owner=2,
                 work=whole * tile * n * max(1, len(radices(n))))
    if left:
        rest = _tile_transform(lo, parts, left, sign, buffers)
        rest([I64(v.offset + whole * tile * v.strides[0]) for v in parts])
    lo.leave_loops_to_llvm()  # the stages' loops want LLVM's vectorizer


def _tile_transform(lo, parts, tile, sign, buffers):
    """body(offsets): transform the tile of `tile` rows whose first elements are at
    `offsets` of the input and output parts."""
    dtype, n = parts[2].dtype, parts[2].shape[1]
    stages = radices(n)
    function = stockham_function(lo.module, n, tile, sign, dtype)
    result = buffers[:2] if len(stages) % 2 == 0 else buffers[2:]

    def body(offsets):
        em = lo.em
        rows = [View(None if v.base is None else em.element_pointer(v.base, v.dtype, at),
                     v.dtype, (tile, n), v.strides, 0, v.constant)
                for v, at in zip(parts, offsets)]
        for source, buffer in zip(rows[:2], buffers[:2]):
            _transpose(lo, source, buffer, into_tile=True)
        lo.builder.call(function, [b.base for b in buffers])
        for buffer, target in zip(result, rows[2:]):
            _transpose(lo, target, buffer, into_tile=False)
    return body


def _transpose(lo, rows, buffer, into_tile):
    """Between rows (tile, n) and a tile's layout (element i of row b at i * tile + b)."""
    tile, n = rows.shape
    interleaved = View(buffer.base, buffer.dtype, (tile, n), (1, tile))
    source, target = (rows, interleaved) if into_tile else (interleaved, rows)

    def body(offsets):
        lo.em.store(lo.read(source, offsets[0]), target.base, target.dtype, offsets[1])
    lo.loop_nest((tile, n), [source, target], body)


def stockham_function(module, n, tile, sign, dtype):
    """void f(ar, ai, br, bi): the transform of a tile held in (ar, ai); the result is in
    (ar, ai) after an even number of stages, in (br, bi) after an odd one."""
    dtype = np.dtype(dtype)
    name = f"jitflow_dft.{dtype.name}.n{n}.t{tile}.{'inverse' if sign > 0 else 'forward'}"
    return module_global(module, name,
                         lambda: Stockham(module, name, n, tile, sign, dtype).function)


class Stockham:
    """Emits the stages of one transform of a tile."""

    def __init__(self, module, name, n, tile, sign, dtype):
        self.function, self.b = define_function(module, name, ir.VoidType(), [PTR] * 4)
        for argument in self.function.args:
            argument.add_attribute("noalias")
        self.em = Emitter(self.b)
        self.module, self.sign, self.dtype = module, sign, dtype
        self.kind = ltype(dtype)
        args = list(self.function.args)
        source, target = args[:2], args[2:]
        length, stride = n, tile
        for p in radices(n):
            self._stage(source, target, length, stride, p)
            source, target = target, source
            length, stride = length // p, stride * p
        self.b.ret_void()

    # --- one stage ------------------------------------------------------------------------
    def _stage(self, source, target, length, stride, p):
        m = length // p
        twiddles = self._twiddle_tables(length, m, p) if m > 1 else None
        with self.em.for_range(m, name=f"j{length}") as j:
            factors = self._load_twiddles(twiddles, j, p) if twiddles else None
            with self.em.for_range(stride, name=f"q{length}") as q:
                first = self.b.add(q, self.b.mul(j, I64(stride)))
                a = [self._load(source, self.b.add(first, I64(stride * r * m)))
                     for r in range(p)]
                y = self._butterfly(a, p)
                if factors:
                    y = y[:1] + [self._times(v, w) for v, w in zip(y[1:], factors)]
                out = self.b.add(q, self.b.mul(j, I64(stride * p)))
                for k, value in enumerate(y):
                    self._store(value, target, self.b.add(out, I64(stride * k)))

    def _twiddle_tables(self, length, m, p):
        """Globals of w_L^(j k) for j < m, 1 <= k < p: (real parts, imaginary parts)."""
        phases = np.outer(np.arange(m), np.arange(1, p)) % length
        angle = self.sign * 2 * np.pi * phases / length
        return [global_for(self.module, np.ascontiguousarray(part.astype(self.dtype)),
                           self.kind) for part in (np.cos(angle), np.sin(angle))]

    def _load_twiddles(self, tables, j, p):
        first = self.b.mul(j, I64(p - 1))
        return [tuple(self.b.load(self.b.gep(table, [I64(0), self.b.add(first, I64(k))],
                                             inbounds=True), typ=self.kind)
                      for table in tables) for k in range(p - 1)]

    def _load(self, parts, index):
        return tuple(self.em.load(part, self.dtype, index) for part in parts)

    def _store(self, value, parts, index):
        for part, number in zip(parts, value):
            self.em.store(number, part, self.dtype, index)

    # --- complex arithmetic on (real, imag) pairs -----------------------------------------
    def _plus(self, x, y):
        return (self.b.fadd(x[0], y[0]), self.b.fadd(x[1], y[1]))

    def _minus(self, x, y):
        return (self.b.fsub(x[0], y[0]), self.b.fsub(x[1], y[1]))

    def _times(self, x, w):
        return (self.b.fsub(self.b.fmul(x[0], w[0]), self.b.fmul(x[1], w[1])),
                self.b.fadd(self.b.fmul(x[0], w[1]), self.b.fmul(x[1], w[0])))

    def _scaled(self, x, c):
        c = ir.Constant(self.kind, float(c))
        return (self.b.fmul(x[0], c), self.b.fmul(x[1], c))

    def _times_i(self, x):
        """x * (sign i)."""
        if self.sign > 0:
            return (self.b.fneg(x[1]), x[0])
        return (x[1], self.b.fneg(x[0]))

    # --- butterflies: y_k = sum_r a_r w_p^(r k) -----------------------------------------
    def _butterfly(self, a, p):
        if p == 2:
            return [self._plus(a[0], a[1]), self._minus(a[0], a[1])]
        if p == 4:
            t0, t1 = self._plus(a[0], a[2]), self._minus(a[0], a[2])
            t2, t3 = self._plus(a[1], a[3]), self._times_i(self._minus(a[1], a[3]))
            return [self._plus(t0, t2), self._plus(t1, t3), self._minus(t0, t2),
                    self._minus(t1, t3)]
        return self._odd_butterfly(a, p)

    def _odd_butterfly(self, a, p):
        """Pairs r with p - r: a_r w^(rk) + a_(p-r) w^(-rk) = t_r cos + i u_r sin, with
        t_r = a_r + a_(p-r) and u_r = a_r - a_(p-r); y_k and y_(p-k) share the sums."""
        half = (p - 1) // 2
        sums = [self._plus(a[r], a[p - r]) for r in range(1, half + 1)]
        differences = [self._minus(a[r], a[p - r]) for r in range(1, half + 1)]
        y = [None] * p
        total = a[0]
        for t in sums:
            total = self._plus(total, t)
        y[0] = total
        for k in range(1, half + 1):
            angle = 2 * np.pi * (np.arange(1, half + 1) * k % p) / p
            even = a[0]
            odd = None
            for t, u, c, s in zip(sums, differences, np.cos(angle), np.sin(angle)):
                even = self._plus(even, self._scaled(t, c))
                term = self._scaled(u, s)
                odd = term if odd is None else self._plus(odd, term)
            odd = self._times_i(odd)  # i sign sum u_r sin(2 pi r k / p)
            y[k], y[p - k] = self._plus(even, odd), self._minus(even, odd)
        return y
