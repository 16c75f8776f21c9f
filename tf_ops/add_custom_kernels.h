// The element-wise part of the AddCustom CPU kernel: TensorFlow's own binary-op functor over
// the sum of add_custom_sum.h.
//
// AddFunctor<Device, T, N> is tensorflow::functor::BinaryFunctor<Device, Add<T>, N> from
// tensorflow/core/kernels/cwise_ops_common.h, the functor tf.math.add's CPU kernel runs, with
// its fast paths (flat, scalar on either side, the collapsed two-dimensional row/column
// cases) and Eigen's multi-threaded evaluation on the device's thread pool. Add<T> is
// tensorflow::functor::add<T> (cwise_ops.h) with the element-wise sum of add_custom_sum.h in
// place of Eigen's scalar_sum_op, so that NaN bits come out as tf.math.add's do.
// TensorFlow 1.15's wheel ships no tensorflow/core/kernels headers; there the stand-in of
// add_custom_tf1_functor.h, with the same interface and the same Eigen expressions, is used
// (docs/tensorflow-op.md).
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_

#define EIGEN_USE_THREADS

#if __has_include("tensorflow/core/kernels/cwise_ops_common.h")
#include "tensorflow/core/kernels/cwise_ops_common.h"
#include "add_custom_sum.h"

namespace tf_ge_custom {
namespace functor {
template <typename T>
struct Add : ::tensorflow::functor::base<T, typename SumFor<T>::type> {
  static constexpr bool use_bcast_optimization = true;  // as tensorflow::functor::add
};

template <typename Device, typename T, int NDIMS>
using AddFunctor = ::tensorflow::functor::BinaryFunctor<Device, Add<T>, NDIMS>;
}  // namespace functor
}  // namespace tf_ge_custom

#else
#include "add_custom_tf1_functor.h"
#endif

#endif  // TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
