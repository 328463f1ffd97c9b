"""Complex values through jitflow's control flow (cond, switch, while_loop, fori_loop,
scan): as operands, carries, scanned slices and results, against the same Python loop
run by NumPy, and differentiated against central differences."""
import numpy as np
import pytest

import jitflow
import jitflow.numpy as jnp
from complex_checks import assert_complex_same

pytestmark = pytest.mark.usefixtures("backend")

Z = (np.arange(6) + 1j * np.arange(6)[::-1]).reshape(2, 3) / 4


def assert_same_results(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert_complex_same(g, e, scale=np.abs(e) + 1, eps=1e-14)


def test_cond_and_switch_take_and_give_complex_values():
    def branch(z, p):
        return jitflow.cond(p > 0, lambda z: z * 2j, lambda z: jnp.conj(z), z)
    for p, expected in ((1.0, Z * 2j), (-1.0, np.conj(Z))):
        assert_same_results(jitflow.function(branch)(Z, p), expected)

    def chosen(z, i):
        return jitflow.switch(i, [lambda z: z + 1, lambda z: z * 1j, lambda z: jnp.abs(z) + 0j],
                              z)
    for i, expected in enumerate([Z + 1, Z * 1j, np.abs(Z) + 0j]):
        assert_same_results(jitflow.function(chosen)(Z, i), expected)


def test_loops_carry_complex_arrays_and_scalars():
    def grow(z):
        return jitflow.while_loop(lambda c: jnp.abs(c[1]).sum() < 10,
                                  lambda c: (c[0] + 1, c[1] * (1 + 0.5j)), (0, z))
    count, value = 0, Z
    while np.abs(value).sum() < 10:
        count, value = count + 1, value * (1 + 0.5j)
    assert_same_results(jitflow.function(grow)(Z), (count, value))

    def horner(z):
        return jitflow.fori_loop(0, 3, lambda i, c: c * z + i, jnp.ones_like(z))
    value = np.ones_like(Z)
    for i in range(3):
        value = value * Z + i
    assert_same_results(jitflow.function(horner)(Z), value)


def test_scan_carries_and_stacks_complex_values():
    def recurrence(xs):
        return jitflow.scan(lambda c, x: (c * 0.5j + x, (c, jnp.abs(c))),
                            jnp.zeros(3, complex), xs)
    carry, carries, magnitudes = np.zeros(3, complex), [], []
    for x in Z:
        carries.append(carry)
        magnitudes.append(np.abs(carry))
        carry = carry * 0.5j + x
    got = jitflow.function(recurrence)(Z)
    assert_same_results((got[0],) + tuple(got[1]), (carry, np.array(carries),
                                                     np.array(magnitudes)))


def test_gradient_through_a_scan_with_a_complex_parameter():
    """dL/dx - i dL/dy of |c_n|^2 for c_k = c_(k-1) w + x_k (jitflow's convention)."""
    xs = np.array([1 + 1j, 2 - 1j, 0.5j])

    def loss(w, xs):
        c, _ = jitflow.scan(lambda c, x: (c * w + x, None), jnp.zeros((), complex), xs)
        return jnp.abs(c) ** 2

    def numpy_loss(wr, wi):
        c = 0
        for x in xs:
            c = c * complex(wr, wi) + x
        return abs(c) ** 2
    w, h = 0.5 + 0.25j, 1e-6
    expected = ((numpy_loss(w.real + h, w.imag) - numpy_loss(w.real - h, w.imag)) -
                1j * (numpy_loss(w.real, w.imag + h) - numpy_loss(w.real, w.imag - h))) / (2 * h)
    for gradient in (jitflow.grad(loss), jitflow.function(jitflow.grad(loss))):
        np.testing.assert_allclose(gradient(w, xs), expected, rtol=1e-7)
