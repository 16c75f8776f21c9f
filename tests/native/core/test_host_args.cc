// Host-argument bytes for the A2/A3 layouts, against bytes computed by hand from the layout
// triton-ascend emits (docs/ascend-stack.md, "Launching the kernel").
#include <cstring>
#include <map>

#include "test_support.h"
#include "testing.h"
#include "tf_ge_custom_core/executor.h"
#include "tf_ge_custom_core/host_args.h"
#include "tf_ge_custom_core/launch_plan.h"
#include "tf_ge_custom_core/manifest.h"

using namespace tf_ge_custom::core;
using Bytes = std::vector<unsigned char>;

namespace {
ArgLayout LayoutFromManifest(bool has_ffts, const std::string &variant = "flat") {
  test_support::KernelSpec k;
  k.has_ffts = has_ffts;
  k.variant = variant;
  auto r = ParseManifest(test_support::ManifestJson("Ascend910B1", {k}), ManifestCheck());
  return r.ok() ? r.value().kernels[0].args : ArgLayout();
}

HostArgValues Values() {
  HostArgValues v;
  v.ffts = 0x1122334455667788ull;
  v.inputs = {0x0000100000000000ull, 0x0000100000400000ull};
  v.outputs = {0x0000100000800000ull};
  v.num_elements = 5000;  // 0x1388
  v.grid_x = 2;
  return v;
}
}  // namespace

TEST(HostArgs, A2A3LayoutWithFftsIs64BytesExactly) {
  Bytes out;
  REQUIRE_OK(PackHostArgs(LayoutFromManifest(true), Values(), &out));
  const Bytes expected = {
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // ffts_base_address
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // sync_block_lock: null
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // workspace: null
      0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // x
      0x00, 0x00, 0x40, 0x00, 0x00, 0x10, 0x00, 0x00,  // y
      0x00, 0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00,  // z
      0x88, 0x13, 0x00, 0x00,                          // n_elements = 5000
      0x02, 0x00, 0x00, 0x00,                          // gridX
      0x01, 0x00, 0x00, 0x00,                          // gridY
      0x01, 0x00, 0x00, 0x00,                          // gridZ
  };
  CHECK_EQ(out, expected);
}

TEST(HostArgs, LayoutWithoutFftsIs56BytesExactly) {
  HostArgValues v = Values();
  v.sync_block_lock = 0x00000000DEADBEEFull;
  v.workspace = 0x0102030405060708ull;
  Bytes out;
  REQUIRE_OK(PackHostArgs(LayoutFromManifest(false), v, &out));
  const Bytes expected = {
      0xEF, 0xBE, 0xAD, 0xDE, 0x00, 0x00, 0x00, 0x00,  // sync_block_lock
      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // workspace
      0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // x
      0x00, 0x00, 0x40, 0x00, 0x00, 0x10, 0x00, 0x00,  // y
      0x00, 0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00,  // output
      0x88, 0x13, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,  // n_elements, gridX
      0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,  // gridY, gridZ
  };
  CHECK_EQ(out, expected);
}

TEST(HostArgs, TiledLayoutCarriesExtentsAndStridesIn104Bytes) {
  // add_tile_kernel(a, b, z, d0, d1, d2, rows, cols, a_stride0..2, b_stride0..2): NCHW bias
  // [8, 64, 56, 56] + [1, 64, 1, 1] as the col pattern, frame (1, 1, 8, 64, 3136).
  HostArgValues v = Values();
  v.num_elements = 8 * 64 * 3136;
  v.dims = {1, 1, 8, 64, 3136};
  v.input_strides = {{0, 0, 200704, 3136, 1}, {0, 0, 0, 1, 0}};
  v.grid_x = 40;
  Bytes out;
  REQUIRE_OK(PackHostArgs(LayoutFromManifest(true, "col_16x256"), v, &out));
  const Bytes expected = {
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // ffts_base_address
      0, 0, 0, 0, 0, 0, 0, 0,                          // sync_block_lock
      0, 0, 0, 0, 0, 0, 0, 0,                          // workspace
      0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // a
      0x00, 0x00, 0x40, 0x00, 0x00, 0x10, 0x00, 0x00,  // b
      0x00, 0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00,  // z
      1, 0, 0, 0, 1, 0, 0, 0, 8, 0, 0, 0,              // d0, d1, d2
      64, 0, 0, 0, 0x40, 0x0C, 0, 0,                   // rows, cols = 3136
      0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x10, 0x03, 0x00,  // a_stride0, 1, 2 = 200704
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,              // b_stride0, 1, 2
      40, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0,             // gridX, gridY, gridZ: 104 bytes, no padding
  };
  CHECK_EQ(out, expected);
  // An extent that does not fit its 32-bit slot, a negative stride, a missing operand's strides
  v.dims[4] = int64_t{1} << 31;
  CHECK_EQ(PackHostArgs(LayoutFromManifest(true, "col_16x256"), v, &out).code(), Code::kOutOfRange);
  v.dims[4] = 3136;
  v.input_strides[1][2] = -1;
  CHECK_EQ(PackHostArgs(LayoutFromManifest(true, "col_16x256"), v, &out).code(), Code::kOutOfRange);
  v.input_strides.pop_back();
  CHECK_EQ(PackHostArgs(LayoutFromManifest(true, "col_16x256"), v, &out).code(), Code::kOutOfRange);
}

