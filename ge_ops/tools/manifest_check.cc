// tf_ge_custom_manifest_check MANIFEST [--check-files]
//
// Reads a kernel manifest with the C++ reader the GE library uses and prints one JSON line
//   {"valid": bool, "kind": str|null, "normalized": str|null}
// (normalized: the document as json.dumps(doc, sort_keys=True, separators=(",", ":")) prints
// it), so that a test can hold it against the Python reader over the shared fixtures. The
// refusal message goes to stderr. Exit status: 0 valid, 1 refused, 2 usage.
#include <cstring>
#include <iostream>

#include "tf_ge_custom_core/json.h"
#include "tf_ge_custom_core/manifest.h"

int main(int argc, char **argv) {
  using namespace tf_ge_custom::core;
  std::string path;
  bool check_files = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check-files") == 0) {
      check_files = true;
    } else if (path.empty() && argv[i][0] != '-') {
      path = argv[i];
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    std::cerr << "usage: " << argv[0] << " MANIFEST [--check-files]\n";
    return 2;
  }
  auto result = LoadManifest(path, check_files);
  if (result.ok()) {
    std::cout << "{\"valid\":true,\"kind\":null,\"normalized\":" << QuoteJsonString(result.value().Normalized())
              << "}\n";
    return 0;
  }
  std::cerr << result.status().message() << "\n";
  std::cout << "{\"valid\":false,\"kind\":" << QuoteJsonString(result.status().kind()) << ",\"normalized\":null}\n";
  return 1;
}
