// GE in the loop: the program cap of Execute when the device cannot say how many vector cores
// it has. ACL answers aclrtGetDeviceInfo(ACL_DEV_ATTR_VECTOR_CORE_NUM) with success and 0 where
// the driver has no count (hicann/runtime src/runtime/driver/npu_driver.cc), and a query can
// fail: either way Execute runs, capped at twice the AI cores as triton-ascend sizes its grids
// (driver.py), else at the manifest's own max_programs (40 in the harness's kernels).
//
// Every case runs [8, 64, 56, 56] + [1, 64, 1, 1] float16 (the column kernel col_1x4096, 512
// tiles: far more than any cap here), so the grid is the cap; the argument bytes are the
// hand-written layout of ge_in_loop_tests.cc's AnNchwBiasRunsTheColumnKernelWithItsOuterStride.
#include <string>
#include <vector>

#include "harness.h"
#include "testing.h"

using namespace harness;

namespace {

struct Capped {
  ge::graphStatus status;
  recording_acl::Record record;
  uint64_t z = 0;
};

Capped RunNchwBias(const recording_acl::Settings &settings) {
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(settings);
  EagerCall call({8, 64, 56, 56}, {1, 64, 1, 1}, ge::DT_FLOAT16, ge::DT_FLOAT16, "cores_node");
  Capped out;
  out.status = op->Execute(call.ctx());
  out.record = recording_acl::Take();
  out.z = call.allocator.last;
  return out;
}

void CheckOneLaunchOf(const Capped &c, uint32_t grid) {
  CHECK_EQ(c.status, ge::GRAPH_SUCCESS);
  REQUIRE_EQ(c.record.launches.size(), size_t{1});
  CHECK_EQ(c.record.launches[0].block_dim, grid);
  CHECK_EQ(c.record.launches[0].args,
           TiledArgs(kX, kY, c.z, {1, 1, 8, 64, 3136}, {0, 0, 200704, 0, 0, 0}, grid));
}

const std::vector<int> kVectorThenAi = {ACL_DEV_ATTR_VECTOR_CORE_NUM, ACL_DEV_ATTR_AICORE_CORE_NUM};

}  // namespace

TEST(DeviceCores, AVectorCoreCountOfZeroIsUnknownAndTwiceTheAiCoresCap) {
  recording_acl::Settings s = OnFreshDevice();
  s.vector_cores = 0;  // ACL's success with 0
  s.ai_cores = 20;     // Ascend910B4's 20 AI cores: 40 vector cores
  const Capped c = RunNchwBias(s);
  CheckOneLaunchOf(c, 40);
  CHECK_EQ(c.record.device_info_attrs, kVectorThenAi);
  CHECK_EQ(c.record.device_info_devices, (std::vector<uint32_t>{static_cast<uint32_t>(s.device),
                                                                static_cast<uint32_t>(s.device)}));
}

TEST(DeviceCores, AFailedVectorCoreQueryIsUnknownAndItsValueUnused) {
  recording_acl::Settings s = OnFreshDevice();
  s.vector_cores_error = 107000;  // ACL_ERROR_RT_PARAM_INVALID; the stand-in writes 4096 anyway
  s.ai_cores = 12;
  const Capped c = RunNchwBias(s);
  CheckOneLaunchOf(c, 24);
  CHECK_EQ(c.record.device_info_attrs, kVectorThenAi);
}

TEST(DeviceCores, WithNeitherCountTheManifestCapStays) {
  recording_acl::Settings zero = OnFreshDevice();
  zero.vector_cores = 0;
  zero.ai_cores = 0;
  CheckOneLaunchOf(RunNchwBias(zero), 40);  // the manifest's max_programs
  recording_acl::Settings failing = OnFreshDevice();
  failing.device_info_error = 107000;  // every query fails (and writes 4096)
  const Capped c = RunNchwBias(failing);
  CheckOneLaunchOf(c, 40);
  CHECK_EQ(c.record.device_info_attrs, kVectorThenAi);
}

TEST(DeviceCores, AKnownVectorCoreCountIsTheOnlyQuestion) {
  recording_acl::Settings s = OnFreshDevice();
  s.vector_cores = 36;
  s.ai_cores = 5;  // never asked
  const Capped c = RunNchwBias(s);
  CheckOneLaunchOf(c, 36);
  CHECK_EQ(c.record.device_info_attrs, std::vector<int>{ACL_DEV_ATTR_VECTOR_CORE_NUM});
}

TEST(DeviceCores, TheDeviceIsAskedOncePerDeviceAndContextAndTheSteadyCallAsksNothingOfIt) {
  // What a device reports cannot change while its ACL context lives: the first Execute asks
  // (aclrtGetSocName, aclrtGetDeviceInfo, aclrtGetHardwareSyncAddr), the next ones ask only
  // which device and context the thread is on; a new context asks again.
  recording_acl::Settings s = OnFreshDevice();
  s.vector_cores = 0;  // unknown: both core questions on the first call
  s.ai_cores = 20;
  auto *op = As<ge::EagerExecuteOp>(FactoryOp());
  recording_acl::Reset(s);
  const int calls = 10;
  for (int i = 0; i < calls; ++i) {
    EagerCall call({8, 64, 56, 56}, {1, 64, 1, 1}, ge::DT_FLOAT16, ge::DT_FLOAT16, "steady_node");
    REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  }
  recording_acl::Record r = recording_acl::Take();
  CHECK_EQ(r.launches.size(), size_t{calls});
  CHECK_EQ(r.soc_calls, 1);
  CHECK_EQ(r.device_info_attrs, kVectorThenAi);
  CHECK_EQ(r.sync_calls, 1);
  CHECK_EQ(r.device_calls, calls);
  CHECK_EQ(r.context_calls, calls);
  for (const auto &l : r.launches) CHECK_EQ(l.block_dim, 40u);  // 2 x 20 AI cores, every call
  std::printf("# %d Execute calls on one device and context: %d aclrtGetSocName, %zu aclrtGetDeviceInfo, %d "
              "aclrtGetHardwareSyncAddr, %d aclrtGetDevice, %d aclrtGetCurrentContext\n",
              calls, r.soc_calls, r.device_info_attrs.size(), r.sync_calls, r.device_calls, r.context_calls);
  // A new context (a reset device) asks again, and keeps the new answer.
  s.context += 0x10;
  s.ai_cores = 12;
  recording_acl::Reset(s);
  EagerCall call({8, 64, 56, 56}, {1, 64, 1, 1}, ge::DT_FLOAT16, ge::DT_FLOAT16, "steady_node");
  REQUIRE_EQ(op->Execute(call.ctx()), ge::GRAPH_SUCCESS);
  r = recording_acl::Take();
  CHECK_EQ(r.soc_calls, 1);
  CHECK_EQ(r.device_info_attrs, kVectorThenAi);
  REQUIRE_EQ(r.launches.size(), size_t{1});
  CHECK_EQ(r.launches[0].block_dim, 24u);
}
