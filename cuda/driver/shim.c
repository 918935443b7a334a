// shim.c resolves the CUDA driver API from libcuda.so.1 at run time and
// forwards calls to it. Versioned names (the _v2 suffixes) are the ones
// cuda.h maps the plain names to since CUDA 4.0/11.0; the legacy default
// stream variants are used (no _ptds/_ptsz).
#include <dlfcn.h>
#include "shim.h"

#define CUZK_API(X)                                                              \
  X(cuInit, CUresult, (unsigned))                                                \
  X(cuDriverGetVersion, CUresult, (int *))                                       \
  X(cuGetErrorName, CUresult, (CUresult, const char **))                         \
  X(cuGetErrorString, CUresult, (CUresult, const char **))                       \
  X(cuDeviceGetCount, CUresult, (int *))                                         \
  X(cuDeviceGet, CUresult, (CUdevice *, int))                                    \
  X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                          \
  X(cuDeviceGetAttribute, CUresult, (int *, int, CUdevice))                      \
  X(cuDeviceTotalMem_v2, CUresult, (size_t *, CUdevice))                         \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))                 \
  X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice))                          \
  X(cuCtxSetCurrent, CUresult, (CUcontext))                                      \
  X(cuCtxSynchronize, CUresult, (void))                                          \
  X(cuMemGetInfo_v2, CUresult, (size_t *, size_t *))                             \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                            \
  X(cuMemFree_v2, CUresult, (CUdeviceptr))                                       \
  X(cuMemHostAlloc, CUresult, (void **, size_t, unsigned))                       \
  X(cuMemFreeHost, CUresult, (void *))                                           \
  X(cuMemHostRegister_v2, CUresult, (void *, size_t, unsigned))                  \
  X(cuMemHostUnregister, CUresult, (void *))                                     \
  X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))              \
  X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                    \
  X(cuMemcpyDtoD_v2, CUresult, (CUdeviceptr, CUdeviceptr, size_t))               \
  X(cuMemcpyHtoDAsync_v2, CUresult, (CUdeviceptr, const void *, size_t, CUstream)) \
  X(cuMemcpyDtoHAsync_v2, CUresult, (void *, CUdeviceptr, size_t, CUstream))     \
  X(cuMemcpyDtoDAsync_v2, CUresult, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
  X(cuMemsetD8_v2, CUresult, (CUdeviceptr, unsigned char, size_t))               \
  X(cuMemsetD32_v2, CUresult, (CUdeviceptr, unsigned int, size_t))               \
  X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                      \
  X(cuModuleUnload, CUresult, (CUmodule))                                        \
  X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))       \
  X(cuFuncGetAttribute, CUresult, (int *, int, CUfunction))                      \
  X(cuFuncSetAttribute, CUresult, (CUfunction, int, int))                        \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult,                       \
    (int *, CUfunction, int, size_t))                                            \
  X(cuLaunchKernel, CUresult, (CUfunction, unsigned, unsigned, unsigned,         \
                               unsigned, unsigned, unsigned, unsigned, CUstream, \
                               void **, void **))                                \
  X(cuStreamCreate, CUresult, (CUstream *, unsigned))                            \
  X(cuStreamSynchronize, CUresult, (CUstream))                                   \
  X(cuStreamDestroy_v2, CUresult, (CUstream))                                    \
  X(cuEventCreate, CUresult, (CUevent *, unsigned))                              \
  X(cuEventRecord, CUresult, (CUevent, CUstream))                                \
  X(cuEventSynchronize, CUresult, (CUevent))                                     \
  X(cuEventElapsedTime, CUresult, (float *, CUevent, CUevent))                   \
  X(cuEventDestroy_v2, CUresult, (CUevent))

#define CUZK_FIELD(name, ret, args) ret(*name) args;
struct cuzk_api {
  CUZK_API(CUZK_FIELD)
};
static struct cuzk_api api;

int cuzk_load(const char *lib, const char **what) {
  struct cuzk_api a;
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    *what = dlerror();
    return 1;
  }
#define CUZK_RESOLVE(name, ret, args)      \
  a.name = (ret(*) args)dlsym(h, #name);   \
  if (a.name == NULL) {                    \
    *what = #name;                         \
    dlclose(h);                            \
    return 2;                              \
  }
  CUZK_API(CUZK_RESOLVE)
  api = a;
  return 0;
}

CUresult cuzk_init(void) { return api.cuInit(0); }
CUresult cuzk_driver_version(int *v) { return api.cuDriverGetVersion(v); }
CUresult cuzk_error_name(CUresult r, const char **s) { return api.cuGetErrorName(r, s); }
CUresult cuzk_error_string(CUresult r, const char **s) { return api.cuGetErrorString(r, s); }

