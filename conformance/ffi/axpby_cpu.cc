// A small XLA FFI handler for the custom-call conformance test (kernels_ffi):
// out = a * x + b * y over float32 buffers of one size. Compiled at test time
// against the headers jaxlib ships (jax.ffi.include_dir()); a size mismatch is
// returned as an FFI error, which must reach Python as an exception.
#include <cstdint>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

static ffi::Error AxpbyImpl(float a, float b, ffi::Buffer<ffi::F32> x,
                            ffi::Buffer<ffi::F32> y,
                            ffi::ResultBuffer<ffi::F32> out) {
  const int64_t n = static_cast<int64_t>(x.element_count());
  if (static_cast<int64_t>(y.element_count()) != n) {
    return ffi::Error::InvalidArgument("pjrt_conformance_axpby: x and y differ in size");
  }
  const float* xs = x.typed_data();
  const float* ys = y.typed_data();
  float* os = out->typed_data();
  for (int64_t i = 0; i < n; ++i) os[i] = a * xs[i] + b * ys[i];
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtConformanceAxpby, AxpbyImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("a")
                                  .Attr<float>("b")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// Placement probe (area kernels_ffi): writes the device ordinal that XLA passes in
// the FFI call context into a scalar int32 output, so a test can see on which
// device a program actually ran rather than which device its output is labelled with.
static ffi::Error DeviceOrdinalImpl(int32_t device_ordinal, ffi::Buffer<ffi::F32> x,
                                    ffi::ResultBuffer<ffi::S32> out) {
  (void)x;  // an argument ties the call to the program's input on its device
  out->typed_data()[0] = device_ordinal;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtConformanceDeviceOrdinal, DeviceOrdinalImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());
