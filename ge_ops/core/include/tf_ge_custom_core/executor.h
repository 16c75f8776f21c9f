// Everything Execute decides, in order, against a small runtime interface: the CANN adapter
// implements DeviceRuntime with ACL and the execution context; tests implement it with a
// recorder. After the adapter has checked the inputs and allocated the output, it calls
// LaunchKernels and turns a refusal into one log line and GRAPH_FAILED.
#ifndef TF_GE_CUSTOM_CORE_EXECUTOR_H_
#define TF_GE_CUSTOM_CORE_EXECUTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tf_ge_custom_core/broadcast.h"
#include "tf_ge_custom_core/kernel_cache.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

class DeviceRuntime : public KernelLoader {
 public:
  // Each failing call returns Status::Error("<api name>", "<api name> returned <code>").
  virtual Result<std::string> SocName() = 0;
  virtual Result<int32_t> DeviceId() = 0;
  virtual Result<uint64_t> HardwareSyncAddress() = 0;             // the ffts slot's value
  virtual Result<uint64_t> AllocWorkspace(uint64_t bytes) = 0;     // device memory for this call
  virtual Status FillBytes(uint64_t address, uint64_t bytes, uint8_t value) = 0;  // on the stream
  virtual Status Launch(const LoadedKernel &kernel, uint32_t block_dim, std::vector<uint8_t> *host_args) = 0;

  // The running device's vector cores and AI cores, or 0 when the runtime cannot say (a
  // failed query, or ACL's success with 0 when the driver has no count). Never a refusal:
  // the program cap falls back from one to the next (ProgramsPerLaunch, executor.cc), and
  // a plain count makes no message on a device that never reports one.
  virtual int64_t VectorCoreCount(int32_t device) { return 0; }
  virtual int64_t AiCoreCount(int32_t device) { return 0; }
  // What the loaded handles belong to (the current ACL context): the kernel cache's key, so a
  // reset device or a re-initialised runtime loads again. 0 when unknown.
  virtual Result<uint64_t> ContextId() { return uint64_t{0}; }
  // Whether a failed Launch says the function handle is no longer valid (the device was
  // reset under a kept handle): the launch reloads the kernel once and tries again.
  virtual bool IsInvalidHandle(const Status &launch_failure) { return false; }
};

struct KernelCall {
  const OpDefinition *op = nullptr;
  const DTypeDefinition *dtype = nullptr;
  int64_t num_elements = 0;  // of the output
  KernelChoice choice;       // the kernel variant and frame for the inputs' shapes (ChooseKernel)
  std::vector<uint64_t> inputs;   // device addresses of the whole tensors, in op input order
  std::vector<uint64_t> outputs;
  // The node's attribute values, in the op's attrs order, as their slot words (a float as
  // its binary32 bits): what the kernel's attr slots get (HostArgValues::attrs).
  std::vector<uint64_t> attrs;
};

// A node's attribute values as GE's context holds them: the adapter reads gert::RuntimeAttrs,
// which holds them by IR index (their order in REG_OP's ATTRs, generated in op.attrs order);
// tests use a table.
class AttrValues {
 public:
  virtual ~AttrValues() = default;
  // The node's value of the op's attribute `index`, or null when the node carries none.
  virtual const float *Float(size_t index) const = 0;
  virtual const int64_t *Int(size_t index) const = 0;
};

// *words (KernelCall::attrs): each of op's attributes as its slot word, in op.attrs order: a
// float as its binary32 bits (sign, -0.0 and a NaN's payload kept), an int as its 64 bits
// (two's complement); the attribute's default where the node carries none. Reuses *words'
// capacity (no allocation once sized). kInternal for an attribute type it does not know.
Status SetAttrWords(const OpDefinition &op, const AttrValues &values, std::vector<uint64_t> *words);

// The call for op's inputs of the given shapes: checks and broadcasts them (ChooseKernel);
// the addresses are left to the caller.
Result<KernelCall> PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<int64_t> &x,
                               const std::vector<int64_t> &y);
// The same into *call, reusing its lists' capacity and leaving its addresses alone: a caller
// that keeps one KernelCall per thread allocates nothing here once it has seen the shapes.
// On a refusal call->choice is unspecified.
Status PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<int64_t> &x,
                   const std::vector<int64_t> &y, KernelCall *call);
// The same for op's own inputs, one shape each (ChooseKernel's list form): any input count,
// broadcasting only where the op declares it. The attribute words are left to the caller.
Status PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<std::vector<int64_t>> &shapes,
                   KernelCall *call);

// The programs per launch of entry on a target of `cores` vector cores: the cores, bounded by
// the grid limit and, for kernels with 32-bit index arguments, by what keeps
// max_elements_per_launch + block * programs below 2^31.
int64_t ProgramCap(const KernelEntry &entry, int64_t cores);

// Picks the kernel of call.choice's variant for the current SoC and call.dtype, loads it once
// per device, plans the launches, packs each one's arguments and launches them. 0 elements:
// nothing at all. Refusals name the failing step or API, its error, the variant, the SoC and
// the dtype.
Status LaunchKernels(const KernelCall &call, KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_EXECUTOR_H_
