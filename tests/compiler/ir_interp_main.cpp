// spyre_ir_interp IR.json INPUTS.json: the C++ reference interpreter (ir_interp.h: every value
// in double, every store rounded to its buffer's dtype) on given inputs, for
// tests/python/test_interpreters_agree.py, which checks it against tests/python/ir_eval.py.
// INPUTS.json: {"inputs": [[...], ...]}, each graph input's elements in row-major order of its
// buffer's size. Prints {"outputs": [[...], ...]}: each graph output's elements, row-major (a
// NaN or infinity as the strings "nan", "inf", "-inf"). Exit 1 with a message on any error.
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir_interp.h"

namespace {

nlohmann::json read_json(const char* path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error(std::string(path) + ": cannot be read");
  return nlohmann::json::parse(f);
}

nlohmann::json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: spyre_ir_interp IR.json INPUTS.json\n";
    return 2;
  }
  try {
    const nlohmann::json ir = read_json(argv[1]), in = read_json(argv[2]);
    spyre::compiler::test::IrInterp ref(ir);
    const auto& names = ir.at("inputs");
    if (in.at("inputs").size() != names.size())
      throw std::runtime_error("INPUTS.json: " + std::to_string(in.at("inputs").size()) +
                               " inputs, the graph has " + std::to_string(names.size()));
    for (size_t i = 0; i < names.size(); ++i) {
      for (const auto& b : ir.at("buffers")) {
        if (b.at("name") != names[i]) continue;
        const nlohmann::json view = {{"buffer", names[i]},
                                     {"size", b.at("size")},
                                     {"stride", b.at("stride")},
                                     {"offset", b.at("offset")}};
        ref.write_view(view, in.at("inputs")[i].get<std::vector<double>>());
      }
    }
    ref.run();
    nlohmann::json outs = nlohmann::json::array();
    for (const auto& o : ir.at("outputs")) {
      nlohmann::json vals = nlohmann::json::array();
      for (double v : ref.read_view(o)) vals.push_back(number(v));
      outs.push_back(vals);
    }
    std::cout << nlohmann::json{{"outputs", outs}}.dump() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "spyre_ir_interp: " << e.what() << "\n";
    return 1;
  }
}
