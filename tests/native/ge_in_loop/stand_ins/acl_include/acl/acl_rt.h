// STAND-IN for ACL's acl/acl_rt.h (the runtime component is in neither public repository; the
// torch-npu wheel carries the real header, used instead when TF_GE_CUSTOM_ACL_INCLUDE names
// its folder). Declares the calls ge_ops/cann/acl_runtime.cc and GE's util.h make, with the
// parameter lists as the adapter calls them. The constants' VALUES are invented: a test
// compares a recorded magic against these names, never against ACL's real numbers.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_ACL_ACL_RT_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_ACL_ACL_RT_H_
#include <cstddef>
#include <cstdint>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
#define ACL_SUCCESS 0
typedef void *aclrtStream;
typedef void *aclrtFuncHandle;
typedef void *aclrtBinHandle;
typedef void *aclrtContext;
/* The launch errors the adapter treats as a stale kernel handle (acl_runtime.cc IsInvalidHandle). */
#define ACL_ERROR_RT_INVALID_HANDLE 107017        /* invented value */
#define ACL_ERROR_INVALID_RESOURCE_HANDLE 100013  /* invented value */
#define ACL_ERROR_RT_CONTEXT_NULL 107002          /* invented value */
typedef enum { ACL_DEV_ATTR_AICORE_CORE_NUM = 1, ACL_DEV_ATTR_VECTOR_CORE_NUM = 2 } aclrtDevAttr; /* invented values */
typedef struct aclrtLaunchKernelCfg aclrtLaunchKernelCfg;
typedef struct aclrtPlaceHolderInfo aclrtPlaceHolderInfo;

#define ACL_RT_BINARY_MAGIC_ELF_AICORE 0x5354414eU        /* invented value */
#define ACL_RT_BINARY_MAGIC_ELF_VECTOR_CORE 0x5354415aU   /* invented value */
#define ACL_RT_BINARY_MAGIC_ELF_CUBE_CORE 0x5354415bU     /* invented value */

typedef enum { ACL_RT_BINARY_LOAD_OPT_MAGIC = 2 } aclrtBinaryLoadOptionType; /* invented value */
typedef union {
  uint32_t magic;
  uint64_t reserved;
} aclrtBinaryLoadOptionValue;
typedef struct {
  aclrtBinaryLoadOptionType type;
  aclrtBinaryLoadOptionValue value;
} aclrtBinaryLoadOption;
typedef struct {
  aclrtBinaryLoadOption *options;
  size_t numOpt;
} aclrtBinaryLoadOptions;

const char *aclrtGetSocName(void);
aclError aclrtGetDevice(int32_t *device_id);
aclError aclrtGetHardwareSyncAddr(void **addr);
aclError aclrtGetCurrentContext(aclrtContext *context);
aclError aclrtGetDeviceInfo(uint32_t device_id, aclrtDevAttr attr, int64_t *value);
aclError aclrtMemsetAsync(void *dev_ptr, size_t max_count, int32_t value, size_t count, aclrtStream stream);
aclError aclrtBinaryLoadFromData(const void *data, size_t length, const aclrtBinaryLoadOptions *options,
                                 aclrtBinHandle *bin_handle);
aclError aclrtBinaryGetFunction(const aclrtBinHandle bin_handle, const char *kernel_name,
                                aclrtFuncHandle *func_handle);
aclError aclrtBinaryUnLoad(aclrtBinHandle bin_handle);
aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle func_handle, uint32_t block_dim, aclrtStream stream,
                                       aclrtLaunchKernelCfg *cfg, void *host_args, size_t args_size,
                                       aclrtPlaceHolderInfo *place_holder_array, size_t place_holder_num);
// Named by GE's util.h macros only (never called by the sources built here).
aclError aclrtFree(void *dev_ptr);
aclError aclrtFreeHost(void *host_ptr);
aclError aclrtDestroyStream(aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif
