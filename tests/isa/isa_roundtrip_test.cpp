#include <gtest/gtest.h>

#include "spyre/error.h"
#include "spyre/isa/format.h"

using namespace spyre::isa;

namespace {

// A program that uses every opcode of the table, with non-default operands, two kernels and
// every header section.
Program every_opcode_program() {
  Program p;
  p.num_cores = 2;
  p.dram_bytes = 1 << 20;
  p.kernels = {"op0_load", "op1_mm"};
  p.tensors.push_back({"x", "input", DType::F16, {4, 8}, {8, 1}, 0, 64});
  p.tensors.push_back({"y", "output", DType::F32, {4}, {1}, 4096, 16});
  p.data.push_back({8192, {1, 2, 3, 255}});
  p.cores.resize(2);
  for (int i = 0; i < num_opcodes(); ++i) {
    const OpInfo& info = op_info(static_cast<Opcode>(i));
    Instr in;
    in.op = info.op;
    in.kernel = static_cast<uint16_t>(i % 2);
    for (size_t k = 0; k < info.operands.size(); ++k) {
      const auto& name = info.operands[k].name;
      if (info.operands[k].is_float)
        in.a[k] = float_operand(-1.25e-3);
      else if (name == "cl" || name == "flags" || name == "acc")
        in.a[k] = 1;
      else if (name == "dt" || name == "sdt" || name == "ddt")
        in.a[k] = static_cast<int64_t>(DType::F32);
      else if (name == "fn")
        in.a[k] = static_cast<int64_t>(in.op == Opcode::SfpReduce  ? SfpFn::Sum
                                       : in.op == Opcode::SfpUnary ? SfpFn::Erf
                                                                   : SfpFn::Mul);
      else if (name == "q")
        in.a[k] = static_cast<int64_t>(Queue::Sfp1);
      else if (name == "core" || name == "dst_core")
        in.a[k] = 1;
      else if (name == "tok")
        in.a[k] = 3;
      else
        in.a[k] = 100 + static_cast<int64_t>(k);
    }
    p.cores[static_cast<size_t>(i % 2)].push_back(in);
  }
  p.cores[0].push_back(make_instr(Opcode::Halt, {}));
  p.cores[1].push_back(make_instr(Opcode::Halt, {}));
  return p;
}

}  // namespace

TEST(Isa, TableHasEveryInstructionTheFirstSliceNeeds) {
  for (const char* m :
       {"dma.load", "dma.store", "pt.mm", "sfp.un", "sfp.bin", "sfp.red", "sfp.cvt", "sfp.sel",
        "sfp.fill", "ring.send", "sync.sig", "sync.wait", "barrier", "halt"})
    EXPECT_NE(find_op(m), nullptr) << m;
}

TEST(Isa, BinaryRoundTripIsExact) {
  Program p = every_opcode_program();
  validate(p);
  auto bytes = encode(p);
  EXPECT_TRUE(is_binary_program(bytes));
  EXPECT_EQ(decode(bytes), p);
}

TEST(Isa, AssemblyRoundTripIsExact) {
  Program p = every_opcode_program();
  std::string text = disassemble(p);
  Program q = assemble(text, "t.s");
  EXPECT_EQ(q, p);
  EXPECT_EQ(disassemble(q), text);
}

TEST(Isa, AssemblerTakesDefaultsAndNames) {
  Program p = assemble(
      ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 k\n.core 0\n"
      "  dma.load dram=0 lx=128 bytes=256   ; defaults for the rest\n"
      "  sfp.un cl=1 fn=exp dt=f16 dst=0 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 rows=2 cols=64\n"
      "  sync.sig q=pt1 tok=2\n  halt\n",
      "t.s");
  ASSERT_EQ(p.cores[0].size(), 4u);
  EXPECT_EQ(p.cores[0][0].get("rows"), 1);
  EXPECT_EQ(p.cores[0][0].get("lx"), 128);
  EXPECT_EQ(p.cores[0][1].get("fn"), static_cast<int64_t>(SfpFn::Exp));
  EXPECT_EQ(queue_of(p.cores[0][1]), Queue::Sfp1);
  EXPECT_EQ(queue_of(p.cores[0][2]), Queue::Pt1);
}

