// Subcommands that work on program and configuration files, without Python.
#include <cstdio>
#include <iostream>

#include "commands.h"
#include "spyre/arch/arch.h"
#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/isa/format.h"
#include "spyre/runner/runner.h"

namespace spyre::cli {

int asm_command(const std::string& in, const std::string& out) {
  auto p = isa::assemble(read_file_text(in), in);
  auto b = isa::encode(p);
  write_file_atomic(out, b.data(), b.size());
  std::cout << out << ": " << p.num_instructions() << " instructions on " << p.num_cores
            << " cores\n";
  return 0;
}

int disasm_command(const std::string& in, const std::string& out) {
  auto p = isa::load_program(in);
  if (out.empty())
    std::cout << isa::disassemble(p);
  else
    write_file_atomic(out, isa::disassemble(p));
  return 0;
}

int compile_command(const std::string& in, const std::string& out, const std::string& report,
                    const std::string& arch, const std::vector<std::string>& sets) {
  runner::Settings s{arch, sets, {}};
  nlohmann::json ir;
  try {
    ir = nlohmann::json::parse(read_file_text(in));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(in, std::string("malformed JSON: ") + e.what());
  }
  auto exe = runner::Executable::from_ir(ir, s, in);
  isa::save_program(exe.program(), out);
  if (!report.empty()) write_file_atomic(report, exe.report().dump(2) + "\n");
  std::cout << out << ": " << exe.program().num_instructions() << " instructions, "
            << exe.program().kernels.size() << " kernels on " << exe.program().num_cores
            << " cores\n";
  return 0;
}

int arch_show_command(const std::string& name, const std::vector<std::string>& sets) {
  auto cfg = arch::load_arch(name, sets);
  std::printf("architecture %s\n", cfg.name.c_str());
  std::printf("%-32s %-14s %-12s %-11s %s\n", "parameter", "value", "unit", "range", "description");
  for (const auto& p : arch::param_table())
    std::printf("%-32s %-14s %-12s %-11s %s\n", p.key.c_str(), cfg.get_text(p.key).c_str(),
                p.unit.c_str(), p.range.c_str(), p.description.c_str());
  std::printf("%-32s %-14lld %-12s %-11s %s\n", "(derived) lx.usable_bytes",
              static_cast<long long>(cfg.lx_usable_bytes()), "bytes", "",
              "LX the compiler may plan into");
  return 0;
}

int arch_list_command() {
  for (const auto& n : arch::preset_names()) std::cout << n << "\n";
  return 0;
}

int isa_doc_command() {
  std::cout << isa::isa_markdown();
  return 0;
}

}  // namespace spyre::cli
