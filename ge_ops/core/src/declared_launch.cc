#include "tf_ge_custom_core/declared_launch.h"

#include <string>

namespace tf_ge_custom {
namespace core {
namespace {

uint64_t LittleEndianWord(const uint8_t *p, int64_t available) {
  uint64_t v = 0;
  for (int64_t i = 0; i < kArgWordSize && i < available; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

// Every field back to its default, the lists keeping their capacity.
void Reset(HostArgValues *values) {
  values->ffts = 0;
  values->sync_block_lock = 0;
  values->workspace = 0;
  values->num_elements = 0;
  values->grid_x = values->grid_y = values->grid_z = 1;
}

Status Declare(const KernelCall &call, const std::string &soc, KernelRegistry &registry, DeclarationRuntime &runtime,
               int64_t target_vector_cores, LaunchDeclaration *out) {
  const KernelChoice &choice = call.choice;
  // 0 elements: no variant was chosen; the flat kernel over 0 elements stands in.
  const KernelVariantDefinition *variant = choice.variant;
  if (variant == nullptr) {
    if (call.num_elements != 0 || call.op->variants.empty()) {
      return Status::Error(Code::kInternal, "the call has no kernel variant for its inputs (PrepareCall first)");
    }
    variant = &call.op->variants.front();
  } else if (choice.operands.size() != call.inputs.size()) {
    return Status::Error(Code::kInternal, "the call's operands do not match its inputs");
  }
  TF_GE_CUSTOM_RETURN_IF_ERROR(registry.Find(soc, call.op->type_name, variant->name, call.dtype->name, &out->kernel));
  // Programs per launch: the target's own vector cores where Compile's platform said (a board
  // served by another SoC's set of more cores would otherwise run in turns), as Execute takes
  // the running device's; else the manifest's cap.
  if (target_vector_cores > 0) out->kernel.entry.max_programs = ProgramCap(out->kernel.entry, target_vector_cores);
  const KernelEntry &entry = out->kernel.entry;
  if (entry.magic != BinaryMagic::kElfVectorCore) {
    return Status::Error(Code::kUnsupported,
                         "kernel " + entry.entry +
                             " is not a vector-core (aiv) kernel: GE loads a declared kernel with the node's "
                             "TVM magic attribute, which defaults to the vector core and a custom op cannot set");
  }
  if (entry.lock_num > 0) {
    return Status::Error(Code::kUnsupported,
                         "kernel " + entry.entry + " uses " + std::to_string(entry.lock_num) +
                             " sync-block locks, which must be refilled before every launch; a declared launch "
                             "has no step that could do it");
  }

  HostArgValues &values = out->values;
  Reset(&values);
  values.attrs = call.attrs;  // the attribute words, the same in every launch
  out->refs.inputs.clear();
  out->refs.outputs.clear();
  out->refs.has_workspace = false;
  out->refs.workspace = 0;
  out->workspace_bytes = 0;
  Launch &l = out->launch;
  uint32_t block_dim = 1;
  if (call.num_elements == 0) {
    // The flat kernel's parameters over nothing: its loop runs no iteration.
    l.input_offsets.assign(call.inputs.size(), 0);
    l.output_offset = 0;
    l.num_elements = 0;
    l.dims.assign(1, 0);
    l.input_strides.assign(call.inputs.size(), std::vector<int64_t>(1, 1));
    l.grid_x = l.grid_y = l.grid_z = 1;
    values.inputs.assign(call.inputs.begin(), call.inputs.end());
    values.outputs.assign(call.outputs.begin(), call.outputs.end());
    values.num_elements = 0;
    values.dims = l.dims;
    values.input_strides = l.input_strides;
    for (size_t i = 0; i < call.inputs.size(); ++i) out->refs.inputs.push_back(static_cast<uint32_t>(i));
  } else {
    TF_GE_CUSTOM_RETURN_IF_ERROR(LaunchPlan::Make(choice, call.dtype->itemsize, entry, &out->plan));
    const LaunchPlan &plan = out->plan;
    if (plan.launch_count() != 1) {
      return Status::Error(
          Code::kUnsupported,
          "output shape " + ShapeText(choice.output) + " (" + std::to_string(call.num_elements) +
              " elements) needs " + std::to_string(plan.launch_count()) + " launches of at most " +
              std::to_string(entry.max_elements_per_launch) +
              " elements each; GE fills a declared address word with the tensor's own address, so the later "
              "launches' pointers into the tensors cannot be declared. Keep this shape out of a static "
              "(sunk) graph: compile_dynamic_mode=True runs it through Execute, which launches it in chunks");
    }
    plan.launch(0, &l);
    SetLaunchValues(choice, call.inputs, call.outputs, l, &values);
    for (int operand : choice.operands) out->refs.inputs.push_back(static_cast<uint32_t>(operand));
    block_dim = l.block_dim();
  }
  for (size_t o = 0; o < call.outputs.size(); ++o) out->refs.outputs.push_back(static_cast<uint32_t>(o));
  if (entry.workspace_size > 0) {
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(out->workspace_bytes, WorkspaceBytes(entry, block_dim));
    TF_GE_CUSTOM_ASSIGN_OR_RETURN(const DeclarationRuntime::Workspace ws, runtime.AllocWorkspace(out->workspace_bytes));
    values.workspace = ws.address;
    out->refs.workspace = ws.index;
    out->refs.has_workspace = true;
  }
  // values.ffts stays 0 (see the header) and the lock null (lock_num is 0).
  out->launches.resize(1);
  DeclaredLaunch &launch = out->launches[0];
  launch.block_dim = block_dim;
  return PackArgWords(entry.args, values, out->refs, &out->bytes, &launch.words);
}

}  // namespace

const char *ArgWordKindName(ArgWordKind kind) {
  switch (kind) {
    case ArgWordKind::kValue: return "value";
    case ArgWordKind::kInput: return "input";
    case ArgWordKind::kOutput: return "output";
    case ArgWordKind::kWorkspace: return "workspace";
  }
  return "?";
}

std::string ShapeText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Status PackArgWords(const ArgLayout &layout, const HostArgValues &values, const ArgWordRefs &refs,
                    std::vector<uint8_t> *bytes, std::vector<ArgWord> *words) {
  TF_GE_CUSTOM_RETURN_IF_ERROR(PackHostArgs(layout, values, bytes));
  const int64_t size = static_cast<int64_t>(bytes->size());
  const int64_t count = (size + kArgWordSize - 1) / kArgWordSize;
  words->resize(static_cast<size_t>(count));
  for (int64_t w = 0; w < count; ++w) {
    ArgWord &word = (*words)[static_cast<size_t>(w)];
    word.kind = ArgWordKind::kValue;
    word.index = 0;
    word.value = LittleEndianWord(bytes->data() + w * kArgWordSize, size - w * kArgWordSize);
  }
  for (const ArgSlot &slot : layout.slots) {
    ArgWordKind kind = ArgWordKind::kValue;
    uint32_t index = 0;
    if (slot.role == SlotRole::kInput || slot.role == SlotRole::kOutput) {
      const bool input = slot.role == SlotRole::kInput;
      const auto &list = input ? refs.inputs : refs.outputs;
      if (slot.index < 0 || static_cast<size_t>(slot.index) >= list.size()) {
        return Status::Error(Code::kInternal, "no op tensor is given for address slot " + slot.name);
      }
      kind = input ? ArgWordKind::kInput : ArgWordKind::kOutput;
      index = list[static_cast<size_t>(slot.index)];
    } else if (slot.role == SlotRole::kWorkspace && refs.has_workspace) {
      kind = ArgWordKind::kWorkspace;
      index = refs.workspace;
    } else {
      continue;  // its bytes are in the value words already
    }
    if (slot.size != kArgWordSize || slot.offset % kArgWordSize != 0) {
      return Status::Error(Code::kUnsupported, "address slot " + slot.name + " (" + std::to_string(slot.size) +
                                                   " bytes at offset " + std::to_string(slot.offset) +
                                                   ") is not one 8-byte-aligned word, which GE's annotated "
                                                   "arguments are made of");
    }
    ArgWord &word = (*words)[static_cast<size_t>(slot.offset / kArgWordSize)];
    word.kind = kind;
    word.index = index;
  }
  return Status::Ok();
}

void WordBytes(const std::vector<ArgWord> &words, std::vector<uint8_t> *out) {
  out->resize(words.size() * static_cast<size_t>(kArgWordSize));
  for (size_t w = 0; w < words.size(); ++w) {
    for (int64_t i = 0; i < kArgWordSize; ++i) {
      (*out)[w * kArgWordSize + static_cast<size_t>(i)] = static_cast<uint8_t>(words[w].value >> (8 * i));
    }
  }
}

Status DeclareLaunch(const KernelCall &call, const std::string &soc, KernelRegistry &registry,
                     DeclarationRuntime &runtime, LaunchDeclaration *out, int64_t target_vector_cores) {
  if (call.op == nullptr || call.dtype == nullptr) {
    return Status::Error(Code::kInternal, "the call has no op or dtype (PrepareCall first)");
  }
  const Status status = Declare(call, soc, registry, runtime, target_vector_cores, out);
  if (status.ok()) return status;
  const std::string variant = call.choice.variant != nullptr ? call.choice.variant->name : std::string("flat");
  return status.WithContext("declared launch, SoC " + soc + ", kernel variant " + variant + ", dtype " +
                            call.dtype->name);
}

}  // namespace core
}  // namespace tf_ge_custom
