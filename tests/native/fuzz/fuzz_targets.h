// Fuzz targets: each takes arbitrary bytes, must never crash, read out of bounds or hit
// undefined behaviour (the driver runs under ASan/UBSan), and checks a round-trip property
// on whatever it accepts (a violated property aborts).
#ifndef TF_GE_CUSTOM_FUZZ_FUZZ_TARGETS_H_
#define TF_GE_CUSTOM_FUZZ_FUZZ_TARGETS_H_

#include <cstddef>
#include <cstdint>

namespace fuzz {

// Returns true when the input was accepted.
bool FuzzBundle(const uint8_t *data, size_t size);    // DecodeBundle + KernelRegistry::FromSerialized
bool FuzzManifest(const uint8_t *data, size_t size);  // ParseManifest, then LaunchPlan + PackHostArgs

}  // namespace fuzz

#endif  // TF_GE_CUSTOM_FUZZ_FUZZ_TARGETS_H_
