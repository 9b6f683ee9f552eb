#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "spyre/error.h"
#include "spyre/isa/format.h"
#include "spyre/isa/loops.h"

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
    if (is_loop_word(info.op)) continue;  // valid only in a loop: added below
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
  // A loop of 3 over the first instruction (dma.load), its dram operand stepped by 64.
  p.cores[0].push_back(make_instr(Opcode::Loop, {{"count", 3}, {"len", 1}}));
  p.cores[0].push_back(make_instr(Opcode::LoopStep, {{"i", 0}, {"o", 0}, {"delta", 64}}));
  p.cores[0].push_back(p.cores[0][0]);
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

// SPYRE_OPERAND's compile-time slots say what OpInfo::index_of says, for every name of every
// opcode, and read what get() reads; an operand the opcode lacks throws get()'s error.
TEST(Isa, CompileTimeOperandSlotsAgreeWithTheTable) {
  ASSERT_EQ(detail::kOpcodes, static_cast<size_t>(num_opcodes()));
  for (int code = 0; code < num_opcodes(); ++code) {
    const OpInfo& info = op_info(static_cast<Opcode>(code));
    Instr in;
    in.op = info.op;
    for (size_t i = 0; i < info.operands.size(); ++i) in.a[i] = 1000 + static_cast<int64_t>(i);
    for (int other = 0; other < num_opcodes(); ++other) {
      for (const OperandSpec& o : op_info(static_cast<Opcode>(other)).operands) {
        const detail::OperandSlots s = detail::operand_slots(o.name);
        EXPECT_EQ(s.at[code], info.index_of(o.name)) << info.mnemonic << " " << o.name;
        if (info.index_of(o.name) >= 0) {
          EXPECT_EQ(in.operand(s), in.get(o.name));
        } else {
          std::string got, want;
          try {
            in.operand(s);
          } catch (const spyre::Error& e) {
            got = e.what();
          }
          try {
            in.get(o.name);
          } catch (const spyre::Error& e) {
            want = e.what();
          }
          EXPECT_FALSE(got.empty()) << info.mnemonic << " " << o.name;
          EXPECT_EQ(got, want);
        }
      }
    }
  }
  const Instr load = make_instr(Opcode::DmaLoad, {{"dram", 7}, {"lx", 64}, {"bytes", 128}});
  EXPECT_EQ(SPYRE_OPERAND(load, "lx"), 64);
  EXPECT_EQ(SPYRE_OPERAND(load, "mtok"), -1);  // a default
  EXPECT_THROW(SPYRE_OPERAND(load, "fn"), spyre::Error);
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

TEST(Isa, NanOperandsKeepTheirSignAndPayloadThroughTheAssembly) {
  // Found by the binary fuzz harness (tests/data/fuzz/binary/nan_fill_value_with_payload.bin):
  // "%.17g" printed every NaN as nan or -nan, which assembled to another bit pattern.
  Program p = assemble(
      ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 k\n.core 0\n  sfp.fill cl=0 dt=f32 dst=0 "
      "dst_rs=1 dst_cs=1 rows=1 cols=1 "
      "value=0\n  halt\n",
      "t.s");
  for (uint64_t bits : {0xfff8000000000001ull, 0x7ff0000000000001ull, 0x7ff8000000000000ull}) {
    int64_t v = 0;
    std::memcpy(&v, &bits, sizeof v);
    for (size_t k = 0; k < op_info(Opcode::SfpFill).operands.size(); ++k)
      if (op_info(Opcode::SfpFill).operands[k].is_float) p.cores[0][0].a[k] = v;
    const std::string text = disassemble(p);
    EXPECT_NE(text.find("value=bits:0x"), std::string::npos) << text;
    EXPECT_EQ(assemble(text, "t.s"), p) << text;
  }
  const std::string head =
      ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 k\n.core 0\n  sfp.fill cl=0 dt=f32 dst=0 "
      "dst_rs=1 dst_cs=1 rows=1 cols=1 value=";
  EXPECT_EQ(
      assemble(head + "bits:0x3ff0000000000000\n  halt\n", "t.s").cores[0][0].get_float("value"),
      1.0);
  for (const char* bad :
       {"bits:0x", "bits:0x 1", "bits:0x-1", "bits:0x10000000000000000", "bits:0xg"}) {
    try {
      assemble(head + bad + "\n  halt\n", "bad.s");
      ADD_FAILURE() << "no error for value=" << bad;
    } catch (const spyre::Error& e) {
      EXPECT_NE(std::string(e.what()).find("up to 16 hex digits"), std::string::npos) << e.what();
    }
  }
}

TEST(Isa, KernelIdsWithoutAKernelTableRoundTrip) {
  // Found by the asm fuzz harness (tests/data/fuzz/asm/kernel_id_without_kernel_table.s): with
  // no .kernel, instructions were accepted with id 0 but `.k 0` in the disassembly was not.
  const std::string body =
      "  dma.load dram=0 lx=0 bytes=64\n.k 3\n  dma.load dram=0 lx=0 bytes=64\n";
  Program p = assemble(".spyre 1\n.cores 1\n.dram_bytes 4096\n.core 0\n" + body, "t.s");
  EXPECT_EQ(p.cores[0][1].kernel, 3);
  EXPECT_EQ(assemble(disassemble(p), "t.s"), p);
  try {
    assemble(".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 k\n.core 0\n" + body, "bad.s");
    ADD_FAILURE() << "an undeclared kernel id was accepted beside a kernel table";
  } catch (const spyre::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 3 is not declared"), std::string::npos)
        << e.what();
  }
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

// The integer-arithmetic conversions (for compilers without _Float16) against _Float16: every
// half, and every float at a stride of 4099 (a prime: every residue of the 13 dropped bits, every
// exponent) plus every float within 2^16 of the overflow threshold and of the smallest subnormal's
// half.
#ifdef __FLT16_MANT_DIG__
TEST(IsaDtype, SoftHalfConversionsEqualFloat16) {
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  auto hard = [](float f) {
    _Float16 v = static_cast<_Float16>(f);
    uint16_t h;
    std::memcpy(&h, &v, 2);
    return h;
  };
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    _Float16 v;
    const auto h16 = static_cast<uint16_t>(h);
    std::memcpy(&v, &h16, 2);
    ASSERT_EQ(bits(f16_to_f32_soft(h16)), bits(static_cast<float>(v))) << std::hex << h;
  }
  auto check = [&](uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    ASSERT_EQ(f32_to_f16_soft(f), hard(f)) << std::hex << u;
  };
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) check(static_cast<uint32_t>(u));
  for (uint32_t base : {0x477fe000u, 0x33000000u, 0x387fc000u})  // 65520, 2^-25, 2^-14
    for (uint32_t d = 0; d < (1u << 16); ++d)
      for (uint32_t sign : {0u, 0x80000000u}) check((base - (1u << 15) + d) | sign);
}
#endif

