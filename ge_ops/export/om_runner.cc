// tf_ge_custom_om_runner: load an OM with ACL, run it once on raw inputs, write raw outputs.
//
//   tf_ge_custom_om_runner --model M.om --output-dir DIR [--device 0] [--dynamic-batch N]
//                          [--input x.bin] [--input y.bin] ...
//
// Inputs are the tensors' bytes (C order, little-endian), one file per model input in model
// order; `tf-ge-custom run-om` writes them from .npy files. Standard output is one JSON
// object per line, which run-om reads:
//   {"event":"model","inputs":2,"outputs":1,"dynamic_batch":false}
//   {"event":"input","index":0,"name":"x","dtype":"float32","dims":[8,3],"size":96}
//   {"event":"output","index":0,"name":"z","dtype":"float32","dims":[8,3],"size":96,"file":"DIR/output_0.bin"}
//   {"event":"done"}
// A model built with ATC's --dynamic_batch_size has one more input (ACL_DYNAMIC_TENSOR_NAME)
// that this program fills itself from --dynamic-batch; inputs may then be smaller than the
// largest batch's buffer. Failures go to stderr as one line naming the ACL call, its code
// and aclGetRecentErrMsg(); exit status 1 (2 for bad arguments).
//
// run-om starts it with ASCEND_CUSTOM_OPP_PATH removed: the OM must carry the AddCustom
// kernel itself (docs/export.md). Only the public ACL API (acl/acl.h) is used.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "acl/acl.h"

namespace {

constexpr const char *kTag = "[tf-ge-custom om-runner]";

struct Options {
  std::string model;
  std::string output_dir;
  std::vector<std::string> inputs;
  int32_t device = 0;
  long long dynamic_batch = 0;  // 0: not given
};

struct DtypeInfo {
  const char *name;
  size_t itemsize;
};

DtypeInfo Describe(aclDataType dtype) {
  switch (dtype) {
    case ACL_FLOAT: return {"float32", 4};
    case ACL_FLOAT16: return {"float16", 2};
    case ACL_BF16: return {"bfloat16", 2};
    case ACL_DOUBLE: return {"float64", 8};
    case ACL_INT8: return {"int8", 1};
    case ACL_UINT8: return {"uint8", 1};
    case ACL_INT16: return {"int16", 2};
    case ACL_UINT16: return {"uint16", 2};
    case ACL_INT32: return {"int32", 4};
    case ACL_UINT32: return {"uint32", 4};
    case ACL_INT64: return {"int64", 8};
    case ACL_UINT64: return {"uint64", 8};
    case ACL_BOOL: return {"bool", 1};
    default: return {"unsupported", 0};
  }
}

std::string JsonString(const std::string &text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonDims(const aclmdlIODims &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.dimCount && i < ACL_MAX_DIM_CNT; ++i) {
    out += (i ? "," : "") + std::to_string(dims.dims[i]);
  }
  return out + "]";
}

bool Fail(const char *call, aclError code, const std::string &context = "") {
  const char *recent = aclGetRecentErrMsg();
  std::fprintf(stderr, "%s %s%s%s returned %d%s%s\n", kTag, call, context.empty() ? "" : " ", context.c_str(),
               static_cast<int>(code), recent != nullptr ? ": " : "", recent != nullptr ? recent : "");
  return false;
}

bool ReadFile(const std::string &path, std::vector<char> *bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s cannot read input file %s: %s\n", kTag, path.c_str(), std::strerror(errno));
    return false;
  }
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

bool WriteFile(const std::string &path, const void *data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "%s cannot write %s\n", kTag, path.c_str());
    return false;
  }
  return true;
}

// Everything ACL hands out, released in reverse order whatever happens.
class Session {
 public:
  ~Session() {
    for (aclmdlDataset *dataset : {inputs_, outputs_}) {
      if (dataset == nullptr) continue;
      for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(dataset); ++i) {
        aclDataBuffer *buffer = aclmdlGetDatasetBuffer(dataset, i);
        (void)aclrtFree(aclGetDataBufferAddr(buffer));
        (void)aclDestroyDataBuffer(buffer);
      }
      (void)aclmdlDestroyDataset(dataset);
    }
    if (desc_ != nullptr) (void)aclmdlDestroyDesc(desc_);
    if (loaded_) (void)aclmdlUnload(model_id_);
    if (device_set_) (void)aclrtResetDevice(device_);
    if (initialized_) (void)aclFinalize();
  }

  bool Run(const Options &options);

 private:
  bool AddBuffer(aclmdlDataset *dataset, size_t size, const std::vector<char> *bytes, const std::string &what);

  bool initialized_ = false;
  bool device_set_ = false;
  bool loaded_ = false;
  int32_t device_ = 0;
  uint32_t model_id_ = 0;
  aclmdlDesc *desc_ = nullptr;
  aclmdlDataset *inputs_ = nullptr;
  aclmdlDataset *outputs_ = nullptr;
};

