// STAND-IN for the platform component's fe::PlatformInfoManager (closed source), which GE's
// OpCompileContext::GetPlatformInfos asks (graph_metadef/exe_graph/runtime/op_compile_context.cc).
// The instance hands out whatever the test installed with SetStandInPlatform, so the SoC an
// adapter reads comes from here, never from a device. Unproven: how a real toolkit fills it
// (from the --soc_version option and the platform config files).
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_PLATFORM_INFO_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_PLATFORM_INFO_H_
#include <cstdint>
#include <string>

#include "platform/platform_infos_def.h"

namespace fe {
class PlatformInfoManager {
 public:
  static PlatformInfoManager &GeInstance();
  uint32_t GetPlatformInfoWithOutSocVersion(PlatFormInfos &platform_info, OptionalInfos &optional_infos);
  // Stand-in only: the platform the next GetPlatformInfoWithOutSocVersion hands out, and the
  // code it returns (non-zero: a failure, as the real manager reports one).
  void SetStandInPlatform(const PlatFormInfos &platform, const OptionalInfos &optional, uint32_t result = 0);

 private:
  PlatFormInfos platform_;
  OptionalInfos optional_;
  uint32_t result_ = 0;
};
}  // namespace fe
#endif
