"""Failures carry their arrays as data (``conformance.helpers.reproduction``)."""

import ml_dtypes
import numpy as np
import pytest

from conformance.helpers import assertions
from conformance.helpers import reproduction
from conformance.session import outcomes


@pytest.mark.parametrize("a", [np.float32(2.5), np.zeros((2, 0), np.int8),
                               np.arange(6.0).reshape(2, 3).T,  # not C-contiguous
                               np.array([1.5, -0.0], ml_dtypes.bfloat16),
                               np.array([1 + 2j], np.complex128), np.array([True])],
                         ids=["0-d", "empty", "transposed", "bfloat16", "complex", "bool"])
def test_arrays_round_trip_through_json_data(a):
    back = reproduction.decode_array(reproduction.encode_array(a))
    assert back.dtype == np.asarray(a).dtype and back.shape == np.shape(a)
    assert back.tobytes() == np.asarray(a).tobytes()


def test_bad_data_and_oversize_arrays():
    for bad in (None, "AAAA", {}, {"dtype": "nope", "shape": [1], "base64": ""},
                {"dtype": "float32", "shape": [2], "base64": "AAAA"},
                {"dtype": "float32", "shape": [1], "base64": "not base64!"}):
        with pytest.raises(ValueError, match="argument 'data'"):
            reproduction.decode_array(bad)
    assert reproduction.encode_array(np.zeros(reproduction.MAX_ARRAY_BYTES + 1, np.uint8)) is None
    assert reproduction.encode_array(np.array([object()])) is None


def test_a_rejected_result_records_inputs_observed_expected_and_the_assertion():
    x = np.array([1.0, 2.0], np.float32)
    with pytest.raises(AssertionError) as info:
        with reproduction.reproduction("execute(neg)", program="module {}", inputs=[x]):
            assertions.assert_ulp_close(-x + np.float32([0, 1]), -x, max_ulp=1, call="neg")
    x[:] = 0  # the record keeps the inputs as they were at the failure
    facts = outcomes.failure_facts(info.value)
    arrays = facts["arrays"]
    assert arrays["assertion"] == "assert_ulp_close"
    assert arrays["options"] == {"max_ulp": 1, "atol": 0.0, "signed_zeros": False}
    assert reproduction.decode_array(arrays["inputs"][0]).tolist() == [1.0, 2.0]
    assert reproduction.decode_array(arrays["observed"]).tolist() == [-1.0, -1.0]
    assert reproduction.decode_array(arrays["expected"]).tolist() == [-1.0, -2.0]


def test_no_arrays_when_nothing_was_recorded():
    with pytest.raises(RuntimeError) as info:
        with reproduction.reproduction("call"):
            raise RuntimeError("no arrays")
    assert outcomes.failure_facts(info.value)["arrays"] is None
    big = np.zeros(reproduction.MAX_ARRAY_BYTES, np.float64)  # over the limit: no data, no error
    with pytest.raises(AssertionError) as info:
        with reproduction.reproduction("call", inputs=[big]):
            assertions.assert_exact(big + 1, big, call="big")
    assert outcomes.failure_facts(info.value)["arrays"] is None
