// The attribute area of GE's node-info block (node_attrs.h): measured from where GetAttrs()
// points to where GetOutputInstanceInfo(0) points, refused when there is none (HEAD's OM2
// blocks name no IR outputs: the end is null), and every read held inside it.
#include <cstdint>
#include <string>
#include <vector>

#include "testing.h"
#include "tf_ge_custom_core/node_attrs.h"

using namespace tf_ge_custom::core;

TEST(NodeAttrs, TheAreaRunsFromTheAttributesToTheFirstOutputsInstanceRecord) {
  std::vector<uint8_t> block(256);
  const uint8_t *attrs = block.data() + 64;
  AttrArea area;
  // metadef's layout: a 48-byte head (count and reserved bytes), then 8 bytes per offset.
  REQUIRE_TRUE(MeasureAttrArea(attrs, attrs + 48 + 8 + 8, &area));
  CHECK_EQ(area.size, size_t{64});
  CHECK_TRUE(area.begin == attrs);
  CHECK_TRUE(area.HoldsOffsets(0) && area.HoldsOffsets(2));
  CHECK_TRUE(!area.HoldsOffsets(3));
  // A float right at the end fits; one byte further does not; nothing before the start does.
  CHECK_TRUE(area.Holds(attrs + 60, 4));
  CHECK_TRUE(!area.Holds(attrs + 61, 4));
  CHECK_TRUE(!area.Holds(attrs - 1, 1));
  CHECK_TRUE(!area.Holds(nullptr, 4));
  CHECK_TRUE(!area.Holds(attrs + 65, 0));
  // A count no area could hold (a garbage count) is refused, not wrapped around.
  CHECK_TRUE(!area.HoldsOffsets(SIZE_MAX));
}

TEST(NodeAttrs, ABlockWithoutAnAttributeAreaIsRefused) {
  std::vector<uint8_t> block(256);
  const uint8_t *attrs = block.data() + 64;
  AttrArea area;
  // HEAD's OM2 block: no IR outputs, so GetOutputInstanceInfo(0) is null.
  CHECK_TRUE(!MeasureAttrArea(attrs, nullptr, &area));
  CHECK_TRUE(area.begin == nullptr && area.size == 0);
  CHECK_TRUE(!area.HoldsOffsets(0));
  CHECK_TRUE(!MeasureAttrArea(attrs, attrs - 8, &area));   // the end before the start
  CHECK_TRUE(!MeasureAttrArea(attrs, attrs + 47, &area));  // too small for the head
  CHECK_TRUE(!MeasureAttrArea(nullptr, attrs, &area));
  REQUIRE_TRUE(MeasureAttrArea(attrs, attrs + 48, &area));  // the head alone: no attributes
  CHECK_TRUE(area.HoldsOffsets(0) && !area.HoldsOffsets(1));
  const Status refused = NoAttrArea("lrelu_1");
  CHECK_EQ(refused.code(), Code::kBadNodeInfo);
  CHECK_EQ(std::string(CodeName(refused.code())), std::string("bad_node_info"));
  CHECK_TRUE(refused.message().find("node lrelu_1 has no attribute area") != std::string::npos);
  CHECK_TRUE(refused.message().find("rebuild the model (OM) with this package") != std::string::npos);
}