// OCP FP8 E4M3FN: round to nearest even, satfinite (+-448), NaN 0x7f/0xff, subnormals 2^-9.
TEST(DType, F8E4M3ConversionEdgeCases) {
  EXPECT_EQ(f32_to_f8e4m3(1.0f), 0x38);  // exponent 7 (bias), mantissa 0
  EXPECT_EQ(f8e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(f32_to_f8e4m3(448.0f), 0x7e);  // max finite: 1.75 * 2^8
  EXPECT_EQ(f8e4m3_to_f32(0x7e), 448.0f);
  EXPECT_EQ(f8e4m3_to_f32(0xfe), -448.0f);
  // Beyond 448 (464 is the midpoint to the 480 that E4M3FN lacks), and infinity: saturate.
  EXPECT_EQ(f32_to_f8e4m3(464.0f), 0x7e);
  EXPECT_EQ(f32_to_f8e4m3(1e9f), 0x7e);
  EXPECT_EQ(f64_to_f8e4m3(INFINITY), 0x7e);
  EXPECT_EQ(f64_to_f8e4m3(-INFINITY), 0xfe);
  EXPECT_EQ(f32_to_f8e4m3(-500.0f), 0xfe);
  // NaN keeps its sign; 0x7f and 0xff decode to NaN (no infinities in E4M3FN).
  EXPECT_EQ(f64_to_f8e4m3(NAN), 0x7f);
  EXPECT_EQ(f64_to_f8e4m3(-NAN), 0xff);
  EXPECT_TRUE(std::isnan(f8e4m3_to_f32(0x7f)));
  EXPECT_TRUE(std::isnan(f8e4m3_to_f32(0xff)));
  EXPECT_EQ(f8e4m3_to_f32(0x78), 256.0f);  // exponent 15 is a normal binade
  // Subnormals: field 0, value mantissa * 2^-9; 2^-6 is the smallest normal (0x08).
  EXPECT_EQ(f8e4m3_to_f32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(f8e4m3_to_f32(0x07), std::ldexp(7.0f, -9));
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(1.0, -9)), 0x01);
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(1.0, -6)), 0x08);
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(7.5, -9)), 0x08);  // tie 7|8 -> 8: carries to the normal
  // Ties go to the even mantissa: 2^-10 is halfway between 0 and 2^-9 -> +0; 1.5 * 2^-9
  // between 1 and 2 (x 2^-9) -> 2; 1 + 1/16 between 1 and 1.125 -> 1; 1 + 3/16 -> 1.25;
  // 1.9375 between 1.875 (mantissa 7) and 2 -> 2 (0x40).
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(1.0, -10)), 0x00);
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(1.0, -10) * 1.0001), 0x01);
  EXPECT_EQ(f64_to_f8e4m3(std::ldexp(3.0, -10)), 0x02);
  EXPECT_EQ(f64_to_f8e4m3(1.0625), 0x38);
  EXPECT_EQ(f64_to_f8e4m3(1.1875), 0x3a);
  EXPECT_EQ(f64_to_f8e4m3(1.9375), 0x40);
  EXPECT_EQ(f64_to_f8e4m3(-1.0625), 0xb8);
  EXPECT_EQ(f64_to_f8e4m3(0.0), 0x00);
  EXPECT_EQ(f64_to_f8e4m3(-0.0), 0x80);
  EXPECT_EQ(f64_to_f8e4m3(1e-30), 0x00);
  // Every finite code round-trips; random values equal a brute-force nearest-even search.
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7f) == 0x7f) continue;
    EXPECT_EQ(f64_to_f8e4m3(f8e4m3_to_f32(static_cast<uint8_t>(b))), b) << b;
  }
  uint64_t s = 12345;
  for (int i = 0; i < 20000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double v = std::ldexp(static_cast<double>(s >> 11) / 9007199254740992.0 - 0.5,
                                static_cast<int>((s >> 3) % 22) - 10);  // |v| < 2^10
    int best = -1;
    double bd = 0;
    for (int b = 0; b < 256; ++b) {
      if ((b & 0x7f) == 0x7f || (b >> 7) != (std::signbit(v) ? 1 : 0)) continue;
      const double d = std::fabs(v - f8e4m3_to_f32(static_cast<uint8_t>(b)));
      if (best < 0 || d < bd || (d == bd && (b & 1) == 0)) best = b, bd = d;
    }
    ASSERT_EQ(f64_to_f8e4m3(v), best) << v;  // beyond 448 the nearest finite is 448 itself
  }
  uint8_t e = 0;
  store_element(&e, DType::F8E4M3, -3.3);  // between -3.25 and -3.5: nearer -3.25
  EXPECT_EQ(load_element(&e, DType::F8E4M3), -3.25);
}

