// The element-wise part of the AddCustom CPU kernel: TensorFlow's own binary-op functor.
//
// AddFunctor<Device, T, N> is tensorflow::functor::BinaryFunctor<Device, functor::add<T>, N>
// from tensorflow/core/kernels/cwise_ops_common.h, the functor tf.math.add's CPU kernel
// runs, with its fast paths (flat, scalar on either side, the collapsed two-dimensional
// row/column cases) and Eigen's multi-threaded evaluation on the device's thread pool.
// TensorFlow 1.15's wheel ships no tensorflow/core/kernels headers; there the stand-in of
// add_custom_tf1_functor.h, with the same interface and the same Eigen expressions, is used
// (docs/tensorflow-op.md).
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_

#define EIGEN_USE_THREADS

#if __has_include("tensorflow/core/kernels/cwise_ops_common.h")
#include "tensorflow/core/kernels/cwise_ops_common.h"

namespace tf_ge_custom {
namespace functor {
template <typename Device, typename T, int NDIMS>
using AddFunctor = ::tensorflow::functor::BinaryFunctor<Device, ::tensorflow::functor::add<T>, NDIMS>;
}  // namespace functor
}  // namespace tf_ge_custom

#else
#include "add_custom_tf1_functor.h"
#endif

#endif  // TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
