/* A build-time stand-in for the CUDA driver (libcuda.so.1), like the CUDA toolkit's
 * stubs/libcuda.so, which this machine's toolkit lacks.
 *
 * TVM's wheel keeps its CUDA runtime in libtvm_runtime_cuda.so, which needs libcuda.so.1.
 * Where that library cannot load (no driver), tvm.compile for cuda makes a fallback module
 * holding CUDA source that must be compiled again where it is loaded; with it loaded, TVM calls
 * nvcc and the artefact carries device code. The export step (python/tests/deploy) only
 * compiles: these entry points, the driver calls libtvm_runtime_cuda.so imports, are never
 * called there and answer CUDA_ERROR_NO_DEVICE (100) if they are. Never shipped or used at
 * test time: a GPU runner has its real driver.
 */
#define TVM_CONFORMANCE_CUDA_STUB(name) \
  int name(void) { return 100; }

TVM_CONFORMANCE_CUDA_STUB(cuDeviceGetName)
TVM_CONFORMANCE_CUDA_STUB(cuFuncSetAttribute)
TVM_CONFORMANCE_CUDA_STUB(cuGetErrorName)
TVM_CONFORMANCE_CUDA_STUB(cuGetErrorString)
TVM_CONFORMANCE_CUDA_STUB(cuLaunchKernelEx)
TVM_CONFORMANCE_CUDA_STUB(cuModuleGetFunction)
TVM_CONFORMANCE_CUDA_STUB(cuModuleLoadData)
TVM_CONFORMANCE_CUDA_STUB(cuModuleUnload)
TVM_CONFORMANCE_CUDA_STUB(cuTensorMapEncodeTiled)