TEST(HostArgs, SixtyFourBitCountAndTailPadding) {
  // A layout a compiler could emit for an i64 count: 8-byte count at 24, grids at 32..44,
  // struct rounded up to 48 (the last 4 bytes are padding and must be zero).
  ArgLayout l;
  l.size = 48;
  l.slots = {{"lock", SlotRole::kSyncBlockLock, -1, -1, 0, 8}, {"ws", SlotRole::kWorkspace, -1, -1, 8, 8},
             {"x", SlotRole::kInput, 0, -1, 16, 8},            {"n", SlotRole::kNumElements, -1, -1, 24, 8},
             {"gx", SlotRole::kGridX, -1, -1, 32, 4},          {"gy", SlotRole::kGridY, -1, -1, 36, 4},
             {"gz", SlotRole::kGridZ, -1, -1, 40, 4}};
  HostArgValues v;
  v.inputs = {0xAABBCCDDull};
  v.num_elements = 0x0000000300000001ll;  // 2^33 + 2^32 + 1: does not fit 32 bits
  v.grid_x = 65535;
  v.grid_y = 3;
  v.grid_z = 258;
  Bytes out;
  REQUIRE_OK(PackHostArgs(l, v, &out));
  const Bytes expected = {
      0, 0, 0, 0, 0, 0, 0, 0,                  // lock
      0, 0, 0, 0, 0, 0, 0, 0,                  // workspace
      0xDD, 0xCC, 0xBB, 0xAA, 0, 0, 0, 0,      // x
      0x01, 0x00, 0x00, 0x00, 0x03, 0, 0, 0,   // n
      0xFF, 0xFF, 0x00, 0x00, 0x03, 0, 0, 0,   // gridX, gridY
      0x02, 0x01, 0x00, 0x00, 0, 0, 0, 0,      // gridZ, padding
  };
  CHECK_EQ(out, expected);
}

TEST(HostArgs, RefusesValuesThatDoNotFit) {
  const ArgLayout l = LayoutFromManifest(true);
  Bytes out;
  HostArgValues v = Values();
  v.num_elements = int64_t{1} << 31;  // one past int32
  CHECK_EQ(PackHostArgs(l, v, &out).code(), Code::kOutOfRange);
  v.num_elements = (int64_t{1} << 31) - 1;
  CHECK_TRUE(PackHostArgs(l, v, &out).ok());
  v.num_elements = -1;
  CHECK_FALSE(PackHostArgs(l, v, &out).ok());
  v = Values();
  v.inputs.pop_back();  // y missing
  CHECK_FALSE(PackHostArgs(l, v, &out).ok());
  v = Values();
  v.grid_y = 0;
  CHECK_FALSE(PackHostArgs(l, v, &out).ok());
  v.grid_y = 0x80000000u;
  CHECK_FALSE(PackHostArgs(l, v, &out).ok());
}

