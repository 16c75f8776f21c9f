#include "tf_ge_custom_core/bundle.h"

#include <cstring>

#include "tf_ge_custom_core/sha256.h"

namespace tf_ge_custom {
namespace core {
namespace {

void PutU(uint64_t v, int bytes, std::vector<uint8_t> *out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A cursor that can never read past the end: every read checks what is left first.
class Reader {
 public:
  Reader(const uint8_t *data, size_t size) : p_(data), left_(size) {}
  bool U(int bytes, uint64_t *v) {
    if (left_ < static_cast<size_t>(bytes)) return false;
    uint64_t r = 0;
    for (int i = 0; i < bytes; ++i) r |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += bytes;
    left_ -= static_cast<size_t>(bytes);
    *v = r;
    return true;
  }
  bool Bytes(uint64_t n, const uint8_t **start) {
    if (n > left_) return false;
    *start = p_;
    p_ += n;
    left_ -= static_cast<size_t>(n);
    return true;
  }
  size_t left() const { return left_; }

 private:
  const uint8_t *p_;
  size_t left_;
};

Status Corrupt(const std::string &what) {
  return Status::Error(Code::kCorrupt, "serialized AddCustom kernels are damaged: " + what +
                                           "; rebuild the model (OM) with this package installed");
}

}  // namespace

Result<std::vector<uint8_t>> EncodeBundle(const std::vector<BundleSoc> &socs, const std::vector<BundleServing> &serving,
                                          const std::vector<BundleNode> &nodes) {
  if (socs.size() > kMaxBundleSocs) return Status::Error(Code::kOversized, "too many SoCs to serialize");
  if (serving.size() > kMaxBundleServings) return Status::Error(Code::kOversized, "too many served boards to serialize");
  if (nodes.size() > kMaxBundleNodes) return Status::Error(Code::kOversized, "too many nodes to serialize");
  std::vector<uint8_t> out(kBundleMagic, kBundleMagic + sizeof(kBundleMagic));
  PutU(kBundleVersion, 4, &out);
  PutU(0, 4, &out);
  PutU(0, 8, &out);  // body size, patched below
  PutU(socs.size(), 4, &out);
  for (const auto &soc : socs) {
    if (soc.manifest_json.size() > kMaxManifestBytesInBundle || soc.binaries.size() > kMaxBinariesPerSoc) {
      return Status::Error(Code::kOversized, "a manifest or its binary list is too large to serialize");
    }
    PutU(soc.manifest_json.size(), 4, &out);
    out.insert(out.end(), soc.manifest_json.begin(), soc.manifest_json.end());
    PutU(soc.binaries.size(), 4, &out);
    for (const auto &b : soc.binaries) {
      if (b.name.empty() || b.name.size() > 255) return Status::Error(Code::kOversized, "binary name length out of range");
      PutU(b.name.size(), 2, &out);
      out.insert(out.end(), b.name.begin(), b.name.end());
      PutU(b.bytes.size(), 8, &out);
      out.insert(out.end(), b.bytes.begin(), b.bytes.end());
    }
    if (out.size() > kMaxBundleBytes) return Status::Error(Code::kOversized, "kernels exceed the serialized size limit");
  }
  PutU(serving.size(), 4, &out);
  for (const auto &s : serving) {
    for (const std::string *text : {&s.board, &s.op, &s.dtype, &s.soc}) {
      if (text->empty() || text->size() > 255) return Status::Error(Code::kOversized, "serving name length out of range");
      PutU(text->size(), 2, &out);
      out.insert(out.end(), text->begin(), text->end());
    }
  }
  PutU(nodes.size(), 4, &out);
  for (const auto &n : nodes) {
    for (const std::string *text : {&n.node, &n.op}) {
      if (text->empty() || text->size() > 0xFFFF) return Status::Error(Code::kOversized, "node name length out of range");
      PutU(text->size(), 2, &out);
      out.insert(out.end(), text->begin(), text->end());
    }
    if (n.attrs.size() > kMaxNodeAttrWords) {
      return Status::Error(Code::kOversized, "node " + n.node + " has " + std::to_string(n.attrs.size()) +
                                                 " attribute words, more than the " +
                                                 std::to_string(kMaxNodeAttrWords) + " a node may serialize");
    }
    PutU(n.attrs.size(), 4, &out);
    for (uint64_t w : n.attrs) PutU(w, 8, &out);
    if (out.size() > kMaxBundleBytes) return Status::Error(Code::kOversized, "kernels exceed the serialized size limit");
  }
  const uint64_t body = out.size() - kBundleHeaderBytes;
  for (int i = 0; i < 8; ++i) out[16 + i] = static_cast<uint8_t>(body >> (8 * i));
  const auto digest = Sha256Digest(out.data(), out.size());
  out.insert(out.end(), digest.begin(), digest.end());
  if (out.size() > kMaxBundleBytes) return Status::Error(Code::kOversized, "kernels exceed the serialized size limit");
  return out;
}

Status DecodeBundle(const uint8_t *data, size_t size, std::vector<BundleSoc> *out,
                    std::vector<BundleServing> *serving, std::vector<BundleNode> *nodes) {
  out->clear();
  if (serving != nullptr) serving->clear();
  if (nodes != nullptr) nodes->clear();
  if (size > kMaxBundleBytes) {
    return Status::Error(Code::kOversized, "serialized kernels of " + std::to_string(size) + " bytes exceed the limit of " +
                                               std::to_string(kMaxBundleBytes));
  }
  if (size < kBundleHeaderBytes + kBundleTrailerBytes) {
    return Status::Error(Code::kTruncated, "serialized kernels have " + std::to_string(size) + " bytes, fewer than the " +
                                               std::to_string(kBundleHeaderBytes + kBundleTrailerBytes) +
                                               " of an empty bundle; rebuild the model (OM)");
  }
  if (std::memcmp(data, kBundleMagic, sizeof(kBundleMagic)) != 0) {
    return Status::Error(Code::kBadMagic, "the serialized data is not tf-ge-custom kernels (wrong magic); rebuild the model");
  }
  Reader header(data + sizeof(kBundleMagic), kBundleHeaderBytes - sizeof(kBundleMagic));
  uint64_t version = 0, flags = 0, body = 0;
  header.U(4, &version);
  header.U(4, &flags);
  header.U(8, &body);
  if (version < 1 || version > kBundleVersion) {
    return Status::Error(Code::kBadVersion, "serialized kernels have format version " + std::to_string(version) +
                                                ", this library reads version " + std::to_string(kBundleVersion) +
                                                "; rebuild the model (OM) with this package version");
  }
  if (flags != 0) return Corrupt("unknown flags " + std::to_string(flags));
  const uint64_t expected_body = size - kBundleHeaderBytes - kBundleTrailerBytes;
  if (body != expected_body) {
    return Status::Error(body > expected_body ? Code::kTruncated : Code::kCorrupt,
                         "the header announces " + std::to_string(body) + " body bytes, the data holds " +
                             std::to_string(expected_body) + "; the serialized kernels were cut or padded");
  }
  const auto digest = Sha256Digest(data, size - kBundleTrailerBytes);
  if (std::memcmp(digest.data(), data + size - kBundleTrailerBytes, kBundleTrailerBytes) != 0) {
    return Corrupt("checksum mismatch");
  }
  Reader r(data + kBundleHeaderBytes, static_cast<size_t>(body));
  uint64_t soc_count = 0;
  if (!r.U(4, &soc_count)) return Corrupt("no SoC count");
  if (soc_count > kMaxBundleSocs) return Corrupt(std::to_string(soc_count) + " SoCs");
  std::vector<BundleSoc> socs;
  for (uint64_t s = 0; s < soc_count; ++s) {
    BundleSoc soc;
    uint64_t len = 0, count = 0;
    const uint8_t *bytes = nullptr;
    if (!r.U(4, &len) || len > kMaxManifestBytesInBundle || !r.Bytes(len, &bytes)) return Corrupt("bad manifest length");
    soc.manifest_json.assign(reinterpret_cast<const char *>(bytes), static_cast<size_t>(len));
    if (!r.U(4, &count) || count > kMaxBinariesPerSoc) return Corrupt("bad binary count");
    for (uint64_t b = 0; b < count; ++b) {
      BundleBinary bin;
      if (!r.U(2, &len) || len == 0 || !r.Bytes(len, &bytes)) return Corrupt("bad binary name length");
      bin.name.assign(reinterpret_cast<const char *>(bytes), static_cast<size_t>(len));
      if (!r.U(8, &len) || !r.Bytes(len, &bytes)) return Corrupt("a binary runs past the end");
      bin.bytes.assign(bytes, bytes + len);
      soc.binaries.push_back(std::move(bin));
    }
    socs.push_back(std::move(soc));
  }
  std::vector<BundleServing> served;
  if (version >= 2) {
    uint64_t count = 0;
    if (!r.U(4, &count) || count > kMaxBundleServings) return Corrupt("bad serving count");
    for (uint64_t i = 0; i < count; ++i) {
      BundleServing s;
      for (std::string *text : {&s.board, &s.op, &s.dtype, &s.soc}) {
        uint64_t len = 0;
        const uint8_t *bytes = nullptr;
        if (!r.U(2, &len) || len == 0 || !r.Bytes(len, &bytes)) return Corrupt("bad serving name length");
        text->assign(reinterpret_cast<const char *>(bytes), static_cast<size_t>(len));
      }
      served.push_back(std::move(s));
    }
  }
  std::vector<BundleNode> named;
  if (version >= 3) {
    uint64_t count = 0;
    if (!r.U(4, &count) || count > kMaxBundleNodes) return Corrupt("bad node count");
    for (uint64_t i = 0; i < count; ++i) {
      BundleNode n;
      for (std::string *text : {&n.node, &n.op}) {
        uint64_t len = 0;
        const uint8_t *bytes = nullptr;
        if (!r.U(2, &len) || len == 0 || !r.Bytes(len, &bytes)) return Corrupt("bad node name length");
        text->assign(reinterpret_cast<const char *>(bytes), static_cast<size_t>(len));
      }
      if (version >= 4) {
        uint64_t words = 0;
        if (!r.U(4, &words) || words > kMaxNodeAttrWords) return Corrupt("bad attribute word count of node " + n.node);
        n.attrs.resize(static_cast<size_t>(words));
        for (uint64_t &w : n.attrs) {
          if (!r.U(8, &w)) return Corrupt("node " + n.node + "'s attribute words run past the end");
        }
      }
      named.push_back(std::move(n));
    }
  }
  if (r.left() != 0) return Corrupt(std::to_string(r.left()) + " unexpected trailing bytes");
  *out = std::move(socs);
  if (serving != nullptr) *serving = std::move(served);
  if (nodes != nullptr) *nodes = std::move(named);
  return Status::Ok();
}

}  // namespace core
}  // namespace tf_ge_custom
