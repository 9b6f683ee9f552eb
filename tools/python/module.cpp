// The extension module `import spyre_sim` loads (the CLI embeds the same bindings instead).
#include "bindings.h"

PYBIND11_MODULE(spyre_sim_core, m) { spyre::python::bind_core(m); }
