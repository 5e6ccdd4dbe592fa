// The CUDA twin of axpby_cpu.cc: out = a * x + b * y on the platform's stream.
#include <cstdint>

#include <cuda_runtime.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

__global__ void AxpbyKernel(float a, float b, const float* x, const float* y, float* out,
                            int64_t n) {
  int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a * x[i] + b * y[i];
}

// The status of the last kernel launch on this thread, as an FFI error.
static ffi::Error LaunchStatus() {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return ffi::Error::Internal(cudaGetErrorString(err));
  return ffi::Error::Success();
}

static ffi::Error AxpbyImpl(cudaStream_t stream, float a, float b, ffi::Buffer<ffi::F32> x,
                            ffi::Buffer<ffi::F32> y, ffi::ResultBuffer<ffi::F32> out) {
  const int64_t n = static_cast<int64_t>(x.element_count());
  if (static_cast<int64_t>(y.element_count()) != n) {
    return ffi::Error::InvalidArgument("pjrt_conformance_axpby: x and y differ in size");
  }
  if (n > 0) {
    const int threads = 256;
    const int blocks = static_cast<int>((n + threads - 1) / threads);
    AxpbyKernel<<<blocks, threads, 0, stream>>>(a, b, x.typed_data(), y.typed_data(),
                                                out->typed_data(), n);
  }
  return LaunchStatus();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtConformanceAxpby, AxpbyImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Attr<float>("a")
                                  .Attr<float>("b")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

// Placement probe: the device ordinal from the FFI call context, written into the
// scalar int32 output on the platform's stream (see axpby_cpu.cc).
__global__ void StoreOrdinalKernel(int32_t ordinal, int32_t* out) { *out = ordinal; }

static ffi::Error DeviceOrdinalImpl(cudaStream_t stream, int32_t device_ordinal,
                                    ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::S32> out) {
  (void)x;
  StoreOrdinalKernel<<<1, 1, 0, stream>>>(device_ordinal, out->typed_data());
  return LaunchStatus();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(PjrtConformanceDeviceOrdinal, DeviceOrdinalImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ffi::DeviceOrdinal>()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::S32>>());
