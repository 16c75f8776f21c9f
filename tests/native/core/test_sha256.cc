// SHA-256 against the FIPS 180-4 / NIST example digests.
#include "testing.h"
#include "tf_ge_custom_core/sha256.h"

using tf_ge_custom::core::Sha256;
using tf_ge_custom::core::Sha256Hex;
using tf_ge_custom::core::ToHex;

TEST(Sha256, MatchesNistVectors) {
  CHECK_EQ(Sha256Hex("", 0), std::string("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  CHECK_EQ(Sha256Hex("abc", 3), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
           std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  const std::string million(1000000, 'a');
  CHECK_EQ(Sha256Hex(million.data(), million.size()),
           std::string("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

TEST(Sha256, PiecewiseUpdatesEqualOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 31));
  const std::string whole = Sha256Hex(data.data(), data.size());
  for (size_t piece : {1u, 3u, 55u, 56u, 63u, 64u, 65u, 129u}) {
    Sha256 h;
    for (size_t at = 0; at < data.size(); at += piece) h.Update(data.data() + at, std::min(piece, data.size() - at));
    const auto d = h.Finish();
    CHECK_EQ(ToHex(d.data(), d.size()), whole);
  }
}
