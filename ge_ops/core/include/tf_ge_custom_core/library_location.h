// Finding the OPP root from the GE library's own file (dladdr), never from the CWD.
#ifndef TF_GE_CUSTOM_CORE_LIBRARY_LOCATION_H_
#define TF_GE_CUSTOM_CORE_LIBRARY_LOCATION_H_

#include <string>

#include "tf_ge_custom_core/status.h"

namespace tf_ge_custom {
namespace core {

// Path of the loaded file (library or executable) that holds address.
Result<std::string> FileContaining(const void *address);

// <root>/op_graph/lib/<os>/<arch>/<library>.so -> <root>; refuses any other place.
Result<std::string> OppRootFromLibraryPath(const std::string &library_path);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_LIBRARY_LOCATION_H_
