#include "tf_ge_custom_core/executor.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/launch_plan.h"
#include "tf_ge_custom_core/thread_scratch.h"

namespace tf_ge_custom {
namespace core {
namespace {

// What a call needs on the heap, kept per thread from call to call: once a thread's first
// Execute has sized them for a kernel variant, later calls allocate nothing
// (benchmarks/ge_bench/bench_execute.cc counts it). GE may run Execute on several threads at once,
// hence one set per thread (a ThreadScratch: freed with the library, thread_scratch.h).
struct Scratch {
  KernelBinary kernel;
  LaunchPlan plan;
  Launch launch;
  HostArgValues values;
  std::vector<uint8_t> args;
};

ThreadScratch<Scratch> scratches;

// Every field back to its default, the lists keeping their capacity.
void Reset(HostArgValues *values) {
  values->ffts = 0;
  values->sync_block_lock = 0;
  values->workspace = 0;
  values->inputs.clear();
  values->outputs.clear();
  values->num_elements = 0;
  values->dims.clear();
  for (auto &s : values->input_strides) s.clear();
  values->grid_x = values->grid_y = values->grid_z = 1;
}

// The running device's vector cores, the cap on programs per launch whatever SoC the kernel
// set was built for (a board may take another SoC's kernel set of its architecture). Where
// the runtime cannot say (ACL answers success with 0 when the driver has no count), twice its
// AI cores, as triton-ascend sizes its grids (one AI core, two vector cores on dav-2201);
// 0 when neither is known, and the manifest's own cap stays.
int64_t DeviceVectorCores(DeviceRuntime &runtime, int32_t device) {
  const int64_t vector_cores = runtime.VectorCoreCount(device);
  if (vector_cores > 0) return vector_cores;
  const int64_t ai_cores = runtime.AiCoreCount(device);
  if (ai_cores > 0 && ai_cores <= (int64_t{1} << 32)) return 2 * ai_cores;
  return 0;
}

// Every step in order; a refusal goes up unchanged and LaunchKernels adds the context once.
Status Run(const KernelCall &call, int32_t device, uint64_t context, const std::string &soc, DeviceFacts &facts,
           KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime) {
  Scratch &scratch = scratches.Get();
  const KernelChoice &choice = call.choice;
  if (choice.variant == nullptr || choice.operands.size() != call.inputs.size()) {
    return Status::Error(Code::kInternal, "the call has no kernel variant for its inputs (PrepareCall first)");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(
      registry.Find(soc, call.op->type_name, choice.variant->name, call.dtype->name, &scratch.kernel));
  const KernelBinary &kernel = scratch.kernel;
  const KernelEntry &entry = kernel.entry;
  TF_GE_CUSTOM_ASSIGN_OR_RETURN(LoadedKernel loaded, cache.GetOrLoad(device, context, kernel, runtime));
  // Programs per launch: the device's own cores when it can say, else the manifest's cap (a
  // grid of more programs than the device has cores runs in turns, only slower). Asked once
  // per (device, context): the answer cannot change while the context lives.
  int64_t cores = 0;
  {
    std::lock_guard<std::mutex> lock(cache.facts_mutex());
    if (!facts.has_cores) {
      facts.vector_cores = DeviceVectorCores(runtime, device);
      facts.has_cores = true;
    }
    cores = facts.vector_cores;
  }
  if (cores > 0) scratch.kernel.entry.max_programs = ProgramCap(entry, cores);
  LaunchPlan &plan = scratch.plan;
  TF_GE_CUSTOM_RETURN_IF_ERROR(LaunchPlan::Make(choice, call.dtype->itemsize, entry, &plan));

  HostArgValues &values = scratch.values;
  Reset(&values);
  values.attrs = call.attrs;  // copy-assigned: capacity reused
  if (entry.args.has_ffts) {
    std::lock_guard<std::mutex> lock(cache.facts_mutex());
    if (!facts.has_sync) {  // a failure is not kept: the next call asks again
      TF_GE_CUSTOM_ASSIGN_OR_RETURN(facts.sync_address, runtime.HardwareSyncAddress());
      facts.has_sync = true;
    }
    values.ffts = facts.sync_address;
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
  Launch &l = scratch.launch;
  for (int64_t i = 0; i < plan.launch_count(); ++i) {
    plan.launch(i, &l);
    SetLaunchValues(choice, call.inputs, call.outputs, l, &values);  // shared with DeclareLaunch
    TF_GE_CUSTOM_RETURN_IF_ERROR(PackHostArgs(entry.args, values, &args));
    if (lock_bytes > 0) TF_GE_CUSTOM_RETURN_IF_ERROR(runtime.FillBytes(values.sync_block_lock, lock_bytes, lock_fill));
    Status launched = runtime.Launch(loaded, l.block_dim(), &args);
    if (!launched.ok() && runtime.IsInvalidHandle(launched)) {
      // A handle kept across a device reset: load once more under the current context, retry once.
      cache.Forget(device, context, kernel);
      TF_GE_CUSTOM_ASSIGN_OR_RETURN(const uint64_t now, runtime.ContextId());
      TF_GE_CUSTOM_ASSIGN_OR_RETURN(loaded, cache.GetOrLoad(device, now, kernel, runtime));
      launched = runtime.Launch(loaded, l.block_dim(), &args);
      if (!launched.ok()) launched = launched.WithContext("after reloading the kernel once");
    }
    TF_GE_CUSTOM_RETURN_IF_ERROR(launched);
  }
  return Status::Ok();
}

}  // namespace

int64_t ProgramCap(const KernelEntry &entry, int64_t cores) {
  int64_t cap = std::min(cores, entry.max_grid);
  int64_t block = 1;
  for (int64_t b : entry.block) block *= b > 0 ? b : 1;
  const int64_t room = (int64_t{1} << 31) - 1 - entry.max_elements_per_launch;
  if (block > 0 && room > 0) cap = std::min(cap, std::max<int64_t>(1, room / block));
  return std::max<int64_t>(1, cap);
}

namespace {
// The refusal of a node's attribute value outside the record's range (built only here: a value
// inside allocates nothing).
Status OutOfRange(const OpDefinition &op, const AttrDefinition &a, const std::string &value) {
  return Status::Error(Code::kOutOfRange, op.type_name + ": attribute " + a.name + " is " + value +
                                              " on this node; it must be " + a.range +
                                              " (op_def.py's range for it)");
}
}  // namespace

Status SetAttrWords(const OpDefinition &op, const AttrValues &values, std::vector<uint64_t> *words) {
  words->resize(op.attrs.size());
  for (size_t i = 0; i < op.attrs.size(); ++i) {
    const AttrDefinition &a = op.attrs[i];
    if (a.type == "float") {
      const float *given = values.Float(i);
      const float value = given != nullptr ? *given : static_cast<float>(a.default_value);
      // written so that a NaN is outside any range, as the TF op's check is
      if ((a.has_minimum || a.has_maximum) &&
          !((!a.has_minimum || value >= static_cast<float>(a.minimum)) &&
            (!a.has_maximum || value <= static_cast<float>(a.maximum)))) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.9g", static_cast<double>(value));
        return OutOfRange(op, a, text);
      }
      uint32_t bits = 0;
      std::memcpy(&bits, &value, sizeof(bits));
      (*words)[i] = bits;
    } else if (a.type == "int") {
      const int64_t *given = values.Int(i);
      const int64_t value = given != nullptr ? *given : static_cast<int64_t>(a.default_value);
      if ((a.has_minimum && value < static_cast<int64_t>(a.minimum)) ||
          (a.has_maximum && value > static_cast<int64_t>(a.maximum))) {
        return OutOfRange(op, a, std::to_string(value));
      }
      (*words)[i] = static_cast<uint64_t>(value);
    } else {
      return Status::Error(Code::kInternal, op.type_name + ": its attribute " + a.name + " has type " + a.type +
                                                ", which this library cannot pass to a kernel (float, int)");
    }
  }
  return Status::Ok();
}

Status PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<int64_t> &x,
                   const std::vector<int64_t> &y, KernelCall *call) {
  call->op = &op;
  call->dtype = &dtype;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ChooseKernel(op, x, y, &call->choice));
  call->num_elements = call->choice.num_elements;
  return Status::Ok();
}

Status PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<std::vector<int64_t>> &shapes,
                   KernelCall *call) {
  call->op = &op;
  call->dtype = &dtype;
  TF_GE_CUSTOM_RETURN_IF_ERROR(ChooseKernel(op, shapes, &call->choice));
  call->num_elements = call->choice.num_elements;
  return Status::Ok();
}

