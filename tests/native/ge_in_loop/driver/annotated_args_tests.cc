// GE's annotated-args path (static graphs: DeclareLaunchArgs), built from the public sources:
// the harness's AnnotatedCall lays out GE's AnnotatedArgsContext and reads back GE's own
// AnnotatedArgsHandler. These cases pin down that plumbing with declarations written by hand,
// so that a test of the adapter's DeclareLaunchArgs can rely on it (harness.h).
#include "harness.h"
#include "testing.h"

using namespace harness;

TEST(AnnotatedArgs, GesContextRecordsADeclarationWordForWord) {
  AnnotatedCall call({16}, {16}, {16}, ge::DT_FLOAT, 5);
  gert::AnnotatedArgsContext &ctx = call.ctx();
  REQUIRE_TRUE(ctx.GetInputTensor(0) != nullptr && ctx.GetInputTensor(1) != nullptr);
  CHECK_EQ(U64(ctx.GetInputTensor(1)->GetAddr()), kY);
  CHECK_TRUE(ctx.GetInputTensor(2) == nullptr);  // the allocator is no input tensor
  REQUIRE_TRUE(ctx.GetOutputTensor(0) != nullptr);
  CHECK_EQ(U64(ctx.GetOutputTensor(0)->GetAddr()), AnnotatedCall::kZ);
  CHECK_EQ(ctx.GetStreamId(), 5u);
  const gert::WorkspaceAddr ws = ctx.MallocWorkSpace(96);
  CHECK_EQ(ws.index, 0u);
  CHECK_EQ(call.allocator.block_sizes, (std::vector<size_t>{96}));  // not rounded on this path
  gert::AnnotatedKernelArgs args;
  CHECK_EQ(args.AppendArg(gert::InputAddr{0, Addr(kX)}), ge::GRAPH_SUCCESS);
  CHECK_EQ(args.AppendArg(gert::InputAddr{1, Addr(kY)}), ge::GRAPH_SUCCESS);
  CHECK_EQ(args.AppendArg(gert::OutputAddr{0, Addr(AnnotatedCall::kZ)}), ge::GRAPH_SUCCESS);
  CHECK_EQ(args.AppendArg(ws), ge::GRAPH_SUCCESS);
  CHECK_EQ(args.AppendArg(uint64_t{0x0000000400000010ull}), ge::GRAPH_SUCCESS);
  const std::vector<uint8_t> bin = test_support::FakeBinary(kSoc, "float32", "flat");
  gert::AnnotatedKernelLaunchInfo info;
  info.kernel_name = "add_kernel";
  info.kernel_bin = bin.data();
  info.kernel_bin_size = bin.size();
  info.block_dim = 4;
  info.stream_id = ctx.GetStreamId();
  REQUIRE_EQ(ctx.AddLaunch(info, std::move(args)), ge::GRAPH_SUCCESS);
  const std::vector<RecordedDeclaration> d = call.Declared();
  REQUIRE_EQ(d.size(), size_t{1});
  CHECK_EQ(d[0].kernel_name, std::string("add_kernel"));
  CHECK_EQ(d[0].kernel_bin, bin);  // GE keeps its own copy
  CHECK_EQ(d[0].block_dim, 4u);
  CHECK_EQ(d[0].stream_id, 5u);
  CHECK_EQ(DescString(d[0].descs), InputDesc(0) + " " + InputDesc(1) + " " + OutputDesc(0) + " w0 c");
  std::vector<uint8_t> words;  // one 8-byte slot per argument, in order
  Le(&words, kX, 8);
  Le(&words, kY, 8);
  Le(&words, AnnotatedCall::kZ, 8);
  Le(&words, U64(call.workspace.at(0)->GetAddr()), 8);
  Le(&words, 0x0000000400000010ull, 8);
  CHECK_EQ(d[0].args, words);
}

TEST(AnnotatedArgs, GesContextRefusesALaunchWithoutKernelOrBlocks) {
  AnnotatedCall call({16}, {16}, {16});
  const std::vector<uint8_t> bin = {1, 2, 3};
  gert::AnnotatedKernelLaunchInfo no_name;
  no_name.kernel_bin = bin.data();
  no_name.kernel_bin_size = bin.size();
  no_name.block_dim = 1;
  gert::AnnotatedKernelLaunchInfo no_blocks = no_name;
  no_blocks.kernel_name = "add_kernel";
  no_blocks.block_dim = 0;
  std::string err = CaptureStderr([&] {
    // GE_ASSERT_TRUE's failure code (ge::FAILED), not GRAPH_FAILED: anything but success.
    CHECK_TRUE(call.ctx().AddLaunch(no_name, gert::AnnotatedKernelArgs()) != ge::GRAPH_SUCCESS);
    CHECK_TRUE(call.ctx().AddLaunch(no_blocks, gert::AnnotatedKernelArgs()) != ge::GRAPH_SUCCESS);
  });
  CHECK_TRUE(Contains(err, "kernel name is empty") && Contains(err, "block dim is zero"));
  CHECK_EQ(call.Declared().size(), size_t{0});
}
