#include "kernel_op.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "acl_runtime.h"
#include "ge_ops.inc"
#include "ge_context_option.h"
#include "ge_report.h"
#include "tf_ge_custom_core/declared_launch.h"
#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/kernel_cache.h"
#include "tf_ge_custom_core/kernel_compiler.h"
#include "tf_ge_custom_core/library_location.h"
#include "tf_ge_custom_core/node_attrs.h"
#include "tf_ge_custom_core/process_runner.h"
#include "tf_ge_custom_core/op_checks.h"
#include "tf_ge_custom_core/outputs.h"
#include "tf_ge_custom_core/thread_scratch.h"

namespace tf_ge_custom {
namespace cann {
namespace {

// The op definition's spelling of a GE dtype, or null for one it does not know.
const char *KnownDTypeName(ge::DataType dtype) {
  switch (dtype) {
#define TF_GE_CUSTOM_DTYPE_CASE(enumerator, name) \
  case ge::enumerator:                            \
    return name;
    TF_GE_CUSTOM_FOR_EACH_GE_DTYPE(TF_GE_CUSTOM_DTYPE_CASE)
#undef TF_GE_CUSTOM_DTYPE_CASE
    default:
      return nullptr;
  }
}

// The op definition's spelling of a GE dtype; anything else keeps a name that says what it is.
std::string DTypeName(ge::DataType dtype) {
  const char *known = KnownDTypeName(dtype);
  return known != nullptr ? std::string(known) : "ge::DataType(" + std::to_string(static_cast<int>(dtype)) + ")";
}

// *name = DTypeName(dtype), without touching *name when it already says so: with the
// pre-C++11 std::string ABI that CANN's libraries use, building a string allocates.
void SetDTypeName(ge::DataType dtype, std::string *name) {
  const char *known = KnownDTypeName(dtype);
  if (known == nullptr) {
    *name = DTypeName(dtype);
  } else if (*name != known) {
    *name = known;
  }
}

std::vector<int64_t> Dims(const gert::Shape &shape) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape.GetDimNum(); ++i) dims.push_back(shape.GetDim(i));
  return dims;
}

// The same into *dims, reusing its capacity.
void ReadDims(const gert::Shape &shape, std::vector<int64_t> *dims) {
  dims->clear();
  for (size_t i = 0; i < shape.GetDimNum(); ++i) dims->push_back(shape.GetDim(i));
}

// What Execute reads and prepares per call, kept per thread and reused: once a thread has seen
// a call's shapes, Execute allocates nothing on the host (the core keeps its own per-thread
// state the same way; docs/ge-library.md, "What Execute does").
struct ExecuteScratch {
  std::vector<core::TensorInfo> inputs;      // the dtype names (CheckDTypes)
  std::vector<std::vector<int64_t>> shapes;  // one per input (PrepareCall's list form)
  core::KernelCall call;
};
// Per thread, and freed with the library (a thread_local would keep it loaded: thread_scratch.h).
core::ThreadScratch<ExecuteScratch> execute_scratches;

// The node's attributes as GE's context holds them (ExtendedKernelContext::GetAttrs: the
// RuntimeAttrs GE builds from the node's IR attributes, by their index in REG_OP's ATTRs, which
// the generated REG_OP lists in op.attrs order). Where GE found an IR attribute missing on the
// node it keeps none of them (bg_ir_attrs.cc, GetAllIrAttrs): an index past GetAttrNum is an
// attribute the node does not carry, and the core takes its default. Only what lies inside the
// block's measured attribute area is read (core/node_attrs.h).
class NodeAttrs : public core::AttrValues {
 public:
  NodeAttrs(const gert::RuntimeAttrs *attrs, const core::AttrArea &area) : attrs_(attrs), area_(area) {}
  const float *Float(size_t index) const override { return Inside(Has(index) ? attrs_->GetFloat(index) : nullptr); }
  const int64_t *Int(size_t index) const override { return Inside(Has(index) ? attrs_->GetInt(index) : nullptr); }

