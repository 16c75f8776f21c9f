// The element-wise part of the LeakyReluCustom CPU kernel where TensorFlow registers no
// LeakyRelu kernel for the dtype: y = x where x > 0, else x * alpha, with alpha already in
// the element type (as TensorFlow's LeakyRelu kernel holds it: tensorflow/core/kernels/
// relu_op.h converts the float attr to T once; relu_op_functor.h then selects, so that an
// alpha above 1 or below 0 is right, where max(x, x * alpha) is not). A NaN is not > 0, so
// it goes through the multiply; -0.0 likewise (-0.0 * alpha). Eigen evaluates it on the
// device's thread pool.
#ifndef TF_GE_CUSTOM_TF_OPS_LEAKY_RELU_CUSTOM_FUNCTOR_H_
#define TF_GE_CUSTOM_TF_OPS_LEAKY_RELU_CUSTOM_FUNCTOR_H_

#define EIGEN_USE_THREADS

#include "tensorflow/core/framework/tensor_types.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {
namespace functor {

template <typename Device, typename T>
struct LeakyReluFunctor {
  void operator()(const Device& d, typename ::tensorflow::TTypes<T>::ConstFlat x, T alpha,
                  typename ::tensorflow::TTypes<T>::Flat y) {
    y.device(d) = (x > x.constant(static_cast<T>(0))).select(x, x * x.constant(alpha));
  }
};

}  // namespace functor
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_TF_OPS_LEAKY_RELU_CUSTOM_FUNCTOR_H_
