// STAND-IN for the platform component (closed source): see include/platform/platform_info.h.
// The layout is invented; the values are what the test installs.
#include "platform/platform_info.h"

namespace fe {

bool PlatFormInfos::GetPlatformRes(const std::string &label, const std::string &key, std::string &val) {
  auto l = res_.find(label);
  if (l == res_.end()) return false;
  auto k = l->second.find(key);
  if (k == l->second.end()) return false;
  val = k->second;
  return true;
}
bool PlatFormInfos::GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val) {
  return GetPlatformRes(label, key, val);
}
bool PlatFormInfos::GetPlatformResWithLock(const std::string &label, std::map<std::string, std::string> &res) {
  auto l = res_.find(label);
  if (l == res_.end()) return false;
  res = l->second;
  return true;
}
uint32_t PlatFormInfos::GetCoreNum() const { return core_num_; }
void PlatFormInfos::SetPlatformRes(const std::string &label, const std::string &key, const std::string &val) {
  res_[label][key] = val;
}

std::string OptionalInfos::GetSocVersion() { return soc_version_; }
std::string OptionalInfos::GetCoreType() { return ""; }
uint32_t OptionalInfos::GetAICoreNum() { return 0; }
void OptionalInfos::SetSocVersion(const std::string &soc) { soc_version_ = soc; }

PlatformInfoManager &PlatformInfoManager::GeInstance() {
  static PlatformInfoManager instance;
  return instance;
}
uint32_t PlatformInfoManager::GetPlatformInfoWithOutSocVersion(PlatFormInfos &platform_info,
                                                               OptionalInfos &optional_infos) {
  if (result_ != 0) return result_;
  platform_info = platform_;
  optional_infos = optional_;
  return 0;
}
void PlatformInfoManager::SetStandInPlatform(const PlatFormInfos &platform, const OptionalInfos &optional,
                                             uint32_t result) {
  platform_ = platform;
  optional_ = optional;
  result_ = result;
}

}  // namespace fe
