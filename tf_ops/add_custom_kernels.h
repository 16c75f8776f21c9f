// The device-independent part of the AddCustom kernel: one functor per device.
#ifndef TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
#define TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_

#include "tensorflow/core/framework/tensor_types.h"

namespace tf_ge_custom {
namespace functor {

template <typename Device, typename T>
struct AddCustom {
  // Element-wise z = x + y over flat views (64-bit element indices).
  void operator()(const Device& d, typename ::tensorflow::TTypes<T>::ConstFlat x,
                  typename ::tensorflow::TTypes<T>::ConstFlat y,
                  typename ::tensorflow::TTypes<T>::Flat z) const {
    // Eigen splits the expression across the device's thread pool by its cost model.
    z.device(d) = x + y;
  }
};

}  // namespace functor
}  // namespace tf_ge_custom

#endif  // TF_GE_CUSTOM_TF_OPS_ADD_CUSTOM_KERNELS_H_
