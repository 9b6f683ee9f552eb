#pragma once
// A pointwise or reduction node as a program over 2-D tiles, ready for the SFP.
//
// The iteration space is flattened to rows x cols: cols is the innermost variable (for a
// reduction, the reduction variables), rows the rest. Adjacent variables are merged when every
// load/store index allows it (coeff(outer) == coeff(inner) * size(inner)); a single variable is
// split into rows x cols; variables that cannot be merged stay as outer loops. Each SSA value
// gets a class: does it vary along the tile's rows (r), its cols (c), and does it depend on any
// row variable at all (tiled)? Values that do not are computed once per core (hoisted);
// broadcasts are operands with stride 0. Arithmetic on fp16/bf16 is done in fp32, rounding
// only at to_dtype and stores, as Inductor's CPU code does.
#include <cstdint>
#include <string>
#include <vector>

#include "spyre/arch/arch.h"
#include "spyre/compiler/ir.h"
#include "spyre/isa/isa.h"

namespace spyre::compiler {

struct Dim {
  int64_t size = 1;
  std::vector<int64_t> coeff;  // per access
};

// A load or store: element index = offset + sum over dims of coeff * index.
struct MemAccess {
  std::string buffer;
  std::string expr;
  isa::DType dt = isa::DType::F16;  // the storage's dtype
  int64_t offset = 0;
  int64_t limit = 0;  // Gather: valid element indices are [0, limit) (the buffer's extent)
};

// Where `buffer`'s data starts in its storage, in elements: its offset plus those of the
// buffers it views (an IR index counts from the buffer's own start, e.g. the second part of a
// `cat`; DRAM addresses count from the storage's start).
int64_t storage_offset(const ir::Graph& g, const std::string& buffer);

struct IterSpace {
  std::vector<Dim> outer;  // looped, outermost first
  Dim row;                 // rows of a tile
  Dim col;                 // cols of a tile
  // A transpose (some access contiguous along the rows, not the cols): row and col are blocks
  // of about one DRAM word each (the rest of both dims are outer loops) and work is divided in
  // whole blocks of row.size rows, so every DMA run on either side is a whole word.
  bool blocked = false;
  // The cols are a cut of one flattened variable or of long rows, not the rows of the tensors
  // it walks (Spyre's device layout lays those out by stick columns: loops.cpp).
  bool cut = false;
  int64_t outer_count() const;
  int64_t rows_total() const { return outer_count() * row.size; }
};

struct TVal {
  isa::DType dt = isa::DType::F32;
  bool r = false, c = false, tiled = false;
  bool transposed = false;  // LX layout [cols, rows] (a load whose rows are contiguous)
};

struct TOp {
  // Iota: dst(r, c) = the affine index `access` (a MemAccess with an empty buffer) at the
  // element, i.e. offset + sum coeff * var (index_expr).
  // Gather: dst = the buffer of `access` at the element indices src[0] (int64, the same shape
  // and layout as dst): a load whose index holds an indirect_indexing symbol (dma.gather).
  // Scatter: the buffer of `access` at the element indices src[1] = src[0]: a store whose
  // index holds an indirect_indexing symbol (dma.scatter; an index_copy into a KV cache). The
  // value covers the whole tile; the indices are one per element, or one per row when each
  // row is a contiguous run (src[1] does not vary along the columns).
  enum Kind {
    Load,
    Store,
    Unary,
    Binary,
    Select,
    Reduce,
    Convert,
    Fill,
    Iota,
    Gather,
    Scatter
  } kind = Unary;
  isa::SfpFn fn = isa::SfpFn::Copy;
  int dst = -1;          // value written (Store: none)
  std::vector<int> src;  // values read
  int access = -1;       // Load/Store/Iota
  double value = 0;      // Fill
};

struct TileProgram {
  IterSpace space;
  std::vector<MemAccess> accesses;
  std::vector<TVal> vals;
  std::vector<TOp> ops;
  bool is_reduction = false;
};

// Indirect indices (indirect_indexing symbols) and masked sub-blocks become Gather ops (a
// store at an indirect index: a Scatter);
// FloorDiv/ModularIndexing of a variable splits it into sub-dimensions where the divisors
// nest; where they do not, the index is computed on the SFP and the load is a gather.
// Throws spyre::Error (via `fail`) for what is not supported: other non-affine or negative
// indices, non-affine index_expr, unknown op names, reductions other
// than sum/max/min/prod/welford_reduce, reductions over unmergeable variables. `keep_2d`: a
// pointwise node over exactly two variables keeps them as rows x cols, unmerged (a matmul epilogue
// works on the output tile's rows and cols).
TileProgram build_tile_program(const ir::Graph& g, const ir::Node& n, const arch::ArchConfig& cfg,
                               const std::string& where, bool keep_2d = false);

}  // namespace spyre::compiler
