// An Execute context laid out as HEAD's OM2 generated code lays it out, not as metadef's
// builders do: hicann/ge base/common/om2/codegen/emitter/stable_parts/stable_part_provider.cc
// (BuildGeTensor, BuildKernelContextHolder, AllocatorFaker, KernelCustTaskDistribute; around
// lines 990-1140 at HEAD). What that code does, restated here in our own code:
//
// - the node-info block is a heap buffer of exactly sizeof(gert::ComputeNodeInfo) (88 bytes),
//   set up with the five-argument Init (IR inputs = inputs, no IR outputs, no attribute area):
//   GetAttrs() points past the buffer, so under ASan a read there is a heap-buffer-overflow;
// - the kernel context's values are chains: the input tensors, the allocator, the stream; then
//   the output tensors and a workspace list;
// - every tensor (inputs and outputs) comes with its device address, shape and dtype from the
//   model; the allocator returns nothing for every request.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_OM2_CONTEXT_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_OM2_CONTEXT_H_

#include <memory>
#include <string>
#include <vector>

#include "exe_graph/runtime/compute_node_info.h"
#include "exe_graph/runtime/eager_op_execution_context.h"
#include "exe_graph/runtime/gert_mem_allocator.h"
#include "exe_graph/runtime/kernel_context.h"
#include "exe_graph/runtime/kernel_run_context.h"
#include "harness.h"

namespace om2 {

// OM2's allocator: nothing, for every request.
class NothingAllocator : public gert::GertAllocator {
 public:
  gert::GertMemBlock *Malloc(size_t) override { return nullptr; }
  void Free(gert::GertMemBlock *) override {}
  gert::GertTensorData MallocTensorData(size_t) override { return gert::GertTensorData(); }
  gert::TensorData MallocTensorDataFromL1(size_t) override { return gert::TensorData(); }
  ge::graphStatus ShareFromTensorData(const gert::TensorData &, gert::GertTensorData &) override { return 0; }
  ge::graphStatus SetL1Allocator(ge::Allocator *) override { return ge::GRAPH_SUCCESS; }
  ge::graphStatus FreeAt(int64_t, gert::GertMemBlock *) override { return ge::GRAPH_SUCCESS; }
  int64_t GetStreamNum() override { return 0; }
};

// A model tensor as OM2 hands it over: its dims (storage and origin alike), ND, on the
// device, its dtype and its address.
inline std::unique_ptr<gert::Tensor> ModelTensor(const std::vector<int64_t> &dims, ge::DataType dtype, uint64_t at) {
  gert::StorageShape shape;
  for (int64_t d : dims) {
    (void)shape.MutableStorageShape().AppendDim(d);
    (void)shape.MutableOriginShape().AppendDim(d);
  }
  gert::StorageFormat format(ge::FORMAT_ND, ge::FORMAT_ND, {});
  return std::unique_ptr<gert::Tensor>(
      new gert::Tensor(shape, format, gert::kOnDeviceHbm, dtype, reinterpret_cast<gert::TensorAddress>(at)));
}

// One node's Execute context as the generated code builds it. The output address is given,
// as the model plans it (here kOut).
struct Om2Call {
  static constexpr uint64_t kOut = 0x0000600000000000ull;
  std::string name, type;
  std::vector<std::unique_ptr<gert::Tensor>> inputs, outputs;
  NothingAllocator allocator;
  std::vector<void *> workspace;
  void *stream;
  std::unique_ptr<uint8_t[]> node_info;  // exactly sizeof(gert::ComputeNodeInfo)
  std::unique_ptr<uint8_t[]> context;
  std::vector<gert::Chain> chains;

  Om2Call(const std::string &op_type, const std::vector<std::vector<int64_t>> &shapes, ge::DataType dtype,
          const std::vector<int64_t> &out_dims, const std::string &node)
      : name(node), type(op_type) {
    static uint64_t streams = 0;
    stream = harness::Addr(0x0A2E0000ull + 0x40 * ++streams);
    for (size_t i = 0; i < shapes.size(); ++i) inputs.push_back(ModelTensor(shapes[i], dtype, harness::InputAt(i)));
    outputs.push_back(ModelTensor(out_dims, dtype, kOut));
    std::vector<void *> in, out;
    for (auto &t : inputs) in.push_back(t.get());
    in.push_back(static_cast<gert::GertAllocator *>(&allocator));
    in.push_back(stream);
    for (auto &t : outputs) out.push_back(t.get());
    out.push_back(&workspace);
    const size_t bytes = sizeof(KernelRunContext) + sizeof(gert::Chain *) * (in.size() + out.size());
    context.reset(new uint8_t[bytes]());
    node_info.reset(new uint8_t[sizeof(gert::ComputeNodeInfo)]);
    auto *info = reinterpret_cast<gert::ComputeNodeInfo *>(node_info.get());
    info->Init(inputs.size(), inputs.size(), outputs.size(), name.c_str(), type.c_str());
    auto *run = reinterpret_cast<KernelRunContext *>(context.get());
    run->input_size = in.size();
    run->output_size = out.size();
    run->compute_node_info = info;
    run->output_start = &run->values[run->input_size];
    chains.resize(in.size() + out.size());
    for (size_t i = 0; i < chains.size(); ++i) run->values[i] = reinterpret_cast<AsyncAnyValue *>(&chains[i]);
    for (size_t i = 0; i < in.size(); ++i) chains[i].Set(in[i], nullptr);
    for (size_t i = 0; i < out.size(); ++i) chains[in.size() + i].Set(out[i], nullptr);
  }
  ~Om2Call() {
    for (auto &c : chains) c.Set(nullptr, nullptr);
  }
  Om2Call(const Om2Call &) = delete;
  Om2Call &operator=(const Om2Call &) = delete;

  gert::EagerOpExecutionContext *ctx() { return reinterpret_cast<gert::EagerOpExecutionContext *>(context.get()); }
  const gert::ComputeNodeInfo &info() const { return *reinterpret_cast<const gert::ComputeNodeInfo *>(node_info.get()); }
};

static_assert(sizeof(gert::ComputeNodeInfo) == 88, "OM2's node-info block is the 88-byte head alone");

}  // namespace om2

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_OM2_CONTEXT_H_
