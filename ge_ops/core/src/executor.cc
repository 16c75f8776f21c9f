#include "tf_ge_custom_core/executor.h"

#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/launch_plan.h"

namespace tf_ge_custom {
namespace core {
namespace {

// What a call needs on the heap, kept per thread from call to call: once a thread's first
// Execute has sized them, later calls allocate nothing (ge_ops/bench/bench_execute.cc counts
// it). GE may run Execute on several threads at once, hence one set per thread.
struct Scratch {
  KernelBinary kernel;
  HostArgValues values;
  std::vector<uint8_t> args;
};

Scratch &ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Every field back to its default, the lists keeping their capacity.
void Reset(HostArgValues *values) {
  std::vector<uint64_t> inputs = std::move(values->inputs), outputs = std::move(values->outputs);
  *values = HostArgValues();
  inputs.clear();
  outputs.clear();
  values->inputs = std::move(inputs);
  values->outputs = std::move(outputs);
}

// Every step in order; a refusal goes up unchanged and LaunchKernels adds the context once.
Status Run(const KernelCall &call, const std::string &soc, KernelRegistry &registry, KernelCache &cache,
           DeviceRuntime &runtime) {
  Scratch &scratch = ThreadScratch();
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const int32_t device, runtime.DeviceId());
  TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Find(soc, call.op->type_name, call.dtype->name, &scratch.kernel));
  const KernelBinary &kernel = scratch.kernel;
  const KernelEntry &entry = kernel.entry;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const LoadedKernel loaded, cache.GetOrLoad(device, kernel, runtime));
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const LaunchPlan plan, LaunchPlan::Make(call.num_elements, call.dtype->itemsize, entry));

  HostArgValues &values = scratch.values;
  Reset(&values);
  if (entry.args.has_ffts) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(values.ffts, runtime.HardwareSyncAddress());
  }
  // Launches run in order on one stream, so they can share one workspace sized for the
  // largest grid, and one lock buffer refilled before each launch.
  if (entry.workspace_size > 0) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const uint64_t bytes, WorkspaceBytes(entry, plan.max_block_dim()));
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(values.workspace, runtime.AllocWorkspace(bytes));
  }
  uint8_t lock_fill = 0;
  uint64_t lock_bytes = 0;
  if (entry.lock_num > 0) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(lock_fill, LockFillByte(entry.lock_init_val));
    if (entry.lock_num > (int64_t{1} << 40)) return Status::Error(Code::kOutOfRange, "lock_num too large");
    lock_bytes = static_cast<uint64_t>(entry.lock_num) * 8;
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(values.sync_block_lock, runtime.AllocWorkspace(lock_bytes));
  }

  std::vector<uint8_t> &args = scratch.args;
  for (int64_t i = 0; i < plan.launch_count(); ++i) {
    const Launch l = plan.launch(i);
    values.inputs.clear();
    values.outputs.clear();
    for (uint64_t a : call.inputs) values.inputs.push_back(a + l.byte_offset);
    for (uint64_t a : call.outputs) values.outputs.push_back(a + l.byte_offset);
    values.num_elements = l.num_elements;
    values.grid_x = l.grid_x;
    values.grid_y = l.grid_y;
    values.grid_z = l.grid_z;
    TF_GE_CUSTOM_RETURN_IF_ERROR(PackHostArgs(entry.args, values, &args));
    if (lock_bytes > 0) TF_GE_CUSTOM_RETURN_IF_ERROR(runtime.FillBytes(values.sync_block_lock, lock_bytes, lock_fill));
    TF_GE_CUSTOM_RETURN_IF_ERROR(runtime.Launch(loaded, l.block_dim(), &args));
  }
  return Status::Ok();
}

}  // namespace

Status LaunchKernels(const KernelCall &call, KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime) {
  if (call.num_elements == 0) return Status::Ok();  // nothing to add; the output is already allocated
  auto soc = runtime.SocName();
  if (!soc.ok()) return soc.status().WithContext("SoC unknown, dtype " + call.dtype->name);
  const Status status = Run(call, soc.value(), registry, cache, runtime);
  if (status.ok()) return status;  // the context is text: made only for a refusal
  return status.WithContext("SoC " + soc.value() + ", dtype " + call.dtype->name);
}

}  // namespace core
}  // namespace tf_ge_custom
