// tf_ge_custom_manifest_check MANIFEST [--check-files]
//
// Reads a kernel manifest with the C++ reader the GE library uses and prints one JSON line
//   {"valid": bool, "kind": str|null, "normalized": str|null}
// (normalized: the document as json.dumps(doc, sort_keys=True, separators=(",", ":")) prints
// it), so that a test can hold it against the Python reader over the shared fixtures. The
// refusal message goes to stderr. Exit status: 0 valid, 1 refused, 2 usage.
//
// tf_ge_custom_manifest_check --json FILE  does the same for any JSON text (no manifest
// rules), so tests can hold the JSON reader itself against Python's json module.
#include <cstring>
#include <iostream>

#include "tf_ge_custom_core/files.h"
#include "tf_ge_custom_core/json.h"
#include "tf_ge_custom_core/manifest.h"

int main(int argc, char **argv) {
  using namespace tf_ge_custom::core;
  std::string path;
  bool check_files = false, plain_json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      plain_json = true;
    } else if (std::strcmp(argv[i], "--check-files") == 0) {
      check_files = true;
    } else if (path.empty() && argv[i][0] != '-') {
      path = argv[i];
    } else {
      path.clear();
      break;
    }
  }
  if (path.empty()) {
    std::cerr << "usage: " << argv[0] << " MANIFEST [--check-files] | --json FILE\n";
    return 2;
  }
  if (plain_json) {
    std::vector<uint8_t> bytes;
    Status st = ReadFileBytes(path, 64u << 20, &bytes);
    JsonValue doc;
    if (st.ok()) st = ParseJson(std::string(bytes.begin(), bytes.end()), &doc);
    if (!st.ok()) {
      std::cerr << st.message() << "\n";
      std::cout << "{\"valid\":false,\"kind\":" << QuoteJsonString(st.kind()) << ",\"normalized\":null}\n";
      return 1;
    }
    std::cout << "{\"valid\":true,\"kind\":null,\"normalized\":" << QuoteJsonString(DumpNormalized(doc)) << "}\n";
    return 0;
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
