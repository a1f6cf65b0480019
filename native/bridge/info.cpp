// Facts about the build and the runtime, for `lamer doctor` and for tests of the build itself.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <napi.h>
#include <torch/cuda.h>
#include <torch/version.h>
#ifdef LAMER_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include "bridge/errors.h"
#include "bridge/registry.h"
#include "build_info.h"

namespace lamer {
namespace {

// The file a symbol was loaded from: shows which libtorch the process really uses.
std::string LibraryOf(const void* symbol) {
  Dl_info dl{};
  if (dladdr(symbol, &dl) != 0 && dl.dli_fname != nullptr) return dl.dli_fname;
  return "";
}

std::string ConfigValue(const std::string& config, const std::string& key) {
  auto pos = config.find(key + "=");
  if (pos == std::string::npos) return "";
  pos += key.size() + 1;
  auto end = config.find_first_of(",\n", pos);
  return config.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

Napi::Value BuildInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    o.Set("torchVersion", TORCH_VERSION);
    o.Set("torchVersionBuilt", LAMER_BUILD_TORCH_VERSION);
    o.Set("torchLibDir", LAMER_BUILD_TORCH_LIB_DIR);
    o.Set("torchSource", LAMER_BUILD_TORCH_SOURCE);
    o.Set("cudaCompiled", std::string(LAMER_BUILD_CUDA) == "ON");
    o.Set("cudaKernels", std::string(LAMER_BUILD_CUDA_KERNELS) == "ON");
    o.Set("cudaAvailable", torch::cuda::is_available());
    o.Set("cudaDeviceCount", static_cast<double>(torch::cuda::device_count()));
    o.Set("threads", at::get_num_threads());
    o.Set("interopThreads", at::get_num_interop_threads());
    const std::string config = at::show_config();
    o.Set("blas", ConfigValue(config, "BLAS_INFO"));
    o.Set("lapack", ConfigValue(config, "LAPACK_INFO"));
    o.Set("torchConfig", config);
    o.Set("parallelInfo", at::get_parallel_info());
    o.Set("buildType", LAMER_BUILD_TYPE);
    o.Set("compiler", LAMER_BUILD_CXX);
    o.Set("cxxFlags", LAMER_BUILD_CXX_FLAGS);
    o.Set("cxxAbi", static_cast<double>(_GLIBCXX_USE_CXX11_ABI));
    o.Set("napiVersion", static_cast<double>(NAPI_VERSION));
    Napi::Object libs = Napi::Object::New(env);
    libs.Set("torch_cpu", LibraryOf(reinterpret_cast<const void*>(&at::get_num_threads)));
    libs.Set("c10", LibraryOf(reinterpret_cast<const void*>(&c10::GetAllocator)));
    o.Set("loadedLibraries", libs);
    return o;
  });
}

// cudaMemory(device) -> { allocated, reserved, peakAllocated } in bytes for a CUDA device index (the caching
// allocator's counts, what torch.cuda.memory_allocated/memory_reserved/max_memory_allocated report), or null in a build
// without CUDA or where CUDA is not available.
Napi::Value CudaMemory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, [&]() -> Napi::Value {
#ifdef LAMER_WITH_CUDA
    if (info.Length() < 1 || !info[0].IsNumber()) Fail("E_ARG", "cudaMemory(device): device must be a CUDA device index");
    const int device = info[0].As<Napi::Number>().Int32Value();
    if (!torch::cuda::is_available() || device < 0 || device >= static_cast<int>(torch::cuda::device_count())) return env.Null();
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const size_t all = 0;  // StatType::AGGREGATE: every pool (its namespace moved between torch releases)
    Napi::Object o = Napi::Object::New(env);
    o.Set("allocated", static_cast<double>(stats.allocated_bytes[all].current));
    o.Set("reserved", static_cast<double>(stats.reserved_bytes[all].current));
    o.Set("peakAllocated", static_cast<double>(stats.allocated_bytes[all].peak));
    return o;
#else
    return env.Null();
#endif
  });
}

void RegisterInfo(Napi::Env env, Napi::Object exports) {
  exports.Set("buildInfo", Napi::Function::New(env, BuildInfo, "buildInfo"));
  exports.Set("cudaMemory", Napi::Function::New(env, CudaMemory, "cudaMemory"));
}

LAMER_REGISTER(info, RegisterInfo, 5)

}  // namespace
}  // namespace lamer
