#include "bindings.h"

#include "arena_cache.h"

#include <pybind11/stl.h>

#include "spyre/compiler/cost.h"
#include "spyre/compiler/ir.h"
#include "spyre/error.h"
#include "spyre/io.h"
#include "spyre/isa/format.h"
#include "spyre/isa/loops.h"
#include "spyre/runner/dram_bound.h"
#include "spyre/runner/provenance.h"
#include "spyre/runner/runner.h"

namespace py = pybind11;

namespace spyre::python {

namespace {

runner::Settings settings(const std::string& arch, const std::vector<std::string>& sets) {
  runner::Settings s;
  s.arch = arch.empty() ? "spyre" : arch;
  s.sets = sets;
  return s;
}

}  // namespace

// A Python host for host fallbacks: host(call_json: str, dram: memoryview) runs one call
// (spyre_sim/host_fallback.py execute). The simulator runs without the GIL; the call takes it.
// A Python exception becomes spyre::Error naming the call's op.
runner::HostFn host_callback(py::object host) {
  return [host = std::move(host)](const nlohmann::json& call, uint8_t* dram, uint64_t bytes) {
    py::gil_scoped_acquire gil;
    try {
      host(call.dump(), py::memoryview::from_memory(dram, static_cast<py::ssize_t>(bytes)));
    } catch (py::error_already_set& e) {
      throw Error("host.call " + call.value("op", std::string("?")), e.what());
    }
  };
}

namespace {

py::list bindings_list(const std::vector<compiler::TensorBinding>& bs) {
  py::list out;
  for (const auto& b : bs) {
    py::dict d;
    d["name"] = b.name;
    d["dtype"] = std::string(isa::dtype_name(b.dtype));
    d["size"] = b.size;
    d["stride"] = b.stride;
    d["storage_bytes"] = runner::Executable::storage_bytes(b);
    d["mutated"] = b.mutated;
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_core(py::module_& m) {
  m.doc() = "spyre-sim's C++ core: compiler, SystemC chip model and traces";
  install_arena_cache();  // frame-stack chunks reused instead of mmap'd per call (arena_cache.h)
  m.def("_arena_cache_stats", [] {
    const ArenaCacheStats s = arena_cache_stats();
    return py::dict(py::arg("fresh") = s.fresh, py::arg("reused") = s.reused,
                    py::arg("kept") = s.kept);
  });
  static py::exception<Error> error(m, "SpyreError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::set_error(error, e.what());
    }
  });

  py::class_<runner::Executable>(m, "Executable")
      .def_static(
          "from_ir",
          [](const std::string& ir_text, const std::string& arch,
             const std::vector<std::string>& sets, const std::string& file, bool cache) {
            runner::Settings s = settings(arch, sets);
            if (cache) s.cache = runner::ProgramCache::from_env();
            return runner::Executable::from_ir(compiler::ir::parse_ir_json(ir_text, file), s, file);
          },
          py::arg("ir_json"), py::arg("arch") = "spyre",
          py::arg("sets") = std::vector<std::string>{}, py::arg("file") = "<ir>",
          py::arg("cache") = false)
      .def_static(
          "from_program_file",
          [](const std::string& path, const std::string& arch,
             const std::vector<std::string>& sets) {
            return runner::Executable::from_program(isa::load_program(path), settings(arch, sets));
          },
          py::arg("path"), py::arg("arch") = "spyre", py::arg("sets") = std::vector<std::string>{})
      .def(
          "run",
          [](const runner::Executable& e, const std::vector<py::bytes>& inputs,
             const std::string& trace, bool timing_only, const std::string& trace_filter,
             const std::string& trace_detail, const py::object& host) {
            std::vector<std::string> in;
            for (const auto& b : inputs) in.emplace_back(b);
            runner::RunOptions o;
            if (!host.is_none()) o.host = host_callback(host);
            o.trace_path = trace;
            o.timing_only = timing_only;
            o.trace_filter = trace_filter;
            o.trace_detail = traces::parse_trace_detail(trace_detail, "trace_detail");
            runner::RunOutput out;
            {
              py::gil_scoped_release release;
              out = e.run(std::move(in), o);
            }
            py::list outs;
            for (const auto& s : out.outputs) outs.append(py::bytes(s));
            py::dict d;
            d["outputs"] = outs;
            py::dict mutated;  // input index -> its storage after the run (written in place)
            for (const auto& [i, bytes] : out.mutated) mutated[py::int_(i)] = py::bytes(bytes);
            d["mutated"] = mutated;
            d["summary"] = out.summary.dump();
            return d;
          },
          py::arg("inputs"), py::arg("trace") = "", py::arg("timing_only") = false,
          py::arg("trace_filter") = "", py::arg("trace_detail") = "summary",
          py::arg("host") = py::none())
      .def_property_readonly("inputs",
                             [](const runner::Executable& e) { return bindings_list(e.inputs()); })
      .def_property_readonly("outputs",
                             [](const runner::Executable& e) { return bindings_list(e.outputs()); })
      .def_property_readonly("report",
                             [](const runner::Executable& e) { return e.report().dump(); })
      .def_property_readonly("from_cache",
                             [](const runner::Executable& e) { return e.from_cache(); })
      .def_property_readonly(
          "assembly", [](const runner::Executable& e) { return isa::disassemble(e.program()); })
      .def_property_readonly("arch_yaml",
                             [](const runner::Executable& e) { return e.config().to_yaml(); });

  // The cache folder's raw entries ($SPYRE_SIM_CACHE, runner/program_cache.h), for caches the
  // Python front end keys itself (spyre_capture/ir_cache.py: captured IR).
  m.def(
      "cache_load",
      [](const std::string& kind, const std::string& key) -> py::object {
        const auto bytes = runner::ProgramCache::from_env().load_entry(kind, key);
        if (!bytes) return py::none();
        return py::bytes(reinterpret_cast<const char*>(bytes->data()), bytes->size());
      },
      py::arg("kind"), py::arg("key"));
  m.def(
      "cache_store",
      [](const std::string& kind, const std::string& key, const py::bytes& data) {
        const std::string s = data;
        runner::ProgramCache::from_env().store_entry(kind, key,
                                                     std::vector<uint8_t>(s.begin(), s.end()));
      },
      py::arg("kind"), py::arg("key"), py::arg("data"));
  m.def("cache_enabled", [] { return runner::ProgramCache::from_env().enabled(); });

  m.def("format_summary",
        [](const std::string& s) { return runner::format_summary(nlohmann::json::parse(s)); });
  m.def("merge_summaries", [](const std::vector<std::string>& parts) {
    std::vector<nlohmann::json> js;
    for (const auto& p : parts) js.push_back(nlohmann::json::parse(p));
    return runner::merge_summaries(js).dump();
  });
  m.def(
      "write_output_folder",
      [](const std::string& dir, const std::string& summary, const std::string& report,
         const std::string& arch, const std::vector<std::string>& sets,
         const std::string& provenance) {
        auto parse = [](const std::string& t) {
          return t.empty() ? nlohmann::json(nullptr) : nlohmann::json::parse(t);
        };
        runner::write_output_folder(dir, nlohmann::json::parse(summary), parse(report),
                                    settings(arch, sets).config(), parse(provenance));
      },
      py::arg("dir"), py::arg("summary"), py::arg("report"), py::arg("arch"), py::arg("sets"),
      py::arg("provenance") = "");
  m.def("build_info", [] {
    runner::BuildInfo b = runner::build_info();
    py::dict d;
    d["version"] = b.version;
    d["commit"] = b.commit;
    d["dirty"] = b.dirty;
    return d;
  });
  m.def("version_line", &runner::version_line);
  m.def(
      "provenance",
      [](const std::vector<std::string>& command, const std::string& torch_version,
         const std::string& torch_source, const std::string& arch,
         const std::vector<std::string>& sets, const std::string& effective_config) {
        return runner::provenance(command, torch_version, torch_source, arch, sets,
                                  effective_config)
            .dump();
      },
      py::arg("command"), py::arg("torch_version"), py::arg("torch_source"), py::arg("arch"),
      py::arg("sets"), py::arg("effective_config") = "arch.yaml");
  // Every `--set` key: the chip's parameters (params.def) and the compiler's options.
  m.def("param_table", [] {
    py::list out;
    for (const auto& p : arch::param_table()) {
      py::dict d;
      d["key"] = p.key;
      d["type"] = p.type;
      d["unit"] = p.unit;
      d["range"] = p.range;
      d["description"] = p.description;
      d["default"] = p.default_text;
      out.append(d);
    }
    return out;
  });
  m.def("compiler_option_keys", [] {
    std::vector<std::string> keys;
    for (const auto& k : compiler::CompileOptions::keys()) keys.push_back("compiler." + k);
    return keys;
  });
  m.def("preset_names", &arch::preset_names);
  // The compiler's prediction of each kernel of a program (cost.h), for checking the cost
  // model against the simulator: [{kernel, cycles, dram_bytes}] in kernel order.
  m.def(
      "predict_program",
      [](const std::string& path, const std::string& arch, const std::vector<std::string>& sets) {
        const isa::Program p = isa::load_program(path);
        auto s = settings(arch, sets);
        const arch::ArchConfig cfg = s.config();
        const compiler::CompileOptions opts = s.compile_options();
        py::list out;
        for (size_t k = 0; k < std::max<size_t>(1, p.kernels.size()); ++k) {
          std::vector<std::vector<isa::Instr>> per_core;
          for (const auto& core : p.cores) {
            per_core.emplace_back();
            for (const auto& in : isa::expand_stream(core, 0))
              if (in.kernel == k) per_core.back().push_back(in);
          }
          const auto pred = compiler::predict(per_core, cfg, opts.cost);
          py::dict d;
          d["kernel"] = k < p.kernels.size() ? p.kernels[k] : std::string("0");
          d["cycles"] = pred.cycles;
          d["dram_bytes"] = pred.dram_bytes;
          out.append(d);
        }
        return out;
      },
      py::arg("path"), py::arg("arch") = "spyre", py::arg("sets") = std::vector<std::string>{});
  // The DRAM bound of moving these bytes on this configuration (runner/dram_bound.h).
  m.def(
      "dram_bound",
      [](const std::string& arch, const std::vector<std::string>& sets, uint64_t read_bytes,
         uint64_t write_bytes) {
        runner::DramBound b;
        {
          const arch::ArchConfig cfg = settings(arch, sets).config();
          py::gil_scoped_release release;
          b = runner::dram_bound(cfg, read_bytes, write_bytes);
        }
        py::dict d;
        d["cycles"] = b.cycles;
        d["read_fraction"] = b.read_fraction;
        d["gbps"] = b.gbps;
        return d;
      },
      py::arg("arch"), py::arg("sets"), py::arg("read_bytes"), py::arg("write_bytes"));
  // Validates an architecture and its overrides (chip and compiler keys) without compiling:
  // throws SpyreError naming the key and what was expected.
  m.def(
      "check_settings",
      [](const std::string& arch, const std::vector<std::string>& sets) {
        auto s = settings(arch, sets);
        s.config();
        s.compile_options();
      },
      py::arg("arch"), py::arg("sets"));
  m.def(
      "arch_yaml",
      [](const std::string& arch, const std::vector<std::string>& sets) {
        return settings(arch, sets).config().to_yaml();
      },
      py::arg("arch") = "spyre", py::arg("sets") = std::vector<std::string>{});
}

}  // namespace spyre::python