TEST(Isa, AssemblerErrorsNameFileLineAndOperand) {
  auto expect_error = [](const std::string& text, const std::string& needle) {
    try {
      assemble(text, "bad.s");
      FAIL() << "no error for: " << text;
    } catch (const spyre::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const std::string head = ".spyre 1\n.cores 1\n.core 0\n";
  expect_error(head + "pt.mm cl=0\n", "bad.s:4");
  expect_error(head + "pt.mm cl=0\n", "needs operand 'a'");
  expect_error(head + "frobnicate x=1\n", "unknown instruction 'frobnicate'");
  expect_error(head + "dma.load dram=0 lx=0 bytes=1 colour=3\n", "no operand 'colour'");
  expect_error(head + "dma.load dram=zero lx=0 bytes=1\n", "expected an integer for dram");
  expect_error(".cores 1\n", "missing '.spyre 1' header");
  expect_error(head + "sfp.red cl=0 fn=exp dt=f32 dst=0 dst_rs=1 a=0 a_rs=1 a_cs=1 rows=1 cols=1\n",
               "does not fit sfp.red");
}

TEST(Isa, CorruptBinariesAreRejectedWithPosition) {
  auto good = encode(every_opcode_program());
  auto expect_error = [](std::vector<uint8_t> b, const std::string& needle) {
    try {
      decode(b, "prog.bin");
      FAIL() << "no error";
    } catch (const spyre::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("prog.bin"), std::string::npos) << e.what();
    }
  };
  auto truncated = good;
  truncated.resize(good.size() / 2);
  expect_error(truncated, "truncated");
  auto bad_magic = good;
  bad_magic[0] = 'X';
  expect_error(bad_magic, "bad magic");
  auto bad_version = good;
  bad_version[8] = 99;
  expect_error(bad_version, "version 99");
  // The first instruction of core 0 follows the header; find it by encoding an empty-core
  // program with the same header and corrupt the opcode there.
  Program p = every_opcode_program();
  auto header_len = encode([&] {
                      Program q = p;
                      q.cores.assign(2, {});
                      return q;
                    }())
                        .size() -
                    8 - 16;
  auto bad_op = good;
  bad_op[header_len + 8] = 0xff;
  bad_op[header_len + 9] = 0x7f;
  expect_error(bad_op, "unknown opcode");
  auto huge_count = good;
  for (int i = 0; i < 8; ++i) huge_count[header_len + static_cast<size_t>(i)] = 0xff;
  expect_error(huge_count, "exceeds the file size");
}

TEST(Isa, ValidateNamesCoreAndInstruction) {
  Program p = every_opcode_program();
  // pt.mm is opcode 2, so it is core 0's second instruction; give it corelet 5.
  ASSERT_EQ(p.cores[0][1].op, Opcode::PtMatmul);
  p.cores[0][1].a[0] = 5;
  try {
    validate(p);
    FAIL();
  } catch (const spyre::Error& e) {
    EXPECT_NE(std::string(e.what()).find("core 0 instruction 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pt.mm"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cl=5"), std::string::npos) << e.what();
  }
}

TEST(Isa, MarkdownDocListsEveryMnemonic) {
  std::string md = isa_markdown();
  for (int i = 0; i < num_opcodes(); ++i)
    EXPECT_NE(md.find(std::string(op_info(static_cast<Opcode>(i)).mnemonic)), std::string::npos);
}

TEST(DType, Fp16ConversionRoundsToNearestEven) {
  EXPECT_EQ(f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(f16_to_f32(0x3c00), 1.0f);
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties go to the even mantissa (1.0).
  EXPECT_EQ(f32_to_f16(1.0f + 1.0f / 2048), 0x3c00);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // rounds up to infinity
  EXPECT_EQ(f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(dtype_from_name("torch.float16"), DType::F16);
  EXPECT_THROW(dtype_from_name("complex64"), spyre::Error);
}
