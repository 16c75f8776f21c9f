// The graph's own SoC as GE's context holds it: the option ge.socVersion of
// ge::GetContext(), which GE's custom-op task generator reads right before it calls
// DeclareLaunchArgs (hicann/ge compiler/engines/custom_engine/custom_ops_kernel_builder.cc, both
// tags; the key is ge::SOC_VERSION of inc/graph_metadef/external/ge_common/ge_common_api_types.h).
//
// GEContext is libgraph's (inc/graph_metadef/graph/ge_context.h). Where a toolkit's include
// folders hold that header it is used; where they do not, the one member called is declared
// here as libgraph exports it (GEContext::GetOption(const std::string &, std::string &) and
// ge::GetContext()), so the library links against the same symbols either way.
// TF_GE_CUSTOM_GE_CONTEXT_HEADER=0 forces the declaration (tests/ge/test_cann_sources.py
// compile-checks both).
#ifndef TF_GE_CUSTOM_CANN_GE_CONTEXT_OPTION_H_
#define TF_GE_CUSTOM_CANN_GE_CONTEXT_OPTION_H_

#include <string>

#include "graph/error_codes.h"

#if !defined(TF_GE_CUSTOM_GE_CONTEXT_HEADER)
#if __has_include("graph/ge_context.h")
#define TF_GE_CUSTOM_GE_CONTEXT_HEADER 1
#else
#define TF_GE_CUSTOM_GE_CONTEXT_HEADER 0
#endif
#endif

#if TF_GE_CUSTOM_GE_CONTEXT_HEADER
#include "graph/ge_context.h"
#else
namespace ge {
class GEContext {
 public:
  graphStatus GetOption(const std::string &key, std::string &option);
};
GEContext &GetContext();
}  // namespace ge
#endif

namespace tf_ge_custom {
namespace cann {

// GE's option key of the graph's SoC (ge::SOC_VERSION). A constant, not a function-local
// static string: that would be an STB_GNU_UNIQUE object, which keeps a model's copy of the
// library loaded after the model leaves (docs/ge-library.md, "The copy leaves with its model").
constexpr const char kSocVersionOptionKey[] = "ge.socVersion";

// *soc = the graph context's ge.socVersion; false when GE has none set. key holds
// kSocVersionOptionKey: the caller keeps it, as a fresh std::string allocates with the
// pre-C++11 string ABI.
inline bool GeContextSoc(const std::string &key, std::string *soc) {
  return ge::GetContext().GetOption(key, *soc) == ge::GRAPH_SUCCESS && !soc->empty();
}

}  // namespace cann
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CANN_GE_CONTEXT_OPTION_H_