 private:
  bool Has(size_t index) const {
    if (attrs_ == nullptr || !area_.HoldsOffsets(0)) return false;
    const size_t count = attrs_->GetAttrNum();
    return index < count && area_.HoldsOffsets(count);
  }
  template <typename T>
  const T *Inside(const T *value) const {
    return area_.Holds(value, sizeof(T)) ? value : nullptr;
  }
  const gert::RuntimeAttrs *attrs_;
  core::AttrArea area_;
};

// The attribute area of the context's node-info block (false: it has none, as on HEAD's OM2
// path, whose blocks are the 88-byte head alone: core/node_attrs.h).
bool AttrAreaOf(const gert::ExtendedKernelContext &ctx, core::AttrArea *area) {
  const gert::ComputeNodeInfo *info = ctx.GetComputeNodeInfo();
  if (info == nullptr) {
    *area = core::AttrArea();
    return false;
  }
  return core::MeasureAttrArea(info->GetAttrs(), info->GetOutputInstanceInfo(0), area);
}

// "inputs [8, 2048] and [2048]", "input [8, 2048]", "inputs [2], [2] and [2]": the call's input
// shapes in a refusal's context (built only for a refusal).
std::string InputShapes(const std::vector<std::vector<int64_t>> &shapes) {
  std::string s = shapes.size() == 1 ? "input " : "inputs ";
  for (size_t i = 0; i < shapes.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == shapes.size() ? " and " : ", ") + core::ShapeText(shapes[i]);
  }
  return s;
}

// "the inputs x [8, 2048] and y [2048] broadcast to [8, 2048]", "the input x [4, 5] gives
// [4, 5]": what the op's inputs make of the output shape, for a refusal.
std::string WhatTheInputsGive(const core::OpDefinition &op, const std::vector<std::vector<int64_t>> &shapes,
                              const std::vector<int64_t> &output) {
  std::string s = shapes.size() == 1 ? "the input " : "the inputs ";
  for (size_t i = 0; i < shapes.size(); ++i) {
    s += (i == 0 ? "" : i + 1 == shapes.size() ? " and " : ", ") + op.inputs[i] + " " + core::ShapeText(shapes[i]);
  }
  return s + (op.broadcasts ? " broadcast to " : shapes.size() == 1 ? " gives " : " give ") + core::ShapeText(output);
}

