// SHA-256 (FIPS 180-4), self-contained so the GE library needs no crypto library at dlopen.
#ifndef TF_GE_CUSTOM_CORE_SHA256_H_
#define TF_GE_CUSTOM_CORE_SHA256_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tf_ge_custom {
namespace core {

class Sha256 {
 public:
  Sha256();
  void Update(const void *data, size_t size);
  std::array<uint8_t, 32> Finish();  // the object is spent afterwards

 private:
  void Block(const uint8_t *block);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::array<uint8_t, 32> Sha256Digest(const void *data, size_t size);
std::string Sha256Hex(const void *data, size_t size);  // 64 lowercase hex digits
std::string ToHex(const uint8_t *data, size_t size);

}  // namespace core
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_CORE_SHA256_H_
