// The element-wise sum AddCustom computes: x + y, bit for bit what tf.raw_ops.AddV2(x, y)
// gives on the CPU, NaN sign and payload included (docs/tensorflow-op.md, "NaN bits").
//
// When an operand is a NaN, the hardware's add passes one of them on: on x86 (SSE and AVX)
// the NaN of the instruction's first source, quieted. A C++ `a + b`, and Eigen's padd(a, b),
// leave the compiler free to swap the two sources (addition commutes for numbers, not for NaN
// bits), and TensorFlow's wheel and this library are built by different compilers that swap
// in different places: tf.math.add's kernel passes x's NaN on, Eigen's scalar_sum_op compiled
// here passed y's on wherever the compiler chose so. So the NaN of x is passed on explicitly:
// where x is a NaN the result is x + x (x quieted, its sign and payload kept, whichever source
// the compiler puts first), elsewhere x + y (a NaN there is y's, or the default NaN of inf - inf).
//
// float16 is added in float, as Eigen::half's operator+ does; the float NaN is narrowed keeping
// its sign and the top 10 bits of its payload, as the F16C conversion (vcvtps2ph) that
// TensorFlow's x86 wheel uses does, where Eigen's portable conversion, used when this library
// is compiled without F16C, gives the one NaN 0x7e00. Numbers round to nearest even, as both
// conversions do. bfloat16 and the integer types use Eigen's own sum (bfloat16 NaN bits differ
// between TensorFlow's own kernel paths, so there are none to match).
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_SUM_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_SUM_H_

#include <cstdint>
#include <cstring>

#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {
namespace functor {

// x + y passing x's NaN on first, for float and double (vectorised with Eigen's packets).
template <typename T>
struct SumKeepingXNaN {
  EIGEN_STRONG_INLINE T operator()(const T& x, const T& y) const { return x != x ? x + x : x + y; }
  template <typename Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& x, const Packet& y) const {
    using namespace Eigen::internal;  // NOLINT: Eigen's packet primitives
    // pcmp_eq(x, x): all ones where x is a number; pselect(mask, a, b): mask ? a : b
    return pselect(pcmp_eq(x, x), padd(x, y), padd(x, x));
  }
};

// float16: in float as above, narrowed keeping the NaN's sign and payload.
struct HalfSumKeepingNaN {
  EIGEN_STRONG_INLINE Eigen::half operator()(const Eigen::half& x, const Eigen::half& y) const {
    const float a = static_cast<float>(x), b = static_cast<float>(y);  // exact, NaN bits kept
    const float sum = a != a ? a + a : a + b;
    if (sum == sum) return Eigen::half(sum);  // round to nearest even
    uint32_t bits;
    std::memcpy(&bits, &sum, sizeof(bits));
    // sign, all-ones exponent, the float mantissa's top 10 bits (its quiet bit set)
    const uint16_t narrowed = static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7e00u | ((bits >> 13) & 0x03ffu));
    Eigen::half out;
    static_assert(sizeof(out) == sizeof(narrowed), "Eigen::half is 2 bytes");
    std::memcpy(&out, &narrowed, sizeof(out));
    return out;
  }
};

// The sum for T: the two above for the floating types whose NaN bits AddV2 pins, else Eigen's.
template <typename T>
struct SumFor {
  using type = Eigen::internal::scalar_sum_op<T, T>;
};
template <>
struct SumFor<float> {
  using type = SumKeepingXNaN<float>;
};
template <>
struct SumFor<double> {
  using type = SumKeepingXNaN<double>;
};
template <>
struct SumFor<Eigen::half> {
  using type = HalfSumKeepingNaN;
};

}  // namespace functor
}  // namespace tf_ge_custom

namespace Eigen {
namespace internal {

template <typename T>
struct functor_traits<::tf_ge_custom::functor::SumKeepingXNaN<T>> {
  enum {
    // scalar_sum_op's cost, so that the thread pool shards the work as for tf.math.add
    // (the compare and blend ride along with the loads and stores of a memory-bound loop)
    Cost = NumTraits<T>::AddCost,
    PacketAccess = packet_traits<T>::HasAdd,
  };
};

template <>
struct functor_traits<::tf_ge_custom::functor::HalfSumKeepingNaN> {
  // scalar_sum_op<half>'s cost; scalar, as Eigen's own half sum is in a build without F16C
  enum { Cost = NumTraits<Eigen::half>::AddCost, PacketAccess = false };
};

}  // namespace internal
}  // namespace Eigen

#endif  // TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_SUM_H_
