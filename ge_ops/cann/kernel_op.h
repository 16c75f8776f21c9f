// A GE custom op that runs one of this package's Triton kernels: the thin adapter between
// GE's custom-op interfaces and the CANN-free core, which makes every decision.
//
// GE creates one instance per op type and shares it between all nodes and threads, so
// the only state (which kernels to use, what Compile chose) sits behind a mutex.
#ifndef TF_GE_CUSTOM_CANN_KERNEL_OP_H_
#define TF_GE_CUSTOM_CANN_KERNEL_OP_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/custom_op.h"
#include "tf_ge_custom_core/declared_launch.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/kernel_supply.h"
#include "tf_ge_custom_core/model_kernels.h"
#include "tf_ge_custom_core/op_definition.h"
#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace cann {

class KernelOp : public ge::EagerExecuteOp,
                 public ge::ShapeInferOp,
                 public ge::PortableOp,
                 public ge::CompilableOp,
                 public ge::AnnotatedArgsOp {
 public:
  explicit KernelOp(const char *op_type);

  // While GE builds a graph (online, and ATC offline for --soc_version): the target SoC from
  // GetPlatformInfos (and its vector-core count, which caps the programs DeclareLaunchArgs
  // declares), the input dtypes, then the package's npubins, else the per-user cache, else a
  // compile on this host (core::PrepareKernel); Execute and Serialize use the choice, and
  // Serialize names the node.
  ge::graphStatus Compile(gert::OpCompileContext *ctx) override;

  // Reads the op's own inputs, checks their dtypes (GE does not), takes their shapes (broadcast
  // only where the op broadcasts) and picks the kernel variant (core::PrepareCall), takes the
  // node's attributes as the kernel's attribute words (their defaults where the node has none:
  // core::SetAttrWords; on HEAD's OM2 path, whose node-info block has no attribute area, the
  // words Compile recorded for the node: core/node_attrs.h), allocates the output, then
  // launches the kernel for the current SoC and dtype (core::LaunchKernels).
  ge::graphStatus Execute(gert::EagerOpExecutionContext *ctx) override;
  // Static graphs (GE sinks them): when GE builds the model, declares the launch Execute would
  // make for the node's static shapes (core::DeclareLaunch: the kernel of the SoC GE's graph
  // context names, its bytes, block dim and argument words), so that GE runs it as a task of the
  // model, refreshes its addresses itself and inserts no copies (docs/ge-library.md, "Sunk
  // static graphs"). Dynamic graphs still run Execute.
  ge::graphStatus DeclareLaunchArgs(gert::AnnotatedArgsContext &ctx) override;
  // The output takes the inputs' broadcast shape where the op broadcasts (tf.math.add's rules),
  // else their one shape, with GE's unknown dims and rank (core::InferOutputShape), and the
  // first input's dtype; incompatible shapes and differing dtypes are refused.
  ge::graphStatus InferShape(gert::InferShapeContext *ctx) override;
  ge::graphStatus InferDataType(gert::InferDataTypeContext *ctx) override;
  // What Compile chose (npubins compiled on this host included, and the boards it served with
  // another SoC's kernels), or every SoC's kernels when Compile chose nothing, so an OM runs
  // without this package or the cache on disk, on the board it was built for.
  ge::graphStatus Serialize(std::vector<uint8_t> &buffer) override;
  // GE's OM loader gives every model a fresh instance of the model's own copy of this library
  // (no OPP root around it): the model's kernels alone. On an instance with kernels of its own
  // (HEAD's OM2 code deserializes every model into the one instance GE's factory holds) the
  // model's kernels join its registry, or, where they differ from it, serve that model's
  // nodes; a model is known by the sha256 of its bytes (core::ModelKernels).
  ge::graphStatus Deserialize(const std::vector<uint8_t> &buffer) override;

 private:
  // The kernels of the OPP root holding this library (with what Deserialize added), or, for a
  // library outside an OPP root, those Deserialize restored.
  core::Result<std::shared_ptr<core::KernelRegistry>> Registry();
  // The package's builder, run as a child process when a kernel must be compiled.
  std::shared_ptr<core::KernelSupply> Supply();
  // The refusal to stderr and to GE's error manager, with the op type, node and SoC (ge_report.h).
  ge::graphStatus Fail(const char *node, const core::Status &status, const std::string &soc = "") const;
  // The SoC DeclareLaunchArgs declares for: GE's graph context option ge.socVersion (what GE's
  // task generator reads), which must be one this instance compiled for; without it, the one
  // Compile targeted when it targeted one, else the only SoC the kernels have. *cores: that
  // SoC's vector cores from Compile's platform info (0: unknown).
  core::Result<std::string> DeclaredSoc(core::KernelRegistry &registry, int64_t *cores);

  const char *op_type_;
  const core::OpDefinition *op_;
  std::mutex mutex_;
  std::shared_ptr<core::KernelRegistry> registry_;
  std::string opp_root_;
  std::shared_ptr<core::KernelSupply> supply_;
  std::string compiled_soc_;  // Compile's last target (DeclaredSoc)
  // Every SoC Compile targeted, with its vector cores from the platform info (0: not said).
  std::map<std::string, int64_t> compiled_socs_;
  core::ModelKernels models_;  // models whose kernels differ from the registry's
};

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_KERNEL_OP_H_
