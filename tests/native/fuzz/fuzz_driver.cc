// A bounded, deterministic mutation fuzzer for gcc (no libFuzzer needed):
//   tf_ge_custom_fuzz [--iterations N] [--seed S] [--max-seconds T]   (N and T per target)
// Seeds are real serialized kernels and manifests; mutations flip bits, overwrite bytes and
// length fields with edge values, cut, splice and insert. Half of the mutated bundles get
// their length and checksum fixed again, so the body parser behind them is reached too.
// Ends with "N passed, 0 failed" (one per target) unless a sanitizer or property aborted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fuzz_targets.h"
#include "test_support.h"
#include "tf_ge_custom_core/bundle.h"
#include "tf_ge_custom_core/kernel_registry.h"
#include "tf_ge_custom_core/sha256.h"

#ifndef TF_GE_CUSTOM_LIBFUZZER
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Mutate(const Bytes &seed, const std::vector<Bytes> &corpus, std::mt19937_64 &rng) {
  Bytes b = seed;
  const int rounds = 1 + static_cast<int>(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    const size_t n = b.size();
    switch (rng() % 8) {
      case 0:  // flip a bit
        if (n) b[rng() % n] ^= static_cast<uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // random byte
        if (n) b[rng() % n] = static_cast<uint8_t>(rng());
        break;
      case 2: {  // an edge value over a little-endian field
        static const uint64_t kEdges[] = {0, 1, 0x7F, 0x80, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000ull, 0xFFFFFFFFull,
                                          0x100000000ull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull};
        const int width = 1 << (rng() % 4);
        if (n >= static_cast<size_t>(width)) {
          const size_t at = rng() % (n - width + 1);
          const uint64_t v = kEdges[rng() % (sizeof(kEdges) / sizeof(kEdges[0]))];
          for (int i = 0; i < width; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
        }
        break;
      }
      case 3:  // cut
        if (n) b.resize(rng() % n);
        break;
      case 4: {  // insert random bytes
        const size_t at = n ? rng() % (n + 1) : 0;
        Bytes ins(1 + rng() % 16);
        for (auto &x : ins) x = static_cast<uint8_t>(rng());
        b.insert(b.begin() + at, ins.begin(), ins.end());
        break;
      }
      case 5: {  // erase a range
        if (n) {
          const size_t at = rng() % n;
          b.erase(b.begin() + at, b.begin() + std::min(n, at + 1 + rng() % 32));
        }
        break;
      }
      case 6: {  // splice another corpus entry
        const Bytes &o = corpus[rng() % corpus.size()];
        if (!o.empty()) {
          const size_t from = rng() % o.size();
          const size_t at = n ? rng() % n : 0;
          b.resize(at);
          b.insert(b.end(), o.begin() + from, o.end());
        }
        break;
      }
      default: {  // duplicate a range (JSON: repeated keys / members)
        if (n > 2) {
          const size_t at = rng() % n, len = 1 + rng() % std::min<size_t>(64, n - at);
          Bytes copy(b.begin() + at, b.begin() + at + len);
          b.insert(b.begin() + at, copy.begin(), copy.end());
        }
      }
    }
  }
  return b;
}

void Reseal(Bytes *b) {
  using namespace tf_ge_custom::core;
  if (b->size() < kBundleHeaderBytes + kBundleTrailerBytes) return;
  const uint64_t body = b->size() - kBundleHeaderBytes - kBundleTrailerBytes;
  for (int i = 0; i < 8; ++i) (*b)[16 + i] = static_cast<uint8_t>(body >> (8 * i));
  const auto d = Sha256Digest(b->data(), b->size() - kBundleTrailerBytes);
  std::memcpy(b->data() + b->size() - kBundleTrailerBytes, d.data(), d.size());
}

Bytes ToBytes(const std::string &s) { return Bytes(s.begin(), s.end()); }

}  // namespace

int main(int argc, char **argv) {
  uint64_t iterations = 20000, seed = 1;
  double max_seconds = 60;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iterations")) iterations = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (!std::strcmp(argv[i], "--max-seconds")) max_seconds = std::strtod(argv[i + 1], nullptr);
  }
  using test_support::KernelSpec;
  KernelSpec f32, f16, ir, row, col, outer;
  f16.dtype = "float16";
  f16.has_ffts = false;
  ir.dtype = "int32";
  ir.has_binary = false;
  row.variant = "row_16x256";
  col.variant = "col_128x32";
  col.has_ffts = false;
  outer.variant = "outer_1x4096";
  outer.dtype = "bfloat16";
  // Seeds with each layout kind (flat and scalar counts, tiled extents and strides) and
  // every pattern, kept small: each iteration parses and checks the whole seed.
  KernelSpec scalar, wide;
  scalar.variant = "scalar";
  wide.variant = "row_1x4096";
  wide.dtype = "int32";
  const std::string a2 = test_support::ManifestJson("Ascend910B1", {f32, f16, ir, row, col, outer});
  const std::string a3 = test_support::ManifestJson("Ascend910_9392", {f32, scalar, wide});
  test_support::TempDir opp;
  test_support::WriteOppKernels(opp, "Ascend910B1", {f32, row});
  test_support::WriteOppKernels(opp, "Ascend910_9392", {scalar, col});
  auto serialized = tf_ge_custom::core::KernelRegistry::FromOppRoot(opp.path())->Serialize();
  if (!serialized.ok()) {
    std::fprintf(stderr, "cannot build the seed bundle: %s\n", serialized.status().ToString().c_str());
    return 2;
  }
  const std::vector<Bytes> bundle_seeds = {serialized.value()};
  const std::vector<Bytes> text_seeds = {ToBytes(a2), ToBytes(a3)};

  struct Target {
    const char *name;
    bool (*fn)(const uint8_t *, size_t);
    const std::vector<Bytes> *seeds;
    bool reseal;
  };
  const Target targets[] = {{"bundle", fuzz::FuzzBundle, &bundle_seeds, true},
                            {"manifest", fuzz::FuzzManifest, &text_seeds, false}};
  int passed = 0;
  for (const Target &t : targets) {
    // The time limit is each target's: a slow first target leaves the next its full share.
    const auto start = std::chrono::steady_clock::now();
    std::mt19937_64 rng(seed);
    uint64_t accepted = 0, done = 0;
    for (const auto &s : *t.seeds) {
      if (!t.fn(s.data(), s.size())) {
        std::fprintf(stderr, "the %s seed is refused\n", t.name);
        return 2;
      }
    }
    for (; done < iterations; ++done) {
      Bytes input = Mutate((*t.seeds)[rng() % t.seeds->size()], *t.seeds, rng);
      if (t.reseal && rng() % 2) Reseal(&input);
      accepted += t.fn(input.data(), input.size()) ? 1 : 0;
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (elapsed > max_seconds) break;
    }
    std::printf("fuzz %s: %llu inputs, %llu accepted, no crash\n", t.name, static_cast<unsigned long long>(done),
                static_cast<unsigned long long>(accepted));
    ++passed;
  }
  std::printf("%d passed, 0 failed\n", passed);
  return 0;
}
#endif