namespace {
// leaky_relu_kernel(x_ptr, y_ptr, n_elements, alpha) as triton-ascend emits it
// (tests/kernels/test_leaky_relu_lowering.py checks the HIVM IR): ffts, lock, workspace,
// x, y, i32 n_elements, f32 alpha (the op's attribute 0), gridX/Y/Z: 60 bytes, padded to 64.
// Written out by hand: the core's op table holds only the ops of op_def.OPS.
ArgLayout LeakyReluLayout() {
  ArgLayout l;
  l.size = 64;
  l.has_ffts = true;
  l.slots = {{"ffts_base_address", SlotRole::kFfts, -1, -1, 0, 8},
             {"sync_block_lock", SlotRole::kSyncBlockLock, -1, -1, 8, 8},
             {"workspace", SlotRole::kWorkspace, -1, -1, 16, 8},
             {"x_ptr", SlotRole::kInput, 0, -1, 24, 8},
             {"y_ptr", SlotRole::kOutput, 0, -1, 32, 8},
             {"n_elements", SlotRole::kNumElements, -1, -1, 40, 4},
             {"alpha", SlotRole::kAttr, 0, -1, 44, 4},
             {"gridX", SlotRole::kGridX, -1, -1, 48, 4},
             {"gridY", SlotRole::kGridY, -1, -1, 52, 4},
             {"gridZ", SlotRole::kGridZ, -1, -1, 56, 4}};
  return l;
}
}  // namespace

TEST(HostArgs, OneInputLayoutCarriesTheAttributeAsAnFp32Word) {
  HostArgValues v = Values();
  v.inputs = {0x0000100000000000ull};
  v.attrs = {0x3E4CCCCDull};  // 0.2f: sign 0, exponent 124, mantissa 0x4CCCCD
  Bytes out;
  REQUIRE_OK(PackHostArgs(LeakyReluLayout(), v, &out));
  const Bytes expected = {
      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // ffts_base_address
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // sync_block_lock: null
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // workspace: null
      0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // x
      0x00, 0x00, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00,  // y
      0x88, 0x13, 0x00, 0x00,                          // n_elements = 5000
      0xCD, 0xCC, 0x4C, 0x3E,                          // alpha = 0.2f
      0x02, 0x00, 0x00, 0x00,                          // gridX
      0x01, 0x00, 0x00, 0x00,                          // gridY
      0x01, 0x00, 0x00, 0x00,                          // gridZ
      0x00, 0x00, 0x00, 0x00,                          // padding
  };
  CHECK_EQ(out, expected);
  // -0.0f keeps its sign bit; a NaN its payload
  v.attrs = {0x80000000ull};
  REQUIRE_OK(PackHostArgs(LeakyReluLayout(), v, &out));
  CHECK_EQ(Bytes(out.begin() + 44, out.begin() + 48), (Bytes{0x00, 0x00, 0x00, 0x80}));
  v.attrs = {0x7FC00001ull};
  REQUIRE_OK(PackHostArgs(LeakyReluLayout(), v, &out));
  CHECK_EQ(Bytes(out.begin() + 44, out.begin() + 48), (Bytes{0x01, 0x00, 0xC0, 0x7F}));
  // no attribute value, or one wider than its 32-bit slot: refused, never packed as zero
  v.attrs.clear();
  CHECK_EQ(PackHostArgs(LeakyReluLayout(), v, &out).code(), Code::kOutOfRange);
  v.attrs = {0x100000000ull};
  CHECK_EQ(PackHostArgs(LeakyReluLayout(), v, &out).code(), Code::kOutOfRange);
}

namespace {
// LeakyReluCustom as op_def.py defines it, written out here (the generated table holds only
// the ops of op_def.OPS): one input, no broadcasting, one float attribute.
OpDefinition LeakyReluOp() {
  OpDefinition op;
  op.type_name = "LeakyReluCustom";
  op.inputs = {"x"};
  op.outputs = {"y"};
  op.dtypes = {{"float32", "DT_FLOAT", 4}, {"float16", "DT_FLOAT16", 2}, {"bfloat16", "DT_BF16", 2}};
  KernelVariantDefinition flat;
  flat.name = "flat";
  flat.pattern = Pattern::kEqual;
  flat.block = {4096};
  flat.params = {{SlotRole::kInput, 0, -1}, {SlotRole::kOutput, 0, -1}, {SlotRole::kNumElements, -1, -1},
                 {SlotRole::kAttr, 0, -1}};
  op.variants = {flat};
  op.broadcasts = false;
  op.attrs = {{"alpha", "float", 4, 0.2}};
  return op;
}
}  // namespace

