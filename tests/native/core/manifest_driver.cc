// tf_ge_custom_manifest_driver: the GE core's verdict on each manifest file it is given, as
// JSON, so that tests/ge/test_manifest_rules.py holds it and the Python reader to the same
// list of manifests (kernel_contract.py's MANIFEST_FIELDS). Built by the tests only.
//
//   tf_ge_custom_manifest_driver FILE...
// One line per file: {"path": FILE, "ok": true} or {"path": FILE, "ok": false, "code": <Code>,
// "message": ...}. The binaries are not read (ManifestCheck with no folder): the rules are
// about the manifest's own fields.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "tf_ge_custom_core/manifest.h"

using namespace tf_ge_custom::core;
using Json = nlohmann::json;

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " FILE...\n";
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << "cannot read " << argv[i] << "\n";
      return 2;
    }
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto parsed = ParseManifest(text, ManifestCheck());
    Json out = {{"path", argv[i]}, {"ok", parsed.ok()}};
    if (!parsed.ok()) {
      out["code"] = CodeName(parsed.status().code());
      out["message"] = parsed.status().message();
    }
    std::cout << out.dump(-1, ' ', true, Json::error_handler_t::replace) << "\n";
  }
  return 0;
}
