"""The NumPy Threefry-2x32 reference matches Random123's known answers, and one round
fewer (the broken backend's PRNG) does not."""

import numpy as np
import pytest

from conformance.helpers.threefry import jax_threefry_2x32, threefry2x32

# Random123 kat_vectors, threefry2x32_20: (key, counter) -> output.
KAT = [((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
       ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
       ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0))]


@pytest.mark.parametrize("key,ctr,out", KAT)
def test_known_answers(key, ctr, out):
    y0, y1 = threefry2x32(key, np.array([ctr[0]]), np.array([ctr[1]]))
    assert (int(y0[0]), int(y1[0])) == out


@pytest.mark.parametrize("key,ctr,out", KAT)
def test_one_round_fewer_differs(key, ctr, out):
    y0, y1 = threefry2x32(key, np.array([ctr[0]]), np.array([ctr[1]]), rounds=19)
    assert (int(y0[0]), int(y1[0])) != out


def test_jax_layout_splits_and_pads():
    c = np.arange(5, dtype=np.uint32)
    y = jax_threefry_2x32((1, 2), c)
    y0, y1 = threefry2x32((1, 2), np.array([0, 1, 2], np.uint32), np.array([3, 4, 0], np.uint32))
    assert y.tolist() == np.concatenate([y0, y1])[:5].tolist()


@pytest.mark.parametrize("kwargs,match", [(dict(rounds=0), "argument 'rounds' must be in 1..20"),
                                          (dict(rounds=21), "got 21")])
def test_bad_rounds(kwargs, match):
    with pytest.raises(ValueError, match=match):
        threefry2x32((0, 0), np.zeros(1), np.zeros(1), **kwargs)


def test_counter_shapes_must_agree():
    with pytest.raises(ValueError, match=r"differ in shape: \(1,\) vs \(2,\)"):
        threefry2x32((0, 0), np.zeros(1), np.zeros(2))