bool Session::AddBuffer(aclmdlDataset *dataset, size_t size, const std::vector<char> *bytes,
                        const std::string &what) {
  void *device_ptr = nullptr;
  aclError ret = aclrtMalloc(&device_ptr, size == 0 ? 1 : size, ACL_MEM_MALLOC_HUGE_FIRST);
  if (ret != ACL_SUCCESS) return Fail("aclrtMalloc", ret, what);
  aclDataBuffer *buffer = aclCreateDataBuffer(device_ptr, size);
  if (buffer == nullptr) {
    (void)aclrtFree(device_ptr);
    return Fail("aclCreateDataBuffer", ACL_ERROR_FAILURE, what);
  }
  ret = aclmdlAddDatasetBuffer(dataset, buffer);
  if (ret != ACL_SUCCESS) {
    (void)aclDestroyDataBuffer(buffer);
    (void)aclrtFree(device_ptr);
    return Fail("aclmdlAddDatasetBuffer", ret, what);
  }
  if (bytes != nullptr && !bytes->empty()) {
    ret = aclrtMemcpy(device_ptr, size, bytes->data(), bytes->size(), ACL_MEMCPY_HOST_TO_DEVICE);
    if (ret != ACL_SUCCESS) return Fail("aclrtMemcpy", ret, what);
  }
  return true;
}

bool Session::Run(const Options &options) {
  aclError ret = aclInit(nullptr);
  if (ret != ACL_SUCCESS) return Fail("aclInit", ret);
  initialized_ = true;
  device_ = options.device;
  ret = aclrtSetDevice(device_);
  if (ret != ACL_SUCCESS) return Fail("aclrtSetDevice", ret, std::to_string(device_));
  device_set_ = true;
  ret = aclmdlLoadFromFile(options.model.c_str(), &model_id_);
  if (ret != ACL_SUCCESS) return Fail("aclmdlLoadFromFile", ret, options.model);
  loaded_ = true;
  desc_ = aclmdlCreateDesc();
  if (desc_ == nullptr) return Fail("aclmdlCreateDesc", ACL_ERROR_FAILURE);
  ret = aclmdlGetDesc(desc_, model_id_);
  if (ret != ACL_SUCCESS) return Fail("aclmdlGetDesc", ret);

  const size_t num_inputs = aclmdlGetNumInputs(desc_);
  const size_t num_outputs = aclmdlGetNumOutputs(desc_);
  size_t batch_index = 0;
  const bool dynamic_batch = aclmdlGetInputIndexByName(desc_, ACL_DYNAMIC_TENSOR_NAME, &batch_index) == ACL_SUCCESS;
  std::printf("{\"event\":\"model\",\"inputs\":%zu,\"outputs\":%zu,\"dynamic_batch\":%s}\n",
              num_inputs - (dynamic_batch ? 1 : 0), num_outputs, dynamic_batch ? "true" : "false");
  const size_t data_inputs = num_inputs - (dynamic_batch ? 1 : 0);
  if (options.inputs.size() != data_inputs) {
    std::fprintf(stderr, "%s the model has %zu inputs, %zu input files were given\n", kTag, data_inputs,
                 options.inputs.size());
    return false;
  }
  if (dynamic_batch != (options.dynamic_batch > 0)) {
    std::fprintf(stderr, "%s %s\n", kTag,
                 dynamic_batch ? "the model has dynamic batch sizes: pass --dynamic-batch N"
                               : "--dynamic-batch was given, but the model has no dynamic batch");
    return false;
  }

  inputs_ = aclmdlCreateDataset();
  outputs_ = aclmdlCreateDataset();
  if (inputs_ == nullptr || outputs_ == nullptr) return Fail("aclmdlCreateDataset", ACL_ERROR_FAILURE);
  size_t next_file = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    const size_t size = aclmdlGetInputSizeByIndex(desc_, i);
    if (dynamic_batch && i == batch_index) {
      if (!AddBuffer(inputs_, size, nullptr, "for the dynamic batch input")) return false;
      continue;
    }
    aclmdlIODims dims{};
    (void)aclmdlGetInputDims(desc_, i, &dims);
    const char *name = aclmdlGetInputNameByIndex(desc_, i);
    const DtypeInfo dtype = Describe(aclmdlGetInputDataType(desc_, i));
    std::printf("{\"event\":\"input\",\"index\":%zu,\"name\":%s,\"dtype\":\"%s\",\"dims\":%s,\"size\":%zu}\n", i,
                JsonString(name != nullptr ? name : "").c_str(), dtype.name, JsonDims(dims).c_str(), size);
    std::vector<char> bytes;
    const std::string &path = options.inputs[next_file++];
    if (!ReadFile(path, &bytes)) return false;
    if (bytes.size() > size || (!dynamic_batch && bytes.size() != size)) {
      std::fprintf(stderr, "%s input %zu (%s): %s holds %zu bytes, the model expects %s%zu\n", kTag, i,
                   name != nullptr ? name : "", path.c_str(), bytes.size(), dynamic_batch ? "at most " : "", size);
      return false;
    }
    if (!AddBuffer(inputs_, size, &bytes, "for input " + std::to_string(i))) return false;
  }
  if (dynamic_batch) {
    ret = aclmdlSetDynamicBatchSize(model_id_, inputs_, batch_index, static_cast<uint64_t>(options.dynamic_batch));
    if (ret != ACL_SUCCESS) return Fail("aclmdlSetDynamicBatchSize", ret, std::to_string(options.dynamic_batch));
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    if (!AddBuffer(outputs_, aclmdlGetOutputSizeByIndex(desc_, i), nullptr, "for output " + std::to_string(i))) {
      return false;
    }
  }
  std::fflush(stdout);

  ret = aclmdlExecute(model_id_, inputs_, outputs_);
  if (ret != ACL_SUCCESS) return Fail("aclmdlExecute", ret, options.model);

  for (size_t i = 0; i < num_outputs; ++i) {
    aclmdlIODims dims{};
    ret = dynamic_batch ? aclmdlGetCurOutputDims(desc_, i, &dims) : aclmdlGetOutputDims(desc_, i, &dims);
    if (ret != ACL_SUCCESS) return Fail("aclmdlGetOutputDims", ret, std::to_string(i));
    const DtypeInfo dtype = Describe(aclmdlGetOutputDataType(desc_, i));
    const size_t capacity = aclmdlGetOutputSizeByIndex(desc_, i);
    size_t size = capacity;
    if (dtype.itemsize != 0) {  // the bytes the current dims hold (less than capacity for a smaller batch)
      size = dtype.itemsize;
      for (size_t d = 0; d < dims.dimCount && d < ACL_MAX_DIM_CNT; ++d) {
        size *= dims.dims[d] < 0 ? 0 : static_cast<size_t>(dims.dims[d]);
      }
      if (size > capacity) size = capacity;
    }
    std::vector<char> host(size);
    aclDataBuffer *buffer = aclmdlGetDatasetBuffer(outputs_, i);
    if (size != 0) {
      ret = aclrtMemcpy(host.data(), size, aclGetDataBufferAddr(buffer), size, ACL_MEMCPY_DEVICE_TO_HOST);
      if (ret != ACL_SUCCESS) return Fail("aclrtMemcpy", ret, "of output " + std::to_string(i));
    }
    const std::string file = options.output_dir + "/output_" + std::to_string(i) + ".bin";
    if (!WriteFile(file, host.data(), size)) return false;
    const char *name = aclmdlGetOutputNameByIndex(desc_, i);
    std::printf("{\"event\":\"output\",\"index\":%zu,\"name\":%s,\"dtype\":\"%s\",\"dims\":%s,\"size\":%zu,"
                "\"file\":%s}\n",
                i, JsonString(name != nullptr ? name : "").c_str(), dtype.name, JsonDims(dims).c_str(), size,
                JsonString(file).c_str());
  }
  std::printf("{\"event\":\"done\"}\n");
  std::fflush(stdout);
  return true;
}