TEST(DType, NamesAndWidthsOfFp8AndInt4) {
  EXPECT_EQ(dtype_from_name("f8e4m3"), DType::F8E4M3);
  EXPECT_EQ(dtype_from_name("torch.float8_e4m3fn"), DType::F8E4M3);
  EXPECT_EQ(dtype_from_name("i4"), DType::I4);
  EXPECT_EQ(dtype_from_name("int4"), DType::I4);
  EXPECT_EQ(dtype_name(DType::F8E4M3), "f8e4m3");
  EXPECT_EQ(dtype_name(DType::I4), "i4");
  EXPECT_EQ(static_cast<int>(DType::F8E4M3), 7);  // appended: existing codes unchanged
  EXPECT_EQ(static_cast<int>(DType::I4), 8);
  EXPECT_EQ(dtype_bits(DType::F8E4M3), 8);
  EXPECT_EQ(dtype_bits(DType::I4), 4);
  EXPECT_EQ(dtype_bits(DType::I64), 64);
  EXPECT_EQ(dtype_size_bytes(DType::F8E4M3), 1);
  EXPECT_THROW(dtype_size_bytes(DType::I4), spyre::Error);
  EXPECT_EQ(dtype_storage_bytes(DType::I4, 5), 3);
  EXPECT_EQ(dtype_storage_bytes(DType::F16, 5), 10);
  EXPECT_TRUE(dtype_is_float(DType::F8E4M3));
  EXPECT_FALSE(dtype_is_float(DType::I4));
}