uint64_t Address(const void *p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

// Any address inside this library, for dladdr.
void LibraryAnchor() {}

// The outputs from MallocOutputTensor, each of the broadcast output shape with x's format and
// dtype; one with no elements gets a one-element buffer and then its real, empty shape back
// (core/outputs.h says why). On HEAD's OM2 path (om2) every output comes with its address and
// the allocator behind MallocOutputTensor returns nothing (stable_part_provider.cc,
// AllocatorFaker): an empty output keeps the address it came with.
class ContextOutputs : public core::OutputAllocator {
 public:
  ContextOutputs(gert::EagerOpExecutionContext *ctx, const gert::Tensor &x, const std::vector<int64_t> &dims, bool om2)
      : ctx_(ctx), x_(x), om2_(om2) {
    for (int64_t d : dims) {
      shape_.MutableOriginShape().AppendDim(d);
      shape_.MutableStorageShape().AppendDim(d);
    }
  }

  core::Result<uint64_t> AllocOutput(size_t index, core::OutputSize size) override {
    const bool one_element = size == core::OutputSize::kOneElement;
    if (one_element && om2_) {
      const gert::Tensor *given = ctx_->GetOutputTensor(index);
      if (given != nullptr && given->GetAddr() != nullptr) return Address(given->GetAddr());
    }
    const gert::StorageShape one({1}, {1});
    gert::Tensor *out =
        ctx_->MallocOutputTensor(index, one_element ? one : shape_, x_.GetFormat(), x_.GetDataType());
    if (out == nullptr) {
      return core::Status::ApiError("MallocOutputTensor", "returned null for output " + std::to_string(index));
    }
    if (one_element) out->GetShape() = shape_;
    // In a static graph the address may be a legal 0 offset: never test it for null.
    return Address(out->GetAddr());
  }

 private:
  gert::EagerOpExecutionContext *ctx_;
  const gert::Tensor &x_;
  const bool om2_;
  gert::StorageShape shape_;
};

// What DeclareLaunchArgs reads and declares, kept per thread and reused (no allocation once a
// thread has declared a node of that kernel; benchmarks/ge_bench/ measures it).
struct DeclareScratch {
  std::vector<core::TensorInfo> inputs;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<int64_t> output_dims;
  core::KernelCall call;
  core::LaunchDeclaration declaration;
};
core::ThreadScratch<DeclareScratch> declare_scratches;
// DeclaredSoc's key and reading of ge.socVersion, kept: with the pre-C++11 string ABI a fresh
// string allocates.
struct SocOption {
  std::string key = kSocVersionOptionKey;
  std::string value;
};
core::ThreadScratch<SocOption> soc_options;

// GE's MallocWorkSpace of the annotated context: the workspace GE plans into the model.
class ContextWorkspaces : public core::DeclarationRuntime {
 public:
  explicit ContextWorkspaces(gert::AnnotatedArgsContext &ctx) : ctx_(ctx) {}
  core::Result<Workspace> AllocWorkspace(uint64_t bytes) override {
    const gert::WorkspaceAddr ws = ctx_.MallocWorkSpace(static_cast<size_t>(bytes));
    if (ws.addr == nullptr) {  // the header's failure value
      return core::Status::ApiError("MallocWorkSpace", "returned no address for " + std::to_string(bytes) + " bytes");
    }
    Workspace w;
    w.index = ws.index;
    w.address = Address(ws.addr);
    return w;
  }

 private:
  gert::AnnotatedArgsContext &ctx_;
};

const void *Pointer(uint64_t address) { return reinterpret_cast<const void *>(static_cast<uintptr_t>(address)); }

// One declared word as GE's annotated argument.
ge::graphStatus AppendWord(const core::ArgWord &w, gert::AnnotatedKernelArgs *args) {
  switch (w.kind) {
    case core::ArgWordKind::kInput: return args->AppendArg(gert::InputAddr{w.index, Pointer(w.value)});
    case core::ArgWordKind::kOutput: return args->AppendArg(gert::OutputAddr{w.index, Pointer(w.value)});
    case core::ArgWordKind::kWorkspace: return args->AppendArg(gert::WorkspaceAddr{w.index, Pointer(w.value)});
    case core::ArgWordKind::kValue: break;
  }
  return args->AppendArg(static_cast<uint64_t>(w.value));
}

// GE's graph build handed a node-info block without an attribute area, where GE's own builder
// always makes one (bg_kernel_context_extend.cc): the node's attributes cannot be read.
core::Status NoAttrAreaAtBuild() {
  return core::Status::Error(core::Code::kBadNodeInfo,
                             "GE's node-info block has no attribute area to read the node's attributes from (GE's "
                             "graph build gives every node one): this GE is not one the library knows; report it "
                             "with the CANN version");
}

// *words: the attribute words recorded for node, for a block with no attribute area: the
// model's (its bundle, bundle.h) where a model serves the node, else those this instance's
// Compile recorded. kBadNodeInfo when there are none (core::NoAttrArea).
core::Status RecordedAttrWords(const core::OpDefinition &op, const char *node, const core::ModelKernels::Model *model,
                               core::KernelRegistry &registry, std::vector<uint64_t> *words) {
  if (op.attrs.empty()) {
    words->clear();
    return core::Status::Ok();
  }
  const bool found = model != nullptr ? model->decoded->NodeAttrWords(node, words) : registry.NodeAttrWords(node, words);
  if (!found) return core::NoAttrArea(node != nullptr ? node : "");
  if (words->size() != op.attrs.size()) {
    return core::Status::Error(core::Code::kCorrupt, "the model recorded " + std::to_string(words->size()) +
                                                         " attribute word(s) for node " + node + ", the op has " +
                                                         std::to_string(op.attrs.size()) +
                                                         " attribute(s): rebuild the model (OM) with this package");
  }
  return core::Status::Ok();
}

}  // namespace

KernelOp::KernelOp(const char *op_type) : op_type_(op_type), op_(core::FindOp(op_type)) {}

