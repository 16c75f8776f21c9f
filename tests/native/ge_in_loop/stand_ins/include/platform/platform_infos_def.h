// STAND-IN for the platform component's fe::PlatFormInfos / fe::OptionalInfos (closed source:
// in neither public repository). Only the members the adapter and GE's sources call exist, and
// the LAYOUT IS INVENTED (a map of label -> key -> value, and a SoC string): a real toolkit's
// objects differ, so this proves how the adapter uses the API, not that it fits the binary.
#ifndef TF_GE_CUSTOM_GE_IN_LOOP_PLATFORM_INFOS_DEF_H_
#define TF_GE_CUSTOM_GE_IN_LOOP_PLATFORM_INFOS_DEF_H_
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace fe {
class PlatFormInfos {
 public:
  bool GetPlatformRes(const std::string &label, const std::string &key, std::string &val);
  bool GetPlatformResWithLock(const std::string &label, const std::string &key, std::string &val);
  bool GetPlatformResWithLock(const std::string &label, std::map<std::string, std::string> &res);
  uint32_t GetCoreNum() const;
  // Stand-in only: how the test installs a platform.
  void SetPlatformRes(const std::string &label, const std::string &key, const std::string &val);

 private:
  std::map<std::string, std::map<std::string, std::string>> res_;
  uint32_t core_num_ = 0;
};

class OptionalInfos {
 public:
  std::string GetSocVersion();
  std::string GetCoreType();
  uint32_t GetAICoreNum();
  // Stand-in only.
  void SetSocVersion(const std::string &soc);

 private:
  std::string soc_version_;
};
}  // namespace fe
#endif