TEST(HostArgs, AOneInputCallPacksItsPointerCountAndAttributeInEveryLaunch) {
  const OpDefinition op = LeakyReluOp();
  KernelCall call;
  // [3, 4096, 2] float16: 24576 elements, launched in chunks of 8192 (two blocks)
  REQUIRE_OK(PrepareCall(op, op.dtypes[1], {{3, 4096, 2}}, &call));
  CHECK_EQ(call.num_elements, int64_t{24576});
  CHECK_EQ(call.choice.variant->name, std::string("flat"));
  CHECK_EQ(call.choice.operands, (std::vector<int>{0}));
  CHECK_EQ(call.choice.frame, (std::vector<int64_t>{24576}));
  call.inputs = {0x0000100000000000ull};
  call.outputs = {0x0000100000800000ull};
  call.attrs = {0xBF400000ull};  // -0.75f
  KernelEntry entry;
  entry.block = {4096};
  entry.max_programs = 2;
  entry.max_grid = 65535;
  entry.max_elements_per_launch = 8192;
  entry.args = LeakyReluLayout();
  auto plan = LaunchPlan::Make(call.choice, call.dtype->itemsize, entry);
  REQUIRE_OK(plan);
  REQUIRE_EQ(plan.value().launch_count(), int64_t{3});
  HostArgValues v;
  Bytes out;
  for (int64_t i = 0; i < 3; ++i) {
    SetLaunchValues(call.choice, call.inputs, call.outputs, plan.value().launch(i), &v);
    v.attrs = call.attrs;
    REQUIRE_OK(PackHostArgs(entry.args, v, &out));
    const uint8_t step = static_cast<uint8_t>(0x40 * i);  // 8192 halves = 0x4000 bytes per launch
    const Bytes expected = {
        0, 0, 0, 0, 0, 0, 0, 0,                          // ffts (not asked for here)
        0, 0, 0, 0, 0, 0, 0, 0,                          // sync_block_lock
        0, 0, 0, 0, 0, 0, 0, 0,                          // workspace
        0x00, step, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00,  // x + 0x4000 * i
        0x00, step, 0x80, 0x00, 0x00, 0x10, 0x00, 0x00,  // y + 0x4000 * i
        0x00, 0x20, 0x00, 0x00,                          // n_elements = 8192
        0x00, 0x00, 0x40, 0xBF,                          // alpha = -0.75f
        0x02, 0x00, 0x00, 0x00,                          // gridX = 2 programs
        0x01, 0x00, 0x00, 0x00,                          // gridY
        0x01, 0x00, 0x00, 0x00,                          // gridZ
        0x00, 0x00, 0x00, 0x00,                          // padding
    };
    CHECK_EQ(out, expected);
  }
  // its inputs must have one shape; the count must be the op's
  CHECK_EQ(PrepareCall(op, op.dtypes[0], {{2, 3}, {2, 3}}, &call).code(), Code::kInternal);
  CHECK_EQ(PrepareCall(op, op.dtypes[0], {{2, -1}}, &call).code(), Code::kBadShape);
  REQUIRE_OK(PrepareCall(op, op.dtypes[0], {{0, 5}}, &call));
  CHECK_TRUE(call.choice.variant == nullptr && call.num_elements == 0);  // nothing to launch
  OpDefinition two = op;
  two.inputs = {"a", "b"};
  const Status differ = PrepareCall(two, two.dtypes[0], {{2, 3}, {3, 2}}, &call);
  CHECK_EQ(differ.code(), Code::kBadShape);
  CHECK_TRUE(differ.message().find("does not broadcast: its inputs must have one shape, found a [2, 3] and b [3, 2]") !=
             std::string::npos);
  REQUIRE_OK(PrepareCall(two, two.dtypes[0], {{2, 3}, {2, 3}}, &call));
  CHECK_EQ(call.choice.operands, (std::vector<int>{0, 1}));
  CHECK_EQ(call.choice.strides, (std::vector<std::vector<int64_t>>{{1}, {1}}));
}

namespace {
// A node's attribute values as a table (the adapter reads GE's RuntimeAttrs instead): index ->
// value; an index the table lacks is an attribute the node does not carry.
struct AttrTable : AttrValues {
  std::map<size_t, float> floats;
  std::map<size_t, int64_t> ints;
  const float *Float(size_t index) const override {
    const auto it = floats.find(index);
    return it == floats.end() ? nullptr : &it->second;
  }
  const int64_t *Int(size_t index) const override {
    const auto it = ints.find(index);
    return it == ints.end() ? nullptr : &it->second;
  }
};

float FloatOfBits(uint32_t bits) {
  float f = 0;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}
}  // namespace

