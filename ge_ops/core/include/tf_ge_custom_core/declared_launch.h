// The declared launch: what AnnotatedArgsOp::DeclareLaunchArgs hands GE for a node whose
// shapes are static (docs/ge-library.md, "Sunk static graphs"). GE turns it into a
// custom-kernel task of its model, writes the node's current addresses into the address
// words itself whenever they change, and never calls this library at run time.
//
// The argument words are the packed struct that Execute launches with (PackHostArgs, from
// the same launch plan and the same values), cut into the 8-byte words GE's annotated
// arguments are made of; the words holding the operands' and workspace's addresses are
// marked as such, every other word is a plain value carrying exactly the struct's bytes
// (two 4-byte scalars share a word where the struct has them side by side). So the two
// paths cannot disagree on a single byte: the native tests lay the words end to end and
// compare them with the struct.
//
// What cannot be declared is refused when GE builds the graph, never launched wrong:
//  - a shape that needs more than one launch: each later launch's pointers are advanced into
//    the tensors, but GE fills an address word with the tensor's own address, so they cannot
//    be declared (the refusal names the shapes, the elements and the per-launch limit);
//  - a kernel whose load magic is not the vector core's: GE loads a declared kernel with the
//    node's TVM magic attribute, which defaults to the vector core and a custom op cannot set;
//  - a kernel with sync-block locks (lock_num > 0): their buffer must be refilled before every
//    launch, and a declaration has no step that could do it;
//  - an address slot that is not one whole, 8-byte-aligned word of the struct.
// The ffts word is declared as 0: it holds aclrtGetHardwareSyncAddr's value only for
// cross-core synchronisation, which a vector-core ("aiv") kernel does not do (the HIVM IR of
// every AddCustom variant never reads that argument; docs/ge-library.md has the evidence).
#ifndef TF_GE_CUSTOM_CORE_DECLARED_LAUNCH_H_
#define TF_GE_CUSTOM_CORE_DECLARED_LAUNCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/launch_plan.h"
#include "tf_ge_custom_core/manifest.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Bytes of one annotated argument (GE's AnnotatedKernelArgs appends 8-byte slots).
constexpr int64_t kArgWordSize = 8;

enum class ArgWordKind {
  kValue,      // the struct's 8 bytes, as they are (little-endian)
  kInput,      // the address of op input `index` (GE's InputAddr)
  kOutput,     // the address of op output `index` (OutputAddr)
  kWorkspace,  // the address of workspace `index` (WorkspaceAddr, from MallocWorkSpace)
};
const char *ArgWordKindName(ArgWordKind kind);  // "value", "input", "output", "workspace"

struct ArgWord {
  ArgWordKind kind = ArgWordKind::kValue;
  uint32_t index = 0;  // the op input / output / workspace, for the address kinds
  uint64_t value = 0;  // the word's bytes as a little-endian number (an address: the one declared)
};

// Which op tensor each address slot of the struct refers to.
struct ArgWordRefs {
  std::vector<uint32_t> inputs;   // [kernel operand] -> op input (KernelChoice::operands)
  std::vector<uint32_t> outputs;  // [kernel output] -> op output
  uint32_t workspace = 0;         // the workspace number of the workspace slot
  bool has_workspace = false;     // false: the workspace slot holds 0 (no workspace)
};

// Packs values as PackHostArgs does into *bytes, then cuts them into words (a last partial
// word padded with zeros, as triton-ascend's 8-byte-aligned struct is). Refuses an address
// slot (input, output, a non-null workspace) that is not exactly one aligned word.
// Reuses the lists' capacity.
Status PackArgWords(const ArgLayout &layout, const HostArgValues &values, const ArgWordRefs &refs,
                    std::vector<uint8_t> *bytes, std::vector<ArgWord> *words);

// The little-endian bytes of the words laid end to end (what GE copies to the device).
void WordBytes(const std::vector<ArgWord> &words, std::vector<uint8_t> *out);

// The part of the adapter a declaration needs: workspace from GE's annotated context.
class DeclarationRuntime {
 public:
  virtual ~DeclarationRuntime() = default;
  struct Workspace {
    uint32_t index = 0;
    uint64_t address = 0;
  };
  virtual Result<Workspace> AllocWorkspace(uint64_t bytes) = 0;
};

struct DeclaredLaunch {
  uint32_t block_dim = 0;
  std::vector<ArgWord> words;
};

struct LaunchDeclaration {
  KernelBinary kernel;             // entry name, verified bytes (GE copies them into the model)
  uint64_t workspace_bytes = 0;    // 0: none asked for
  std::vector<DeclaredLaunch> launches;  // exactly one today (see above)
  // Scratch the declaration reuses from call to call.
  LaunchPlan plan;
  Launch launch;
  HostArgValues values;
  ArgWordRefs refs;
  std::vector<uint8_t> bytes;  // the packed struct of launches[0]
};

// One kernel name, one binary, in every graph (docs/ge-library.md, "What a sunk graph can
// hold"). GE keeps one binary per kernel name in a model (its kernel store is a map by name,
// the last added wins: ge base/common/tbe_handle_store/kernel_store.cc) and launches the
// symbol of that name. No declaration can give a name a second binary, so none is checked
// here and nothing is shared between graph builds:
//  - a name belongs to one (op, variant, dtype): the op table gives every kernel its own
//    (tf_ge_custom_<op>_<variant>_<dtype>; the code generator refuses a table where two
//    collide), and both manifest readers refuse any other name and a name used twice;
//  - a graph is built for one SoC, and the registry's answer for (SoC, op, variant, dtype)
//    never changes once given (kernel_registry.h: kernel sets are only ever added, and only
//    for kernels it lacks).
// So a static graph holds every variant and dtype of the op together.

// The declaration for call (PrepareCall's choice, call.inputs/outputs the addresses GE's
// context gives) on soc. A call of 0 elements declares one launch of the flat kernel over 0
// elements with a grid of 1 (GE refuses a declaration without a launch; the kernel's loop
// runs no iteration). Refusals name the variant, the SoC, the dtype and, for a shape, the
// shapes. Reuses *out: no allocation once it has declared a call of that kernel.
// target_vector_cores: the vector cores of the SoC the graph is built for (Compile's platform
// info), which cap the programs of the launch as the running device's cap Execute's
// (ProgramCap); 0 when unknown: the manifest's max_programs.
Status DeclareLaunch(const KernelCall &call, const std::string &soc, KernelRegistry &registry,
                     DeclarationRuntime &runtime, LaunchDeclaration *out, int64_t target_vector_cores = 0);

// "[4096, 4096]"
std::string ShapeText(const std::vector<int64_t> &dims);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_DECLARED_LAUNCH_H_