int Usage(const char *argv0, const std::string &problem) {
  std::fprintf(stderr, "%s %s\nusage: %s --model M.om --output-dir DIR [--device N] [--dynamic-batch N] "
               "[--input FILE]...\n", kTag, problem.c_str(), argv0);
  return 2;
}

bool ParseInteger(const std::string &text, long long *value) {
  if (text.empty()) return false;
  char *end = nullptr;
  errno = 0;
  *value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && end != nullptr && *end == '\0' && *value >= 0;
}

}  // namespace

int main(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return Usage(argv[0], "missing value after " + arg);
    const std::string value = argv[++i];
    long long number = 0;
    if (arg == "--model") {
      options.model = value;
    } else if (arg == "--output-dir") {
      options.output_dir = value;
    } else if (arg == "--input") {
      options.inputs.push_back(value);
    } else if (arg == "--device") {
      if (!ParseInteger(value, &number) || number > INT32_MAX) return Usage(argv[0], "bad --device " + value);
      options.device = static_cast<int32_t>(number);
    } else if (arg == "--dynamic-batch") {
      if (!ParseInteger(value, &number) || number == 0) return Usage(argv[0], "bad --dynamic-batch " + value);
      options.dynamic_batch = number;
    } else {
      return Usage(argv[0], "unknown argument " + arg);
    }
  }
  if (options.model.empty() || options.output_dir.empty()) return Usage(argv[0], "--model and --output-dir are required");
  Session session;
  return session.Run(options) ? 0 : 1;
}
