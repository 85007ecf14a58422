// Turns fuzz bytes into small HDF5 files written with the HDF5 C API (core driver, one write at close): the
// groups, datasets (dtype, shape, layout, values) and attributes that the SONATA readers look at. Paths are
// built from the harness's tables, so that most operations hit names the readers know.
//
// Encoding (tests/fuzz/make_seeds.py writes the same): a sequence of operations until the bytes run out,
// each an opcode byte (% 4) and its operands, one byte each unless noted:
//   0 group     file, parent                      creates the group parents[parent]
//   1 dataset   file, parent, leaf, dtype, shape, [dims], layout, mode, values
//                 dtype  % 14: i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 i32be f64be str8 vlen-str
//                 shape  % 4:  0 scalar, 1 one-d (dims: one byte % 65), 2 two-d (two bytes % 9), 3 null
//                 layout % 4:  0 contiguous, 1 compact, 2 chunked, 3 chunked+shuffle+gzip; chunked one- and
//                              two-d shapes take a chunk byte (extent 1 + c % 16, fletcher32 if c & 16)
//                 mode   % 5:  0 raw element bytes (vlen strings: a length byte, then the bytes),
//                              1 iota from an int8 start with an int8 step, 2 one int8 per element,
//                              3 one special double per element (kSpecial), 4 one int8 for all;
//                              modes 1..4 are converted by HDF5 from int64 / double (strings: printed)
//   2 attribute file, parent, leaf (== leaves.size(): on the group itself), name, atype, value
//                 atype  % 7:  0 vlen string, 1 fixed string, 2 two vlen strings, 3 int64, 4 two uint32,
//                              5 float64, 6 two fixed strings
//                 value: a byte; < strings.size() picks strings[value] (numbers: the value itself as int8
//                        or a special double), else a raw string (a length byte % 17, then the bytes)
//   3 soft link file, parent, leaf, target parent, target leaf
#pragma once
#include <string>
#include <vector>

#include "fuzz_support.hpp"

namespace dpointnet::fuzz {

struct H5Tables {
  std::vector<std::string> files;       // file names in the scratch directory
  std::vector<std::string> parents;     // group paths ("/" for the root)
  std::vector<std::string> leaves;      // object names under a parent
  std::vector<std::string> attr_names;  // attribute names
  std::vector<std::string> strings;     // string values (attributes, string datasets)
};

// The special doubles of mode 3 and of numeric attributes.
extern const double kSpecial[16];

// Decodes operations from `in`, writes every file of `t.files` (empty ones too) and returns their paths.
// Operations HDF5 refuses (a duplicate name, a child of a dataset) are skipped.
std::vector<std::string> build_h5_files(Bytes& in, const H5Tables& t);

}  // namespace dpointnet::fuzz
