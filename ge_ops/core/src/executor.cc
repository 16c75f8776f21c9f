#include "tf_ge_custom_core/executor.h"

#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/launch_plan.h"

namespace tf_ge_custom {
namespace core {
namespace {

// Every step in order; a refusal goes up unchanged and LaunchKernels adds the context once.
Status Run(const KernelCall &call, const std::string &soc, KernelRegistry &registry, KernelCache &cache,
           DeviceRuntime &runtime) {
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const int32_t device, runtime.DeviceId());
  const KernelChoice &choice = call.choice;
  if (choice.variant == nullptr || choice.operands.size() != call.inputs.size()) {
    return Status::Error(Code::kInternal, "the call has no kernel variant for its inputs (PrepareCall first)");
  }
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const KernelBinary kernel,
                                registry.Find(soc, call.op->type_name, choice.variant->name, call.dtype->name));
  const KernelEntry &entry = kernel.entry;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const LoadedKernel loaded, cache.GetOrLoad(device, kernel, runtime));
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(const LaunchPlan plan, LaunchPlan::Make(choice, call.dtype->itemsize, entry));

  HostArgValues values;
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

  std::vector<uint8_t> args;
  for (int64_t i = 0; i < plan.launch_count(); ++i) {
    const Launch l = plan.launch(i);
    values.inputs.clear();
    values.outputs.clear();
    // Kernel operand k reads op input choice.operands[k], advanced to the launch's box.
    for (size_t k = 0; k < choice.operands.size(); ++k) {
      values.inputs.push_back(call.inputs[static_cast<size_t>(choice.operands[k])] + l.input_offsets[k]);
    }
    for (uint64_t a : call.outputs) values.outputs.push_back(a + l.output_offset);
    values.num_elements = l.num_elements;
    values.dims = l.dims;
    values.input_strides = l.input_strides;
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

Result<KernelCall> PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<int64_t> &x,
                               const std::vector<int64_t> &y) {
  KernelCall call;
  call.op = &op;
  call.dtype = &dtype;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(call.choice, ChooseKernel(op, x, y));
  call.num_elements = call.choice.num_elements;
  return call;
}

Status LaunchKernels(const KernelCall &call, KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime) {
  if (call.num_elements == 0) return Status::Ok();  // nothing to add; the output is already allocated
  const std::string context =
      (call.choice.variant != nullptr ? "kernel variant " + call.choice.variant->name + ", " : std::string()) +
      "dtype " + call.dtype->name;
  auto soc = runtime.SocName();
  if (!soc.ok()) return soc.status().WithContext("SoC unknown, " + context);
  return Run(call, soc.value(), registry, cache, runtime).WithContext("SoC " + soc.value() + ", " + context);
}

}  // namespace core
}  // namespace tf_ge_custom