TEST(HostArgs, AttributeWordsAreTheNodesValuesBitForBitOrTheDefault) {
  // Bits worked out by hand from IEEE 754 binary32: 0.1f = 0x3DCCCCCD (exponent 123, mantissa
  // 0x4CCCCD), -0.5f = 0xBF000000, 0.2f = 0x3E4CCCCD (LeakyReluCustom's default alpha).
  const OpDefinition op = LeakyReluOp();
  AttrTable node;
  std::vector<uint64_t> words = {1, 2, 3};  // leftovers of another op: replaced, resized
  node.floats[0] = 0.1f;
  REQUIRE_OK(SetAttrWords(op, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0x3DCCCCCDull}));
  node.floats[0] = -0.5f;
  REQUIRE_OK(SetAttrWords(op, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0xBF000000ull}));
  node.floats.clear();  // no alpha on the node: the default
  REQUIRE_OK(SetAttrWords(op, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0x3E4CCCCDull}));
  // -0.0 keeps its sign, a NaN its payload, an infinity its bits
  for (const uint32_t bits : {0x80000000u, 0x7FC00001u, 0xFF800000u, 0x00000001u}) {
    node.floats[0] = FloatOfBits(bits);
    REQUIRE_OK(SetAttrWords(op, node, &words));
    CHECK_EQ(words, (std::vector<uint64_t>{bits}));
  }
  // an int attribute: its 64 bits, two's complement; several in op.attrs order
  OpDefinition two = op;
  two.attrs = {{"alpha", "float", 4, 0.2}, {"groups", "int", 8, 7}};
  node.floats[0] = 1.5f;  // 0x3FC00000
  node.ints[1] = -3;
  REQUIRE_OK(SetAttrWords(two, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0x3FC00000ull, 0xFFFFFFFFFFFFFFFDull}));
  node.ints.clear();
  REQUIRE_OK(SetAttrWords(two, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0x3FC00000ull, 7ull}));
  // no attribute: no word
  REQUIRE_OK(SetAttrWords(*FindOp("AddCustom"), node, &words));
  CHECK_TRUE(words.empty());
  // a type the library cannot pass: refused, naming it
  two.attrs[1].type = "string";
  const Status unknown = SetAttrWords(two, node, &words);
  CHECK_EQ(unknown.code(), Code::kInternal);
  CHECK_TRUE(unknown.message().find("its attribute groups has type string") != std::string::npos);
}

TEST(HostArgs, AnAttributeOutsideTheRecordsRangeIsRefusedNamingTheRange) {
  // A record's range as the generator writes it (op_def.OpAttr minimum/maximum): compared in
  // the attribute's type, both bounds inclusive, a NaN outside any range.
  OpDefinition op = LeakyReluOp();
  op.attrs = {{"alpha", "float", 4, 0.2, true, 0.0, true, 1.0, "in [0.0, 1.0]"},
              {"groups", "int", 8, 1, true, 1, false, 0, ">= 1"}};
  AttrTable node;
  std::vector<uint64_t> words;
  for (const float inside : {0.0f, 1.0f, 0.5f, -0.0f}) {
    node.floats[0] = inside;
    REQUIRE_OK(SetAttrWords(op, node, &words));
  }
  node.floats[0] = 0.25f;
  node.ints[1] = 1;  // the int bound itself
  REQUIRE_OK(SetAttrWords(op, node, &words));
  CHECK_EQ(words, (std::vector<uint64_t>{0x3E800000ull, 1ull}));  // 0.25f = 2^-2
  for (const uint32_t outside : {0x3F800001u /* the float after 1 */, 0xBF800000u /* -1 */,
                                 0x7FC00000u /* NaN */, 0x7F800000u /* +inf */}) {
    node.floats[0] = FloatOfBits(outside);
    const Status refused = SetAttrWords(op, node, &words);
    CHECK_EQ(refused.code(), Code::kOutOfRange);
    CHECK_TRUE(refused.message().find("LeakyReluCustom: attribute alpha is ") == 0);
    CHECK_TRUE(refused.message().find("; it must be in [0.0, 1.0]") != std::string::npos);
  }
  node.floats[0] = 0.5f;
  node.ints[1] = 0;
  const Status below = SetAttrWords(op, node, &words);
  CHECK_EQ(below.code(), Code::kOutOfRange);
  CHECK_EQ(below.message(), std::string("LeakyReluCustom: attribute groups is 0 on this node; it must be >= 1 "
                                        "(op_def.py's range for it)"));
  node.ints.erase(1);  // the default, 1, is inside
  REQUIRE_OK(SetAttrWords(op, node, &words));
}