// I4: element e in byte floor(e/2), nibble e%2 (low first); stores truncate and saturate.
TEST(DType, Int4PacksTwoPerByteLowNibbleFirst) {
  uint8_t buf[3] = {0, 0, 0xaa};
  store_element(buf, DType::I4, 0, 3.0);
  store_element(buf, DType::I4, 1, -2.0);
  EXPECT_EQ(buf[0], 0xe3);                  // -2 = 0xe in the high nibble, 3 in the low
  store_element(buf, DType::I4, 2, 100.0);  // saturates to 7
  store_element(buf, DType::I4, 3, -9.7);   // saturates to -8
  EXPECT_EQ(buf[1], 0x87);
  EXPECT_EQ(buf[2], 0xaa);                 // untouched
  store_element(buf, DType::I4, 4, -2.9);  // truncates toward zero: -2, high nibble kept
  EXPECT_EQ(buf[2], 0xae);
  store_element(buf, DType::I4, 5, NAN);  // NaN stores 0
  EXPECT_EQ(buf[2], 0x0e);
  EXPECT_EQ(load_element(buf, DType::I4, 0), 3.0);
  EXPECT_EQ(load_element(buf, DType::I4, 1), -2.0);
  EXPECT_EQ(load_element(buf, DType::I4, 2), 7.0);
  EXPECT_EQ(load_element(buf, DType::I4, 3), -8.0);
  EXPECT_EQ(load_element(buf + 1, DType::I4, -1), -2.0);  // negative index: floor(-1/2) = -1
  EXPECT_EQ(dtype_byte_offset(DType::I4, 5), 2);
  EXPECT_EQ(dtype_byte_offset(DType::I4, -1), -1);
  EXPECT_EQ(dtype_byte_offset(DType::F32, 3), 12);
  EXPECT_EQ(i4_get(0x8f, 0), -1);
  EXPECT_EQ(i4_get(0x8f, 1), -8);
  EXPECT_THROW(load_element(buf, DType::I4), spyre::Error);  // a byte address is not enough
  EXPECT_THROW(store_element(buf, DType::I4, 1.0), spyre::Error);
}

TEST(Isa, Fp8AndInt4AssembleRoundTripAndValidate) {
  const std::string head = ".spyre 1\n.cores 1\n.dram_bytes 4096\n.kernel 0 q\n";
  const std::string body =
      ".core 0\n"
      "  pt.mm cl=0 a=0 b=512 c=1024 m=8 n=64 k=32 lda=32 ldb=64 ldc=64 dt=i4\n"
      "  pt.mm cl=1 a=0 b=512 c=1024 m=8 n=64 k=32 lda=32 ldb=64 ldc=64 dt=f8e4m3\n"
      "  sfp.cvt cl=0 sdt=f32 ddt=f8e4m3 dst=0 dst_rs=64 dst_cs=1 a=256 a_rs=64 a_cs=1 rows=2 "
      "cols=64\n"
      "  sfp.cvt cl=0 sdt=f16 ddt=i4 dst=0 dst_rs=64 dst_cs=1 a=256 a_rs=64 a_cs=1 rows=2 "
      "cols=64\n"
      "  halt\n";
  Program p = assemble(head + ".tensor w parameter int4 size=4,6 stride=6,1 addr=0 bytes=12\n" +
                           ".tensor x input float8_e4m3fn size=8 stride=1 addr=64 bytes=8\n" + body,
                       "t.s");
  EXPECT_EQ(p.tensors[0].dtype, DType::I4);
  EXPECT_EQ(p.tensors[1].dtype, DType::F8E4M3);
  EXPECT_EQ(p.cores[0][0].get("dt"), static_cast<int64_t>(DType::I4));
  EXPECT_EQ(p.cores[0][2].get("ddt"), static_cast<int64_t>(DType::F8E4M3));
  const std::string text = disassemble(p);
  EXPECT_NE(text.find("dt=i4"), std::string::npos) << text;
  EXPECT_NE(text.find("ddt=f8e4m3"), std::string::npos) << text;
  EXPECT_NE(text.find(" i4 "), std::string::npos) << text;
  EXPECT_EQ(assemble(text, "t2.s"), p);
  EXPECT_EQ(decode(encode(p)), p);

  auto expect_error = [&](const std::string& text, const std::string& needle) {
    try {
      assemble(head + text, "bad.s");
      FAIL() << "no error for: " << text;
    } catch (const spyre::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  // I4 beyond pt.mm and sfp.cvt, odd row strides, odd tensor spans: named errors.
  expect_error(
      ".core 0\n  sfp.un cl=0 fn=neg dt=i4 dst=0 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 "
      "rows=1 cols=8\n  halt\n",
      "supported only by pt.mm and sfp.cvt");
  expect_error(
      ".core 0\n  sfp.un cl=0 fn=neg dt=i4 dst=0 dst_rs=64 dst_cs=1 a=0 a_rs=64 a_cs=1 "
      "rows=1 cols=8\n  halt\n",
      "core 0 instruction 0 (sfp.un)");
  expect_error(
      ".core 0\n  pt.mm cl=0 a=0 b=512 c=1024 m=8 n=64 k=31 lda=31 ldb=64 ldc=64 dt=i4\n"
      "  halt\n",
      "operand lda=31 must be even for dtype i4");
  expect_error(
      ".core 0\n  sfp.cvt cl=0 sdt=f16 ddt=i4 dst=0 dst_rs=7 dst_cs=1 a=256 a_rs=64 "
      "a_cs=1 rows=2 cols=7\n  halt\n",
      "operand dst_rs=7 must be even");
  expect_error(".tensor w parameter i4 size=3 stride=1 addr=0 bytes=2\n.core 0\n  halt\n",
               "span must be even");
}
