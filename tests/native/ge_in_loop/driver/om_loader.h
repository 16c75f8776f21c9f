// GE's OM load of a model's custom ops, in GE's own code (both tags): what
// ModelHelper::LoadCustomOpRegistry (hicann/ge base/common/helper/model_custom_kernels_helper.cc)
// does with a model's SO_BINS and CUSTOM_OPS partitions, step by step:
//   1. CustomOpSoLoader::LoadCustomOpSoBins: the OM's own copy of the custom-op library, from
//      memory: a memfd written with the library's bytes, dlopen'ed as /proc/self/fd/N under
//      GE's offline-loading guard (custom_op_so_loader.cc, built here from the snapshot);
//   2. a new per-model CustomOpRegistry;
//   3. CustomOpRegistryBuilder::AddCreatorsFromSoHandles: the creators that copy's own
//      GetRegisteredCustomOpCreators lists (custom_op_registry_builder.cc, built here);
//   4. CustomOpRegistry::LoadCustomOpsPartition: a fresh instance per op type, Deserialize'd
//      with the model's bytes (custom_op_registry.cc);
//   5. the check ValidateCustomOpNodeDeserialized makes for every node: an op type with a
//      creator has its instance.
// model_custom_kernels_helper.cc itself needs GE's model and OM-file classes, which are not
// built here: its glue (steps 2 and 5, and the partition of SerializeCustomOpKernel's item
// layout: CustomKernelItemHeader of framework_types_internal.h) is restated below, from that
// file; everything it calls is GE's.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_OM_LOADER_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_OM_LOADER_H_

#include <dlfcn.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/helper/custom_op_registry_builder.h"
#include "common/helper/custom_op_so_loader.h"
#include "framework/common/framework_types_internal.h"
#include "graph/custom_op_registry.h"
#include "graph/op_so_bin.h"
#include "harness.h"

namespace om_loader {

// The CUSTOM_OPS partition SaveCustomOpsPartition writes: per op type one item, a
// CustomKernelItemHeader (magic "KCSK", name length, bytes length), the op type, the bytes.
// A model of several op types has one item per type, each the bytes of that type's instance.
inline std::vector<uint8_t> CustomOpsPartition(const std::vector<std::pair<std::string, std::vector<uint8_t>>> &items) {
  std::vector<uint8_t> out;
  for (const auto &item : items) {
    const std::string &op_type = item.first;
    const std::vector<uint8_t> &serialized = item.second;
    ge::CustomKernelItemHeader header;
    header.magic = ge::kCustomKernelItemMagic;
    header.name_len = static_cast<uint32_t>(op_type.size());
    header.bin_len = static_cast<uint32_t>(serialized.size());
    out.insert(out.end(), reinterpret_cast<const uint8_t *>(&header),
               reinterpret_cast<const uint8_t *>(&header) + sizeof(header));
    out.insert(out.end(), op_type.begin(), op_type.end());
    out.insert(out.end(), serialized.begin(), serialized.end());
  }
  return out;
}

inline std::vector<uint8_t> CustomOpsPartition(const std::string &op_type, const std::vector<uint8_t> &serialized) {
  return CustomOpsPartition({{op_type, serialized}});
}

// Read in one call: the library under ASan is about 28 MB, and a character iterator over it
// costs seconds per model in this -O0 program.
inline std::vector<uint8_t> FileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : 0;
  std::vector<uint8_t> bytes(static_cast<size_t>(size > 0 ? size : 0));
  in.seekg(0);
  if (!bytes.empty() && !in.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    bytes.clear();
  }
  return bytes;
}

// One loaded model: GE's per-model registry, holding the memfd copy's handle.
struct LoadedModel {
  std::shared_ptr<ge::CustomOpRegistry> registry;
  std::vector<ge::CustomOpSoHandlePtr> handles;
  std::string error;  // the step that failed, empty when loaded
  ge::BaseCustomOp *Op(const std::string &op_type = harness::kOpType) const {
    return registry ? registry->FindCustomOp(ge::AscendString(op_type.c_str())) : nullptr;
  }
  void *Library() const { return handles.empty() ? nullptr : handles.front()->GetHandle(); }
};

// The model's SO_BINS item: the custom-op library's bytes (kCustomOp, as the OM saves it).
inline ge::OpSoBinPtr LibraryItem(const std::vector<uint8_t> &library) {
  std::unique_ptr<char[]> data(new char[library.size()]);
  std::memcpy(data.get(), library.data(), library.size());
  return std::make_shared<ge::OpSoBin>("libtf_ge_custom_ge.so", "tf_ge_custom", std::move(data),
                                       static_cast<uint32_t>(library.size()), ge::SoBinType::kCustomOp);
}

// Steps 1-5 for a model whose SO_BINS hold `library`, whose CUSTOM_OPS partition is
// `partition` and whose nodes are of the op types `used`.
inline LoadedModel Load(const std::vector<uint8_t> &library, const std::vector<uint8_t> &partition,
                        const std::vector<std::string> &used = {harness::kOpType}) {
  LoadedModel m;
  if (ge::CustomOpSoLoader::GetInstance().LoadCustomOpSoBins({LibraryItem(library)}, m.handles) != ge::SUCCESS ||
      m.handles.empty()) {
    m.error = "CustomOpSoLoader::LoadCustomOpSoBins failed";
    return m;
  }
  m.registry = std::make_shared<ge::CustomOpRegistry>();
  if (ge::CustomOpRegistryBuilder::AddCreatorsFromSoHandles(m.handles, m.registry) != ge::SUCCESS) {
    m.error = "CustomOpRegistryBuilder::AddCreatorsFromSoHandles failed";
    return m;
  }
  if (m.registry->LoadCustomOpsPartition(partition.data(), partition.size()) != ge::GRAPH_SUCCESS) {
    m.error = "CustomOpRegistry::LoadCustomOpsPartition failed";
    return m;
  }
  for (const std::string &name : used) {
    const ge::AscendString type(name.c_str());
    if (!m.registry->HasCreator(type) || !m.registry->HasCustomOp(type)) {
      m.error = "the model uses " + name + " but its registry holds no deserialized instance of it (creator: " +
                std::string(m.registry->HasCreator(type) ? "yes" : "no") + ")";
      return m;
    }
  }
  return m;
}

// Where the copy's code was loaded from (dladdr of its own GetRegisteredCustomOpCreators, as
// the library's core asks of its own code), and what /proc says that file is.
inline std::pair<std::string, std::string> CopyLocation(void *library) {
  void *symbol = library == nullptr ? nullptr : dlsym(library, "GetRegisteredCustomOpCreators");
  Dl_info info;
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {"", ""};
  char target[4096] = {0};
  const ssize_t n = readlink(info.dli_fname, target, sizeof(target) - 1);
  return {info.dli_fname, n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string()};
}

}  // namespace om_loader

#endif  // TF_GE_CUSTOM_GE_IN_LOOP_OM_LOADER_H_
