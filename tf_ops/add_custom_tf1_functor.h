// AddFunctor for a TensorFlow whose wheel ships no tensorflow/core/kernels headers
// (TensorFlow 1.15): the interface of tensorflow::functor::BinaryFunctor (cwise_ops.h) for
// one functor, addition, written with the Eigen expressions cwise_ops_common.h uses for it,
// over the element-wise sum of add_custom_sum.h.
// Only add_custom_kernels.h includes this file, and only when cwise_ops_common.h is absent.
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_TF1_FUNCTOR_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_TF1_FUNCTOR_H_

#define EIGEN_USE_THREADS

#include "tensorflow/core/framework/tensor_types.h"
#include "add_custom_sum.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tf_ge_custom {
namespace functor {

template <typename Device, typename T, int NDIMS>
struct AddFunctor {
  using Flat = typename ::tensorflow::TTypes<T>::Flat;
  using ConstFlat = typename ::tensorflow::TTypes<T>::ConstFlat;
  using ConstScalar = typename ::tensorflow::TTypes<T>::ConstScalar;
  using Index = Eigen::array<Eigen::DenseIndex, NDIMS>;
  using Sum = typename SumFor<T>::type;

  // out[i] = in0[i] + in1[i]
  void operator()(const Device& d, Flat out, ConstFlat in0, ConstFlat in1, bool*) {
    out.device(d) = in0.binaryExpr(in1, Sum());
  }
  // out[i] = scalar + in[i]
  void Left(const Device& d, Flat out, ConstScalar scalar, ConstFlat in, bool*) {
    out.device(d) = in.constant(scalar()).binaryExpr(in, Sum());
  }
  // out[i] = in[i] + scalar
  void Right(const Device& d, Flat out, ConstFlat in, ConstScalar scalar, bool*) {
    out.device(d) = in.binaryExpr(in.constant(scalar()), Sum());
  }
  // out = in0.broadcast(bcast0) + in1.broadcast(bcast1), skipping a no-op broadcast
  void BCast(const Device& d, typename ::tensorflow::TTypes<T, NDIMS>::Tensor out,
             typename ::tensorflow::TTypes<T, NDIMS>::ConstTensor in0, Index bcast0,
             typename ::tensorflow::TTypes<T, NDIMS>::ConstTensor in1, Index bcast1, bool*) {
    const bool all_one0 = AllOne(bcast0), all_one1 = AllOne(bcast1);
    if (all_one0 && all_one1) {
      out.device(d) = in0.binaryExpr(in1, Sum());
    } else if (all_one0) {
      out.device(d) = in0.binaryExpr(in1.broadcast(bcast1), Sum());
    } else if (all_one1) {
      out.device(d) = in0.broadcast(bcast0).binaryExpr(in1, Sum());
    } else {
      out.device(d) = in0.broadcast(bcast0).binaryExpr(in1.broadcast(bcast1), Sum());
    }
  }

 private:
  static bool AllOne(const Index& a) {
    for (int i = 0; i < NDIMS; ++i) {
      if (a[i] != 1) return false;
    }
    return true;
  }
};

}  // namespace functor
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_TF1_FUNCTOR_H_
