// The element-wise sum AddCustom computes: x + y, bit for bit what tf.raw_ops.AddV2(x, y)
// gives on the CPU, NaN sign and payload included (docs/tensorflow-op.md, "NaN bits"). The
// kernel runs TensorFlow's own AddV2 wherever it can; this sum serves the shapes beyond AddV2's
// 5 broadcast dimensions, so it follows the rule AddV2 shows on the host's CPU.
//
// When an operand is a NaN, the hardware's add passes one of them on, by a rule per CPU:
// - x86 (SSE and AVX): the NaN of the instruction's first source, quieted; the default NaN
//   (inf - inf) is negative, 0xffc00000.
// - AArch64 (FADD with FPCR.DN = 0, as Linux runs it): a signalling NaN first (the first
//   operand's, then the second's), quieted, else the first quiet NaN; sign and payload kept;
//   the default NaN is positive, 0x7fc00000.
// A C++ `a + b`, and Eigen's padd(a, b), leave the compiler free to swap the two sources
// (addition commutes for numbers, not for NaN bits), and TensorFlow's wheel and this library
// are built by different compilers that swap in different places. So the NaN passed on is
// chosen explicitly, as tf.math.add's kernel passes it (x first): a chosen NaN v comes out as
// v + v (v quieted, its sign and payload kept, whichever source the compiler puts first);
// elsewhere x + y (at most one NaN operand there, or the default NaN of inf - inf).
//
// float16 is added in float, as Eigen::half's operator+ does, and the float NaN narrowed:
// - x86: keeping its sign and the top 10 bits of its payload, as the F16C conversion
//   (vcvtps2ph) that TensorFlow's x86 wheel uses does (Eigen's portable conversion, used when
//   this library is compiled without F16C, would give the one NaN 0x7e00);
// - AArch64: to the one quiet NaN 0x7e00 with the NaN's sign, as Eigen's portable conversion
//   does (without __ARM_FEATURE_FP16_SCALAR_ARITHMETIC, the armv8-a baseline both TensorFlow's
//   aarch64 wheel and this library are built for, Eigen::half converts in software). The
//   widening keeps a signalling NaN signalling, so the float rule above picks the NaN.
// Numbers round to nearest even everywhere. bfloat16 and the integer types use Eigen's own sum
// (bfloat16 NaN bits differ between TensorFlow's own kernel paths, so there are none to match).
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_SUM_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_SUM_H_

#include <cstdint>
#include <cstring>

#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {
namespace functor {

#if defined(__aarch64__)
constexpr bool kNaNRuleAArch64 = true;
#elif defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
constexpr bool kNaNRuleAArch64 = false;
#else
#error "tf_ops/add_custom_sum.h: the NaN rule is written for x86 and AArch64 only (docs/tensorflow-op.md, NaN bits)"
#endif

// x + y passing on the NaN the host's rule picks (above), for float and double (vectorised
// with Eigen's packets).
template <typename T>
struct SumKeepingXNaN {
  EIGEN_STRONG_INLINE T operator()(const T& x, const T& y) const {
    if (x == x) return x + y;  // y's NaN quieted, the default NaN, or the sum
    if (kNaNRuleAArch64 && Quiet(x) && y != y && !Quiet(y)) return y + y;  // y signals, x not
    return x + x;
  }
  template <typename Packet>
  EIGEN_STRONG_INLINE Packet packetOp(const Packet& x, const Packet& y) const {
    using namespace Eigen::internal;  // NOLINT: Eigen's packet primitives
    // pcmp_eq(x, x): all ones where x is a number; pselect(mask, a, b): mask ? a : b
    const Packet xx = padd(x, x);
    if (!kNaNRuleAArch64) return pselect(pcmp_eq(x, x), padd(x, y), xx);
    const Packet yy = padd(y, y);
    // where y is a signalling NaN and x a quiet one: y's NaN, quieted
    const Packet y_nan = pandnot(ptrue(y), pcmp_eq(y, y));
    const Packet y_first = pand(pandnot(y_nan, QuietMask(y, yy)), QuietMask(x, xx));
    return pselect(pcmp_eq(x, x), padd(x, y), pselect(y_first, yy, xx));
  }

 private:
  // v a NaN: whether it is quiet (its quiet bit set: v and v + v have the same bits).
  static EIGEN_STRONG_INLINE bool Quiet(const T& v) {
    const T q = v + v;
    return std::memcmp(&v, &q, sizeof(T)) == 0;
  }
  // All ones where v (a NaN there) and v + v have the same bits: v and v + v differ at most
  // in the quiet bit, which OR-ed into 1.0 gives 1.5 (a normal number, whatever the
  // flush-to-zero mode) and leaves 1.0 where they agree.
  template <typename Packet>
  static EIGEN_STRONG_INLINE Packet QuietMask(const Packet& v, const Packet& vv) {
    using namespace Eigen::internal;  // NOLINT
    const Packet one = pset1<Packet>(T(1));
    return pcmp_eq(por(pxor(v, vv), one), one);
  }
};

// float16: in float as above, the NaN narrowed by the host's rule (above).
struct HalfSumKeepingNaN {
  EIGEN_STRONG_INLINE Eigen::half operator()(const Eigen::half& x, const Eigen::half& y) const {
    const float a = static_cast<float>(x), b = static_cast<float>(y);  // exact, NaN bits kept
    const float sum = SumKeepingXNaN<float>()(a, b);
    if (sum == sum) return Eigen::half(sum);  // round to nearest even
    uint32_t bits;
    std::memcpy(&bits, &sum, sizeof(bits));
    // sign, all-ones exponent, the quiet bit; on x86 the float mantissa's top 10 bits too
    const uint16_t payload = kNaNRuleAArch64 ? 0u : static_cast<uint16_t>((bits >> 13) & 0x03ffu);
    const uint16_t narrowed = static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7e00u | payload);
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