CUresult cuzk_device_count(int *n) { return api.cuDeviceGetCount(n); }
CUresult cuzk_device_get(CUdevice *d, int ordinal) { return api.cuDeviceGet(d, ordinal); }
CUresult cuzk_device_name(char *buf, int len, CUdevice d) { return api.cuDeviceGetName(buf, len, d); }
CUresult cuzk_device_attr(int *v, int attr, CUdevice d) { return api.cuDeviceGetAttribute(v, attr, d); }
CUresult cuzk_device_total_mem(size_t *b, CUdevice d) { return api.cuDeviceTotalMem_v2(b, d); }
CUresult cuzk_primary_retain(CUcontext *c, CUdevice d) { return api.cuDevicePrimaryCtxRetain(c, d); }
CUresult cuzk_primary_release(CUdevice d) { return api.cuDevicePrimaryCtxRelease_v2(d); }
CUresult cuzk_ctx_set_current(CUcontext c) { return api.cuCtxSetCurrent(c); }
CUresult cuzk_ctx_synchronize(void) { return api.cuCtxSynchronize(); }

CUresult cuzk_mem_info(size_t *f, size_t *t) { return api.cuMemGetInfo_v2(f, t); }
CUresult cuzk_mem_alloc(CUdeviceptr *p, size_t n) { return api.cuMemAlloc_v2(p, n); }
CUresult cuzk_mem_free(CUdeviceptr p) { return api.cuMemFree_v2(p); }
CUresult cuzk_host_alloc(void **p, size_t n, unsigned flags) { return api.cuMemHostAlloc(p, n, flags); }
CUresult cuzk_host_free(void *p) { return api.cuMemFreeHost(p); }
CUresult cuzk_host_register(void *p, size_t n, unsigned flags) { return api.cuMemHostRegister_v2(p, n, flags); }
CUresult cuzk_host_unregister(void *p) { return api.cuMemHostUnregister(p); }
CUresult cuzk_htod(CUdeviceptr d, const void *s, size_t n) { return api.cuMemcpyHtoD_v2(d, s, n); }
CUresult cuzk_dtoh(void *d, CUdeviceptr s, size_t n) { return api.cuMemcpyDtoH_v2(d, s, n); }
CUresult cuzk_dtod(CUdeviceptr d, CUdeviceptr s, size_t n) { return api.cuMemcpyDtoD_v2(d, s, n); }
CUresult cuzk_htod_async(CUdeviceptr d, const void *s, size_t n, CUstream st) {
  return api.cuMemcpyHtoDAsync_v2(d, s, n, st);
}
CUresult cuzk_dtoh_async(void *d, CUdeviceptr s, size_t n, CUstream st) {
  return api.cuMemcpyDtoHAsync_v2(d, s, n, st);
}
CUresult cuzk_dtod_async(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
  return api.cuMemcpyDtoDAsync_v2(d, s, n, st);
}
CUresult cuzk_memset8(CUdeviceptr d, unsigned char v, size_t n) { return api.cuMemsetD8_v2(d, v, n); }
CUresult cuzk_memset32(CUdeviceptr d, unsigned int v, size_t n) { return api.cuMemsetD32_v2(d, v, n); }

CUresult cuzk_module_load(CUmodule *m, const void *image) { return api.cuModuleLoadData(m, image); }
CUresult cuzk_module_unload(CUmodule m) { return api.cuModuleUnload(m); }
CUresult cuzk_module_function(CUfunction *f, CUmodule m, const char *name) {
  return api.cuModuleGetFunction(f, m, name);
}
CUresult cuzk_func_attr(int *v, int attr, CUfunction f) { return api.cuFuncGetAttribute(v, attr, f); }
CUresult cuzk_func_set_attr(CUfunction f, int attr, int v) { return api.cuFuncSetAttribute(f, attr, v); }
CUresult cuzk_active_blocks(int *n, CUfunction f, int block, size_t dyn_shared) {
  return api.cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, dyn_shared);
}

#define CUZK_MAX_ARGS 64

CUresult cuzk_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                     CUstream s, void *buf, const int *offsets, int nargs) {
  void *params[CUZK_MAX_ARGS];
  if (nargs < 0 || nargs > CUZK_MAX_ARGS) {
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  }
  for (int i = 0; i < nargs; i++) {
    params[i] = (char *)buf + offsets[i];
  }
  return api.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

CUresult cuzk_stream_create(CUstream *s, unsigned flags) { return api.cuStreamCreate(s, flags); }
CUresult cuzk_stream_synchronize(CUstream s) { return api.cuStreamSynchronize(s); }
CUresult cuzk_stream_destroy(CUstream s) { return api.cuStreamDestroy_v2(s); }
CUresult cuzk_event_create(CUevent *e, unsigned flags) { return api.cuEventCreate(e, flags); }
CUresult cuzk_event_record(CUevent e, CUstream s) { return api.cuEventRecord(e, s); }
CUresult cuzk_event_synchronize(CUevent e) { return api.cuEventSynchronize(e); }
CUresult cuzk_event_elapsed(float *ms, CUevent a, CUevent b) { return api.cuEventElapsedTime(ms, a, b); }
CUresult cuzk_event_destroy(CUevent e) { return api.cuEventDestroy_v2(e); }
