#include "tf_ge_custom_core/executor.h"

#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/launch_plan.h"

namespace tf_ge_custom {
namespace core {
namespace {

Status WithContext(const Status &st, const std::string &soc, const std::string &dtype) {
  return Status::Error(st.kind(), st.message() + " (SoC " + (soc.empty() ? "unknown" : soc) + ", dtype " + dtype + ")");
}

}  // namespace

Status LaunchKernels(const KernelCall &call, KernelRegistry &registry, KernelCache &cache, DeviceRuntime &runtime) {
  const std::string dtype = call.dtype->name;
  if (call.num_elements == 0) return Status::Ok();  // nothing to add; the output is already allocated
  auto soc = runtime.SocName();
  if (!soc.ok()) return WithContext(soc.status(), "", dtype);
  const std::string &soc_name = soc.value();
  auto device = runtime.DeviceId();
  if (!device.ok()) return WithContext(device.status(), soc_name, dtype);

  auto kernel = registry.Find(soc_name, call.op->type_name, dtype);
  if (!kernel.ok()) return WithContext(kernel.status(), soc_name, dtype);
  const KernelEntry &entry = kernel.value().entry;
  auto loaded = cache.GetOrLoad(device.value(), kernel.value(), runtime);
  if (!loaded.ok()) return WithContext(loaded.status(), soc_name, dtype);

  auto plan = LaunchPlan::Make(call.num_elements, call.dtype->itemsize, entry);
  if (!plan.ok()) return WithContext(plan.status(), soc_name, dtype);

  HostArgValues values;
  if (entry.args.has_ffts) {
    auto ffts = runtime.HardwareSyncAddress();
    if (!ffts.ok()) return WithContext(ffts.status(), soc_name, dtype);
    values.ffts = ffts.value();
  }
  // Launches run in order on one stream, so they can share one workspace sized for the
  // largest grid, and one lock buffer refilled before each launch.
  if (entry.workspace_size > 0) {
    auto bytes = WorkspaceBytes(entry, plan.value().max_block_dim());
    if (!bytes.ok()) return WithContext(bytes.status(), soc_name, dtype);
    auto ws = runtime.AllocWorkspace(bytes.value());
    if (!ws.ok()) return WithContext(ws.status(), soc_name, dtype);
    values.workspace = ws.value();
  }
  uint8_t lock_fill = 0;
  uint64_t lock_bytes = 0;
  if (entry.lock_num > 0) {
    auto fill = LockFillByte(entry.lock_init_val);
    if (!fill.ok()) return WithContext(fill.status(), soc_name, dtype);
    lock_fill = fill.value();
    if (entry.lock_num > (int64_t{1} << 40)) return WithContext(Status::Error("plan", "lock_num too large"), soc_name, dtype);
    lock_bytes = static_cast<uint64_t>(entry.lock_num) * 8;
    auto lock = runtime.AllocWorkspace(lock_bytes);
    if (!lock.ok()) return WithContext(lock.status(), soc_name, dtype);
    values.sync_block_lock = lock.value();
  }

  std::vector<uint8_t> args;
  for (int64_t i = 0; i < plan.value().launch_count(); ++i) {
    const Launch l = plan.value().launch(i);
    values.inputs.clear();
    values.outputs.clear();
    for (uint64_t a : call.inputs) values.inputs.push_back(a + l.byte_offset);
    for (uint64_t a : call.outputs) values.outputs.push_back(a + l.byte_offset);
    values.num_elements = l.num_elements;
    values.grid_x = l.grid_x;
    values.grid_y = l.grid_y;
    values.grid_z = l.grid_z;
    Status st = PackHostArgs(entry.args, values, &args);
    if (!st.ok()) return WithContext(st, soc_name, dtype);
    if (lock_bytes > 0) {
      st = runtime.FillBytes(values.sync_block_lock, lock_bytes, lock_fill);
      if (!st.ok()) return WithContext(st, soc_name, dtype);
    }
    st = runtime.Launch(loaded.value(), l.block_dim(), &args);
    if (!st.ok()) return WithContext(st, soc_name, dtype);
  }
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