ge::graphStatus KernelOp::Fail(const char *node, const core::Status &status, const std::string &soc) const {
  // The standard error stream and GE's error manager (what GE returns to TF Adapter, and plog).
  ReportFailure(Failure{op_type_, node != nullptr ? node : "", soc, status.message()});
  return ge::GRAPH_FAILED;
}

core::Result<std::shared_ptr<core::KernelRegistry>> KernelOp::Registry() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!registry_) {
    auto library = core::FileContaining(reinterpret_cast<const void *>(&LibraryAnchor));
    if (!library.ok()) return library.status();
    auto root = core::OppRootFromLibraryPath(library.value());
    if (!root.ok()) return root.status();
    registry_ = core::KernelRegistry::FromOppRoot(root.value(), core::KernelBundleDirs(std::getenv(core::kKernelsEnv)));
    opp_root_ = root.value();
  }
  return registry_;
}

std::shared_ptr<core::KernelSupply> KernelOp::Supply() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!supply_) {
    // The builder is found and asked where the cache is on first need, not here.
    auto compiler = std::make_shared<core::BuilderProcess>(
        opp_root_, [](const char *name) { return std::getenv(name); }, std::make_shared<core::PosixProcessRunner>());
    // The builder's output lines reach GE's log while it runs (a compile can take minutes).
    const std::string op_type = op_type_;
    compiler->SetProgress([op_type](const std::string &line) { ReportProgress(op_type, "kernel builder: " + line); });
    supply_ = std::make_shared<core::KernelSupply>(compiler);
  }
  return supply_;
}

