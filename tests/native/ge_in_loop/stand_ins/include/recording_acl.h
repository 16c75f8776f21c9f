// STAND-IN for ACL's runtime (closed source): every ACL call the adapter makes is RECORDED
// here, nothing runs on a device. The harness (../driver/ge_in_loop_tests.cc) reads the
// record; what it leaves unproven: that a real ACL accepts these calls, loads the npubin,
// and that the kernel computes anything (docs/ge-library.md, "GE in the loop").
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_RECORDING_ACL_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_RECORDING_ACL_H_
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace recording_acl {

struct Load {
  std::vector<uint8_t> bytes;  // the npubin handed to aclrtBinaryLoadFromData
  std::vector<uint32_t> option_types, option_magics;
  void *binary;  // the handle given back
};
struct GetFunction {
  void *binary;
  std::string entry;
  void *function;  // the handle given back
};
struct Memset {
  uint64_t address, max_count, count;
  int32_t value;
  void *stream;
  size_t launches_before;  // how many launches were recorded before it
};
struct Launch {
  void *function;
  uint32_t block_dim;
  void *stream;
  bool cfg_null, placeholders_null;
  size_t placeholder_num;
  std::vector<uint8_t> args;  // the host argument bytes, copied at the call
};

// What the recording ACL answers, and the errors it is told to give (0: success).
struct Settings {
  std::string soc = "Ascend910B1";  // aclrtGetSocName (empty: returns null)
  int32_t device = 0;
  uint64_t sync_address = 0x00000000FF001000ull;
  uint64_t context = 0x00000000C0000001ull;  // aclrtGetCurrentContext
  // aclrtGetDeviceInfo: ACL_DEV_ATTR_VECTOR_CORE_NUM and ACL_DEV_ATTR_AICORE_CORE_NUM. A count
  // of 0 with success is what ACL answers where the driver cannot report it (hicann/runtime
  // npu_driver.cc); an error code fails that query (device_info_error: every query), and a
  // failed query writes 4096 into the value, which a caller must not use.
  int64_t vector_cores = 48, ai_cores = 24;
  int vector_cores_error = 0, ai_cores_error = 0;
  int context_error = 0, device_info_error = 0;
  int get_device_error = 0, sync_error = 0, memset_error = 0, load_error = 0, get_function_error = 0,
      launch_error = 0;
};

struct Record {
  std::vector<Load> loads;
  std::vector<GetFunction> functions;
  std::vector<Memset> memsets;
  std::vector<Launch> launches;
  std::vector<void *> unloads;
  int soc_calls = 0, device_calls = 0, sync_calls = 0, context_calls = 0;
  std::vector<uint32_t> device_info_devices;  // the device of each aclrtGetDeviceInfo call
  std::vector<int> device_info_attrs;
};

// Resets the record and installs settings; Take() returns the record so far.
void Reset(const Settings &settings = Settings());
Record Take();

// The programs across the whole process, never reset: each aclrtBinaryLoadFromData makes one
// (its handle unique in the process), each aclrtBinaryUnLoad of a live one frees it.
// LivePrograms: loaded and not yet unloaded; UnknownUnloads: unloads of a handle that was never
// loaded or was freed already (a double free on a real runtime). The stand-in's state is
// never destroyed, so it outlives every library copy that unloads programs when it leaves.
size_t LivePrograms();
size_t UnknownUnloads();

}  // namespace recording_acl
#endif
