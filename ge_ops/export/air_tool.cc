// tf_ge_custom_air_tool: a frozen TensorFlow GraphDef (.pb) to a GE graph saved as AIR.
//
//   tf_ge_custom_air_tool --model M.pb --output M.air [--input-shape "x:8,3;y:3"] [--out-nodes "z:0"]
//
// Parses the GraphDef with GE's TensorFlow parser (ge::aclgrphParseTensorFlow, header
// parser/tensorflow_parser.h, library fmk_parser), passing the input shapes and the output
// tensors as the parser options input_shape and out_nodes (ge::ir_option::INPUT_SHAPE /
// OUT_NODES, both in the parser's accepted set), and writes the graph with
// ge::Graph::SaveToFile. The parser loads the custom-op deliverables (our REG_OP proto and TF
// parser plugin) from ASCEND_CUSTOM_OPP_PATH, which `tf-ge-custom export` sets to the
// package's OPP root. `atc --framework=1` compiles the result. See docs/export.md.
//
// Exit status: 0 written, 1 the parser or SaveToFile failed, 2 bad arguments.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "ge/ge_api_types.h"
#include "graph/ascend_string.h"
#include "graph/graph.h"
#include "parser/tensorflow_parser.h"

namespace {

constexpr const char *kTag = "[tf-ge-custom air-tool]";

struct Options {
  std::string model;
  std::string output;
  std::string input_shape;
  std::string out_nodes;
};

int Usage(const char *argv0, const char *problem) {
  if (problem != nullptr) {
    std::fprintf(stderr, "%s %s\n", kTag, problem);
  }
  std::fprintf(stderr,
               "usage: %s --model M.pb --output M.air [--input-shape \"x:8,3;y:3\"] "
               "[--out-nodes \"node:0;node2:0\"]\n",
               argv0);
  return 2;
}

// Accepts "--name value" and "--name=value"; returns false (with *problem set) otherwise.
bool ParseArgs(int argc, char **argv, Options *options, std::string *problem) {
  const std::map<std::string, std::string *> flags = {{"--model", &options->model},
                                                      {"--output", &options->output},
                                                      {"--input-shape", &options->input_shape},
                                                      {"--out-nodes", &options->out_nodes}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const size_t eq = arg.find('=');
    bool has_value = false;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const auto flag = flags.find(arg);
    if (flag == flags.end()) {
      *problem = "unknown argument " + arg;
      return false;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *problem = arg + " needs a value";
        return false;
      }
      value = argv[++i];
    }
    *flag->second = value;
  }
  if (options->model.empty() || options->output.empty()) {
    *problem = "--model and --output are required";
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  std::string problem;
  if (!ParseArgs(argc, argv, &options, &problem)) {
    return Usage(argv[0], problem.c_str());
  }
  std::map<ge::AscendString, ge::AscendString> parser_params;
  if (!options.input_shape.empty()) {
    parser_params[ge::AscendString(ge::ir_option::INPUT_SHAPE)] = ge::AscendString(options.input_shape.c_str());
  }
  if (!options.out_nodes.empty()) {
    parser_params[ge::AscendString(ge::ir_option::OUT_NODES)] = ge::AscendString(options.out_nodes.c_str());
  }
  std::printf("%s parsing %s (input_shape \"%s\", out_nodes \"%s\")\n", kTag, options.model.c_str(),
              options.input_shape.c_str(), options.out_nodes.c_str());
  std::fflush(stdout);

  ge::Graph graph("tf_ge_custom_export");
  const ge::graphStatus parsed = ge::aclgrphParseTensorFlow(options.model.c_str(), parser_params, graph);
  if (parsed != ge::GRAPH_SUCCESS) {
    std::fprintf(stderr,
                 "%s aclgrphParseTensorFlow(%s) returned %u: GE's TensorFlow parser refused the graph "
                 "(its log above says why; an unknown AddCustom means ASCEND_CUSTOM_OPP_PATH lacks "
                 "the package's OPP root or the root lacks the parser plugin)\n",
                 kTag, options.model.c_str(), static_cast<unsigned>(parsed));
    return 1;
  }
  const ge::graphStatus saved = graph.SaveToFile(options.output.c_str());
  if (saved != ge::GRAPH_SUCCESS) {
    std::fprintf(stderr, "%s Graph::SaveToFile(%s) returned %u\n", kTag, options.output.c_str(),
                 static_cast<unsigned>(saved));
    return 1;
  }
  std::printf("%s wrote %s\n", kTag, options.output.c_str());
  return 0;
}