Result<KernelCall> PrepareCall(const OpDefinition &op, const DTypeDefinition &dtype, const std::vector<int64_t> &x,
                               const std::vector<int64_t> &y) {
  KernelCall call;
  TF_GE_CUSTOM_RETURN_IF_ERROR(PrepareCall(op, dtype, x, y, &call));
  return call;
}

Status LaunchKernels(const KernelCall &call, KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime) {
  if (call.num_elements == 0) return Status::Ok();  // nothing to add; the output is already allocated
  // The context is text: made only for a refusal, so a passing call allocates nothing here.
  const auto context = [&call] {
    return (call.choice.variant != nullptr ? "kernel variant " + call.choice.variant->name + ", " : std::string()) +
           "dtype " + call.dtype->name;
  };
  // Which device and context this thread runs on (they may change between calls); what they
  // report is asked once per pair and kept (DeviceFacts).
  auto device = runtime.DeviceId();
  auto acl_context = device.ok() ? runtime.ContextId() : Result<uint64_t>(device.status());
  if (!device.ok() || !acl_context.ok()) {
    const Status failed = !device.ok() ? device.status() : acl_context.status();
    auto soc = runtime.SocName();  // a refusal only: said with the SoC, as every refusal is
    if (!soc.ok()) return soc.status().WithContext("SoC unknown, " + context());
    return failed.WithContext("SoC " + soc.value() + ", " + context());
  }
  DeviceFacts &facts = *cache.Facts(device.value(), acl_context.value());
  {
    std::lock_guard<std::mutex> lock(cache.facts_mutex());
    if (!facts.has_soc) {  // a failure is not kept: the next call asks again
      auto soc = runtime.SocName();
      if (!soc.ok()) return soc.status().WithContext("SoC unknown, " + context());
      facts.soc = soc.value();
      facts.has_soc = true;
    }
  }
  const std::string &soc = facts.soc;  // set once, before has_soc, under the lock taken above
  const Status status = Run(call, device.value(), acl_context.value(), soc, facts, registry, cache, runtime);
  if (status.ok()) return status;
  return status.WithContext("SoC " + soc + ", " + context());
}

}  // namespace core
}  // namespace tf_ge_custom
