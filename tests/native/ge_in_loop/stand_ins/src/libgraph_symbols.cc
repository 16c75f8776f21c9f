// STAND-IN for the few libgraph symbols GE's eager_op_execution_context.cc and
// op_compile_context.cc reach (libgraph is a closed binary of the toolkit). None pretends to
// be libgraph:
//   - OperatorFactory::CreateOperator returns an empty Operator (no op prototypes are
//     registered here), so MallocOutputTensor finds no OpDesc and SKIPS its output-name check
//     (an output named like an input is refused there on a real toolkit): NOT EXERCISED.
//   - the OpDesc members behind that check and GetOpDescFromOperator are then never called;
//     each aborts naming itself if it ever is, so a change in GE's sources shows up here.
//   - ArgsFormatDesc::Parse / Serialize (args_format_desc_utils.cc's string forms of an
//     argument format, which need an OpDesc) abort if called: the annotated-args code built
//     here appends descriptors, never parses one.
//   - OperatorFactoryImpl::RemoveCustomOpCreators (custom_op_registry.cc removing the REG_OP
//     creators of removed custom ops) does nothing: no REG_OP prototypes exist here.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/args_format_desc.h"
#include "graph/op_desc.h"
#include "graph/operator_factory.h"
#include "graph/operator_factory_impl.h"
#include "graph/utils/op_desc_utils.h"

namespace {
[[noreturn]] void NotExpected(const char *what) {
  std::fprintf(stderr, "[libgraph stand-in] %s called: this stand-in does not implement it\n", what);
  std::abort();
}
}  // namespace

namespace ge {

Operator OperatorFactory::CreateOperator(const char_t *const, const char_t *const) { return Operator(); }

bool Operator::IsEmpty() const { return true; }

OpDescPtr OpDescUtils::GetOpDescFromOperator(const Operator &) { NotExpected("OpDescUtils::GetOpDescFromOperator"); }

std::string OpDesc::GetOutputNameByIndex(uint32_t) const { NotExpected("OpDesc::GetOutputNameByIndex"); }
std::string OpDesc::GetInputNameByIndex(uint32_t) const { NotExpected("OpDesc::GetInputNameByIndex"); }
int32_t OpDesc::GetInputIndexByName(const std::string &) const { NotExpected("OpDesc::GetInputIndexByName"); }

void OperatorFactoryImpl::RemoveCustomOpCreators(const std::vector<std::string> &) {}

graphStatus ArgsFormatDesc::Parse(const OpDescPtr &, const std::string &, std::vector<ArgDesc> &, const bool) {
  NotExpected("ArgsFormatDesc::Parse");
}
std::string ArgsFormatDesc::Serialize(const std::vector<ArgDesc> &) { NotExpected("ArgsFormatDesc::Serialize"); }

}  // namespace ge