ge::graphStatus KernelOp::Compile(gert::OpCompileContext *ctx) {
  if (ctx == nullptr) return Fail(nullptr, core::Status::Error(core::Code::kInternal, "Compile got no context"));
  const char *node = ctx->GetNodeName();
  try {
    if (op_ == nullptr) return Fail(node, core::Status::Error(core::Code::kInternal, "this library does not define the op"));
    // The target, as the compilable_add_custom sample reads it: the SoC from the optional
    // infos (ATC's --soc_version offline), the NpuArch platform resource beside it.
    fe::PlatFormInfos platform;
    fe::OptionalInfos optional;
    const ge::graphStatus got = ctx->GetPlatformInfos(platform, optional);
    if (got != ge::GRAPH_SUCCESS) {
      return Fail(node, core::Status::ApiError("GetPlatformInfos", "returned " + std::to_string(got)));
    }
    std::string soc = optional.GetSocVersion();
    if (soc.empty() && !platform.GetPlatformResWithLock("version", "SoC_version", soc)) soc.clear();
    std::string npu_arch;
    if (!platform.GetPlatformResWithLock("version", "NpuArch", npu_arch)) npu_arch.clear();
    // The target's vector cores (the platform's SoCInfo vector_core_cnt, as GE's model helper
    // reads it): what the declared launches' programs are capped at (0: not said).
    std::string vector_cores_text;
    int64_t vector_cores = 0;
    if (platform.GetPlatformResWithLock("SoCInfo", "vector_core_cnt", vector_cores_text)) {
      vector_cores = core::ParseCount(vector_cores_text);
    }
    if (node != nullptr && models_.Owns(node)) {
      return Fail(node, core::Status::Error(core::Code::kConflict,
                                            "a model deserialized into this instance has a node of this name and "
                                            "kernels of its own; a graph node of the same name would run that "
                                            "model's kernels: give the node another name, or build the graph in "
                                            "a process of its own"),
                  soc);
    }
    std::vector<core::TensorInfo> inputs;
    for (size_t i = 0; i < op_->inputs.size(); ++i) {
      const gert::Tensor *t = ctx->GetInputTensor(i);
      if (t == nullptr) {
        return Fail(node, core::Status::ApiError("GetInputTensor", "returned null for input " + std::to_string(i)));
      }
      inputs.push_back({DTypeName(t->GetDataType()), {}});
    }
    auto registry = Registry();
    if (!registry.ok()) return Fail(node, registry.status(), soc);
    std::string chosen;
    auto origin = core::PrepareKernel(*Supply(), *registry.value(), *op_, soc, npu_arch, inputs, &chosen);
    if (!origin.ok()) return Fail(node, origin.status(), soc);
    if (!chosen.empty()) ReportProgress(op_type_, "node " + std::string(node != nullptr ? node : "?") + ": " + chosen);
    // The node's attribute words as GE's graph gives them, named in the model with the node: an
    // Execute whose node-info block carries none (HEAD's OM2 code) takes these.
    std::vector<uint64_t> words;
    if (!op_->attrs.empty()) {
      core::AttrArea area;
      if (!AttrAreaOf(*ctx, &area)) {
        return Fail(node, NoAttrAreaAtBuild(),
                    soc);
      }
      const core::Status read = core::SetAttrWords(*op_, NodeAttrs(ctx->GetAttrs(), area), &words);
      if (!read.ok()) return Fail(node, read, soc);
    }
    if (node != nullptr) registry.value()->RecordNode(node, op_type_, words);  // named in the model
    {
      std::lock_guard<std::mutex> lock(mutex_);
      compiled_soc_ = soc;  // what DeclareLaunchArgs declares for
      compiled_socs_[soc] = vector_cores;
    }
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(node, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

ge::graphStatus KernelOp::Execute(gert::EagerOpExecutionContext *ctx) {
  if (ctx == nullptr) return Fail(nullptr, core::Status::Error(core::Code::kInternal, "Execute got no execution context"));
  const char *node = ctx->GetNodeName();
  try {
    if (op_ == nullptr) return Fail(node, core::Status::Error(core::Code::kInternal, "this library does not define the op"));
    ExecuteScratch &scratch = execute_scratches.Get();
    std::vector<core::TensorInfo> &inputs = scratch.inputs;
    core::KernelCall &call = scratch.call;
    const size_t count = op_->inputs.size();  // the op's own inputs
    inputs.resize(count);
    scratch.shapes.resize(count);
    call.inputs.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const gert::Tensor *t = ctx->GetInputTensor(i);
      if (t == nullptr) {
        return Fail(node, core::Status::ApiError("GetInputTensor", "returned null for input " + std::to_string(i)));
      }
      SetDTypeName(t->GetDataType(), &inputs[i].dtype);
      ReadDims(t->GetStorageShape(), &scratch.shapes[i]);
      call.inputs[i] = Address(t->GetAddr());
    }
    auto dtype = core::CheckDTypes(*op_, inputs);
    if (!dtype.ok()) return Fail(node, dtype.status());
    // The inputs' shapes (broadcast as tf.math.add does where the op broadcasts, reduced) and
    // the kernel variant (core/broadcast.h), into the kept call, whose addresses it leaves alone;
    // then the node's attributes as the kernel's attribute words.
    const core::Status prepared = core::PrepareCall(*op_, *dtype.value(), scratch.shapes, &call);
    if (!prepared.ok()) return Fail(node, prepared);
    auto registry = Registry();
    if (!registry.ok()) return Fail(node, registry.status());
    // A block with no attribute area is HEAD's OM2 code's (core/node_attrs.h): its node is
    // served by the model this thread loaded last, and takes the words Compile recorded.
    core::AttrArea area;
    const bool om2 = !AttrAreaOf(*ctx, &area);
    const core::ModelKernels::Model *model = nullptr;
    const core::Status routed = om2 ? models_.ForOm2Node(node, &model) : models_.ForNode(node, &model);
    if (!routed.ok()) return Fail(node, routed);
    const core::Status attrs = om2 ? RecordedAttrWords(*op_, node, model, *registry.value(), &call.attrs)
                                   : core::SetAttrWords(*op_, NodeAttrs(ctx->GetAttrs(), area), &call.attrs);
    if (!attrs.ok()) return Fail(node, attrs);

    ContextOutputs outputs(ctx, *ctx->GetInputTensor(0), call.choice.output, om2);
    const core::Status allocated = core::AllocateOutputs(&call, outputs);
    if (!allocated.ok()) return Fail(node, allocated);
    // A node of a model with kernels of its own runs that model's (core::ModelKernels).
    core::KernelRegistry &kernels = model != nullptr && model->own_kernels ? *model->decoded : *registry.value();
    AclRuntime runtime(ctx);
    const core::Status st = core::LaunchKernels(call, kernels, core::KernelCache::Process(), runtime);
    if (!st.ok()) return Fail(node, st);
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {  // e.g. std::bad_alloc: never let it unwind into GE
    return Fail(node, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

core::Result<std::string> KernelOp::DeclaredSoc(core::KernelRegistry &registry, int64_t *cores) {
  *cores = 0;
  // GE's task generator reads the graph's SoC from its context right before it calls this
  // (compiler/engines/custom_engine/custom_ops_kernel_builder.cc): the graph's own target.
  SocOption &soc_option = soc_options.Get();
  std::string &option = soc_option.value;
  if (!GeContextSoc(soc_option.key, &option)) option.clear();
  std::lock_guard<std::mutex> lock(mutex_);
  std::string compiled;
  for (const auto &c : compiled_socs_) compiled += (compiled.empty() ? "" : ", ") + c.first;
  if (!option.empty()) {
    const auto it = compiled_socs_.find(option);
    if (it != compiled_socs_.end()) {
      *cores = it->second;
      return it->first;
    }
    if (compiled_socs_.empty()) return option;  // no Compile here: the registry answers for it
    return core::Status::Error(core::Code::kUnknownSoc, "GE's graph context names SoC " + option +
                                                            " (ge.socVersion), but this instance compiled kernels for " +
                                                            compiled + " only: no Compile chose kernels for that SoC");
  }
  if (compiled_socs_.size() == 1) {
    *cores = compiled_socs_.begin()->second;
    return compiled_soc_;
  }
  if (compiled_socs_.size() > 1) {
    return core::Status::Error(core::Code::kUnknownSoc, "GE's graph context names no SoC (ge.socVersion is empty) and "
                                                        "this instance compiled kernels for several (" +
                                                            compiled + "): which one this graph is for is unknown");
  }
  const std::vector<std::string> socs = registry.Socs();
  if (socs.size() == 1) return socs[0];
  std::string listed;
  for (const auto &s : socs) listed += (listed.empty() ? "" : ", ") + s;
  return core::Status::Error(core::Code::kUnknownSoc,
                             "no Compile named the target SoC before DeclareLaunchArgs, GE's graph context names "
                             "none (ge.socVersion), and the kernels (" + registry.origin() + ") hold " +
                                 std::to_string(socs.size()) + " SoCs: " + (listed.empty() ? "none" : listed));
}

ge::graphStatus KernelOp::DeclareLaunchArgs(gert::AnnotatedArgsContext &ctx) {
  const char *node = ctx.GetNodeName();
  try {
    if (op_ == nullptr) return Fail(node, core::Status::Error(core::Code::kInternal, "this library does not define the op"));
    DeclareScratch &scratch = declare_scratches.Get();
    std::vector<core::TensorInfo> &inputs = scratch.inputs;
    core::KernelCall &call = scratch.call;
    const size_t count = op_->inputs.size();  // the op's own inputs
    inputs.resize(count);
    scratch.shapes.resize(count);
    call.inputs.resize(count);
    for (size_t i = 0; i < count; ++i) {
      const gert::Tensor *t = ctx.GetInputTensor(i);
      if (t == nullptr) {
        return Fail(node, core::Status::ApiError("GetInputTensor", "returned null for input " + std::to_string(i)));
      }
      SetDTypeName(t->GetDataType(), &inputs[i].dtype);
      ReadDims(t->GetStorageShape(), &scratch.shapes[i]);
      call.inputs[i] = Address(t->GetAddr());  // a logical address of the model: GE refreshes it
    }
    auto dtype = core::CheckDTypes(*op_, inputs);
    if (!dtype.ok()) return Fail(node, dtype.status());
    const core::Status prepared = core::PrepareCall(*op_, *dtype.value(), scratch.shapes, &call);
    if (!prepared.ok()) return Fail(node, prepared);
    // The node's attributes: value words of the declared launch (GE keeps them in the model).
    core::AttrArea area;
    if (!op_->attrs.empty() && !AttrAreaOf(ctx, &area)) {
      return Fail(node, NoAttrAreaAtBuild());
    }
    const core::Status attrs = core::SetAttrWords(*op_, NodeAttrs(ctx.GetAttrs(), area), &call.attrs);
    if (!attrs.ok()) return Fail(node, attrs);
    call.outputs.resize(op_->outputs.size());
    for (size_t o = 0; o < op_->outputs.size(); ++o) {
      const gert::Tensor *t = ctx.GetOutputTensor(o);
      if (t == nullptr) {
        return Fail(node, core::Status::ApiError("GetOutputTensor", "returned null for output " + std::to_string(o)));
      }
      ReadDims(t->GetStorageShape(), &scratch.output_dims);
      if (scratch.output_dims != call.choice.output) {
        return Fail(node, core::Status::Error(core::Code::kBadShape,
                                              "GE planned output " + std::to_string(o) + " as " +
                                                  core::ShapeText(scratch.output_dims) + ", but " +
                                                  WhatTheInputsGive(*op_, scratch.shapes, call.choice.output)));
      }
      call.outputs[o] = Address(t->GetAddr());
    }
    auto registry = Registry();
    if (!registry.ok()) return Fail(node, registry.status());
    int64_t target_cores = 0;
    auto soc = DeclaredSoc(*registry.value(), &target_cores);
    if (!soc.ok()) return Fail(node, soc.status());
    ContextWorkspaces workspaces(ctx);
    core::LaunchDeclaration &d = scratch.declaration;
    const core::Status declared =
        core::DeclareLaunch(call, soc.value(), *registry.value(), workspaces, &d, target_cores);
    if (!declared.ok()) {
      return Fail(node, declared.WithContext(InputShapes(scratch.shapes)));
    }
    const uint32_t stream_id = ctx.GetStreamId();
    for (core::DeclaredLaunch &launch : d.launches) {
      gert::AnnotatedKernelArgs args;
      for (const core::ArgWord &w : launch.words) {
        const ge::graphStatus appended = AppendWord(w, &args);
        if (appended != ge::GRAPH_SUCCESS) {
          return Fail(node, core::Status::ApiError("AnnotatedKernelArgs::AppendArg",
                                                   std::string("returned ") + std::to_string(appended) + " for a " +
                                                       core::ArgWordKindName(w.kind) + " word"));
        }
      }
      gert::AnnotatedKernelLaunchInfo info;
      info.kernel_name = d.kernel.entry.entry.c_str();
      info.kernel_bin = d.kernel.bytes->data();
      info.kernel_bin_size = d.kernel.bytes->size();
      info.block_dim = launch.block_dim;
      info.stream_id = stream_id;
      const ge::graphStatus added = ctx.AddLaunch(info, std::move(args));
      if (added != ge::GRAPH_SUCCESS) {
        return Fail(node, core::Status::ApiError("AddLaunch", "returned " + std::to_string(added) + " (kernel " +
                                                                  d.kernel.entry.entry + ", stream " +
                                                                  std::to_string(stream_id) + ")"));
      }
    }
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(node, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

ge::graphStatus KernelOp::InferShape(gert::InferShapeContext *ctx) {
  if (ctx == nullptr || op_ == nullptr) {
    return Fail(nullptr, core::Status::Error(core::Code::kInternal, "InferShape got no context"));
  }
  const char *node = ctx->GetNodeName();
  try {
    std::vector<core::TensorInfo> inputs;
    for (size_t i = 0; i < op_->inputs.size(); ++i) {
      const gert::Shape *s = ctx->GetInputShape(i);
      if (s == nullptr) {
        return Fail(node, core::Status::ApiError("GetInputShape", "returned null for input " + std::to_string(i)));
      }
      inputs.push_back({"", Dims(*s)});
    }
    auto shape = core::InferOutputShape(*op_, inputs);
    if (!shape.ok()) return Fail(node, shape.status());
    if (shape.value().size() > gert::Shape::kMaxDimNum) {
      return Fail(node, core::Status::Error(core::Code::kBadShape, "rank " + std::to_string(shape.value().size()) +
                                                         " exceeds GE's limit of " +
                                                         std::to_string(gert::Shape::kMaxDimNum)));
    }
    for (size_t o = 0; o < op_->outputs.size(); ++o) {
      gert::Shape *out = ctx->GetOutputShape(o);
      if (out == nullptr) {
        return Fail(node, core::Status::ApiError("GetOutputShape", "returned null for output " + std::to_string(o)));
      }
      out->SetDimNum(shape.value().size());
      for (size_t k = 0; k < shape.value().size(); ++k) out->SetDim(k, shape.value()[k]);
    }
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(node, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

ge::graphStatus KernelOp::InferDataType(gert::InferDataTypeContext *ctx) {
  if (ctx == nullptr || op_ == nullptr) {
    return Fail(nullptr, core::Status::Error(core::Code::kInternal, "InferDataType got no context"));
  }
  const char *node = ctx->GetNodeName();
  try {
    std::vector<core::TensorInfo> inputs;
    for (size_t i = 0; i < op_->inputs.size(); ++i) inputs.push_back({DTypeName(ctx->GetInputDataType(i)), {}});
    auto dtype = core::CheckDTypes(*op_, inputs);
    if (!dtype.ok()) return Fail(node, dtype.status());
    const ge::DataType out = ctx->GetInputDataType(0);
    for (size_t o = 0; o < op_->outputs.size(); ++o) {
      if (ctx->SetOutputDataType(o, out) != ge::GRAPH_SUCCESS) {
        return Fail(node, core::Status::ApiError("SetOutputDataType", "failed for output " + std::to_string(o)));
      }
    }
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(node, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

ge::graphStatus KernelOp::Serialize(std::vector<uint8_t> &buffer) {
  try {
    auto registry = Registry();
    if (!registry.ok()) return Fail(nullptr, registry.status());
    auto bytes = registry.value()->Serialize();
    if (!bytes.ok()) return Fail(nullptr, bytes.status().WithPrefix("Serialize"));
    buffer = std::move(bytes.value());
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(nullptr, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

ge::graphStatus KernelOp::Deserialize(const std::vector<uint8_t> &buffer) {
  try {
    auto registry = Registry();
    if (registry.ok()) {
      // An instance with kernels of its own: HEAD's OM2 code deserializes every model it loads
      // into the one instance GE's factory holds, which also compiles graphs. The model's kernels
      // join the registry (the OPP root's, the bundles' and what was compiled stay first), or,
      // where they differ from what it runs under the same key, serve the model's own nodes.
      std::string note;
      const core::Status added = models_.Add(*registry.value(), buffer, &note);
      if (!added.ok()) return Fail(nullptr, added.WithPrefix("Deserialize"));
      if (!note.empty()) ReportProgress(op_type_, "Deserialize: " + note);
      return ge::GRAPH_SUCCESS;
    }
    // A library with no OPP root around it: the OM's own copy of it, loaded from memory by GE's
    // OM loader (ModelHelper::LoadCustomOpRegistry: a memfd opened as /proc/self/fd/N, a
    // per-model registry, a fresh instance). The model's kernels alone.
    auto restored = core::KernelRegistry::FromSerialized(buffer);
    if (!restored.ok()) return Fail(nullptr, restored.status().WithPrefix("Deserialize"));
    for (const auto &passed : restored.value()->OutdatedSets()) ReportProgress(op_type_, "Deserialize: " + passed);
    std::lock_guard<std::mutex> lock(mutex_);
    if (registry_) {
      // Another Deserialize made the registry in the meantime: add to it.
      const core::Status added = registry_->AddSerialized(buffer);
      if (!added.ok()) return Fail(nullptr, added.WithPrefix("Deserialize"));
    } else {
      registry_ = restored.value();
    }
    return ge::GRAPH_SUCCESS;
  } catch (const std::exception &e) {
    return Fail(nullptr, core::Status::Error(core::Code::kInternal, e.what()));
  }
}

}  // namespace cann
}  // namespace tf_ge_custom
