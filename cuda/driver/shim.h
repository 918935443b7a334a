// shim.h declares the few CUDA driver API types and entry points that package
// driver uses. They are written here from the driver API's documented ABI so
// that no CUDA header or toolkit is needed at build time; the functions are
// resolved at run time from libcuda.so.1 with dlsym.
#ifndef CUZK_DRIVER_SHIM_H
#define CUZK_DRIVER_SHIM_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

// cuzk_load opens the driver library (libcuda.so.1) and resolves every entry
// point. It returns 0 on success, 1 when the library cannot be opened, 2 when
// a symbol is missing; *what then names the library error or the symbol. The
// entry points are only replaced when all of them resolved.
int cuzk_load(const char *lib, const char **what);

CUresult cuzk_init(void);
CUresult cuzk_driver_version(int *v);
CUresult cuzk_error_name(CUresult r, const char **s);
CUresult cuzk_error_string(CUresult r, const char **s);

CUresult cuzk_device_count(int *n);
CUresult cuzk_device_get(CUdevice *d, int ordinal);
CUresult cuzk_device_name(char *buf, int len, CUdevice d);
CUresult cuzk_device_attr(int *v, int attr, CUdevice d);
CUresult cuzk_device_total_mem(size_t *bytes, CUdevice d);
CUresult cuzk_primary_retain(CUcontext *c, CUdevice d);
CUresult cuzk_primary_release(CUdevice d);
CUresult cuzk_ctx_set_current(CUcontext c);
CUresult cuzk_ctx_synchronize(void);

CUresult cuzk_mem_info(size_t *free_bytes, size_t *total_bytes);
CUresult cuzk_mem_alloc(CUdeviceptr *p, size_t n);
CUresult cuzk_mem_free(CUdeviceptr p);
CUresult cuzk_host_alloc(void **p, size_t n, unsigned flags);
CUresult cuzk_host_free(void *p);
CUresult cuzk_host_register(void *p, size_t n, unsigned flags);
CUresult cuzk_host_unregister(void *p);
CUresult cuzk_htod(CUdeviceptr dst, const void *src, size_t n);
CUresult cuzk_dtoh(void *dst, CUdeviceptr src, size_t n);
CUresult cuzk_dtod(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuzk_htod_async(CUdeviceptr dst, const void *src, size_t n, CUstream s);
CUresult cuzk_dtoh_async(void *dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuzk_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
CUresult cuzk_memset8(CUdeviceptr dst, unsigned char v, size_t n);
CUresult cuzk_memset32(CUdeviceptr dst, unsigned int v, size_t n);

CUresult cuzk_module_load(CUmodule *m, const void *image);
CUresult cuzk_module_unload(CUmodule m);
CUresult cuzk_module_function(CUfunction *f, CUmodule m, const char *name);
CUresult cuzk_func_attr(int *v, int attr, CUfunction f);
CUresult cuzk_func_set_attr(CUfunction f, int attr, int v);
CUresult cuzk_active_blocks(int *n, CUfunction f, int block, size_t dyn_shared);
// cuzk_launch builds the kernel parameter array from nargs values packed in
// buf at the given byte offsets, then launches f.
CUresult cuzk_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                     unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                     CUstream s, void *buf, const int *offsets, int nargs);

CUresult cuzk_stream_create(CUstream *s, unsigned flags);
CUresult cuzk_stream_synchronize(CUstream s);
CUresult cuzk_stream_destroy(CUstream s);
CUresult cuzk_event_create(CUevent *e, unsigned flags);
CUresult cuzk_event_record(CUevent e, CUstream s);
CUresult cuzk_event_synchronize(CUevent e);
CUresult cuzk_event_elapsed(float *ms, CUevent start, CUevent end);
CUresult cuzk_event_destroy(CUevent e);

#endif
