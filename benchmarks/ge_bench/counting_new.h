// The heap allocations and bytes counted so far by counting_new.cc's operator new.
#ifndef TF_GE_CUSTOM_BENCH_COUNTING_NEW_H_
#define TF_GE_CUSTOM_BENCH_COUNTING_NEW_H_

#include <cstdint>

namespace bench {
uint64_t CountedAllocations();
uint64_t CountedBytes();
}  // namespace bench

#endif  // TF_GE_CUSTOM_BENCH_COUNTING_NEW_H_
