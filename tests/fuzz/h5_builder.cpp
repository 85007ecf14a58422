#include "h5_builder.hpp"

#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <limits>

namespace dpointnet::fuzz {

const double kSpecial[16] = {0.0,
                             -0.0,
                             1.0,
                             -1.0,
                             0.5,
                             2.5,
                             1e-300,
                             1e300,
                             -1e300,
                             std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             9.3e18,
                             -9.3e18,
                             std::numeric_limits<double>::denorm_min(),
                             65535.5};

namespace {

// Closes an HDF5 id at scope end (ids < 0 are failed calls: nothing to close).
struct Id {
  hid_t id;
  herr_t (*close)(hid_t);
  Id(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  ~Id() {
    if (id >= 0) close(id);
  }
};

constexpr int kTypes = 14;
bool is_string(int k) { return k >= 12; }

hid_t make_type(int k) {
  switch (k) {
    case 0:
      return H5Tcopy(H5T_STD_I8LE);
    case 1:
      return H5Tcopy(H5T_STD_U8LE);
    case 2:
      return H5Tcopy(H5T_STD_I16LE);
    case 3:
      return H5Tcopy(H5T_STD_U16LE);
    case 4:
      return H5Tcopy(H5T_STD_I32LE);
    case 5:
      return H5Tcopy(H5T_STD_U32LE);
    case 6:
      return H5Tcopy(H5T_STD_I64LE);
    case 7:
      return H5Tcopy(H5T_STD_U64LE);
    case 8:
      return H5Tcopy(H5T_IEEE_F32LE);
    case 9:
      return H5Tcopy(H5T_IEEE_F64LE);
    case 10:
      return H5Tcopy(H5T_STD_I32BE);
    case 11:
      return H5Tcopy(H5T_IEEE_F64BE);
    case 12: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, 8);
      return t;
    }
    default: {
      hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, H5T_VARIABLE);
      H5Tset_cset(t, H5T_CSET_UTF8);
      return t;
    }
  }
}

std::string join(const std::string& parent, const std::string& leaf) {
  return parent == "/" ? "/" + leaf : parent + "/" + leaf;
}

std::string print_number(long long v) { return std::to_string(v); }
std::string print_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Writes strings into a string dataset or attribute of type `ftype` (fixed or variable length).
template <class Write>
herr_t write_strings(hid_t ftype, const std::vector<std::string>& s, Write&& write) {
  if (H5Tis_variable_str(ftype) > 0) {
    std::vector<const char*> p;
    for (const auto& x : s) p.push_back(x.c_str());
    return write(ftype, p.data());
  }
  const std::size_t size = H5Tget_size(ftype);
  std::vector<char> buf(s.size() * size, '\0');
  for (std::size_t i = 0; i < s.size(); ++i) s[i].copy(buf.data() + i * size, size);
  return write(ftype, buf.data());
}

void add_dataset(Bytes& in, hid_t file, const std::string& path, hid_t lcpl) {
  const int k = static_cast<int>(in.pick(kTypes));
  Id ftype(make_type(k), H5Tclose);
  const int shape = static_cast<int>(in.pick(4));
  std::vector<hsize_t> dims;
  if (shape == 1) dims = {in.pick(65)};
  if (shape == 2) dims = {in.pick(9), in.pick(9)};
  std::size_t n = shape == 3 ? 0 : 1;
  for (hsize_t d : dims) n *= static_cast<std::size_t>(d);
  const int layout = static_cast<int>(in.pick(4));
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  hid_t space_id = -1;
  if (shape == 0) {
    space_id = H5Screate(H5S_SCALAR);
  } else if (shape == 3) {
    space_id = H5Screate(H5S_NULL);
  } else if (layout >= 2) {
    const std::uint8_t c = in.u8();
    std::vector<hsize_t> chunk(dims.size(), 1 + (c & 15u)), maxdims(dims.size(), H5S_UNLIMITED);
    H5Pset_chunk(dcpl.id, static_cast<int>(chunk.size()), chunk.data());
    if (layout == 3) {
      H5Pset_shuffle(dcpl.id);
      H5Pset_deflate(dcpl.id, 1);
    }
    if (c & 16u) H5Pset_fletcher32(dcpl.id);
    space_id = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), maxdims.data());
  } else {
    if (layout == 1) H5Pset_layout(dcpl.id, H5D_COMPACT);
    space_id = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  }
  Id space(space_id, H5Sclose);
  // every operand is read before HDF5 is asked, so that the decoding does not depend on what HDF5 accepts
  const int mode = static_cast<int>(in.pick(5));
  std::vector<std::uint8_t> raw;
  std::vector<std::string> strs;
  std::vector<long long> iv;
  std::vector<double> dv;
  if (mode == 0 && H5Tis_variable_str(ftype.id) > 0) {
    for (std::size_t i = 0; i < n; ++i) strs.push_back(in.str(16));
  } else if (mode == 0) {
    raw.resize(n * H5Tget_size(ftype.id));
    for (auto& b : raw) b = in.u8();
  } else if (mode == 3) {
    for (std::size_t i = 0; i < n; ++i) dv.push_back(kSpecial[in.u8() % 16]);
  } else {
    const long long start = static_cast<std::int8_t>(in.u8());
    const long long step = mode == 1 ? static_cast<std::int8_t>(in.u8()) : 0;
    for (std::size_t i = 0; i < n; ++i)
      iv.push_back(mode == 2 && i > 0 ? static_cast<std::int8_t>(in.u8()) : start + step * static_cast<long long>(i));
  }
  if (is_string(k) && mode != 0) {
    for (long long v : iv) strs.push_back(print_number(v));
    for (double v : dv) strs.push_back(print_number(v));
  }
  Id ds(H5Dcreate2(file, path.c_str(), ftype.id, space.id, lcpl, dcpl.id, H5P_DEFAULT), H5Dclose);
  if (ds.id < 0 || n == 0) return;
  auto write = [&](hid_t mem, const void* buf) { return H5Dwrite(ds.id, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf); };
  if (is_string(k) && (mode != 0 || H5Tis_variable_str(ftype.id) > 0))
    write_strings(ftype.id, strs, write);
  else if (mode == 0)
    write(ftype.id, raw.data());
  else if (mode == 3)
    write(H5T_NATIVE_DOUBLE, dv.data());
  else
    write(H5T_NATIVE_LLONG, iv.data());
}

void add_attribute(Bytes& in, hid_t file, const std::string& obj, const H5Tables& t) {
  const std::string name = t.attr_names.empty() ? "a" : t.attr_names[in.pick(t.attr_names.size())];
  const int atype = static_cast<int>(in.pick(7));
  const std::uint8_t v = in.u8();
  std::string s = v < t.strings.size() ? t.strings[v] : in.str(16);
  const hsize_t two = 2;
  Id space(atype == 2 || atype == 4 || atype == 6 ? H5Screate_simple(1, &two, nullptr) : H5Screate(H5S_SCALAR),
           H5Sclose);
  hid_t tid = -1;
  const bool str = atype <= 2 || atype == 6;
  if (str) {
    tid = H5Tcopy(H5T_C_S1);
    H5Tset_size(tid, atype == 1 || atype == 6 ? std::max<std::size_t>(1, s.size()) : H5T_VARIABLE);
  } else {
    tid = H5Tcopy(atype == 3 ? H5T_STD_I64LE : atype == 4 ? H5T_STD_U32LE : H5T_IEEE_F64LE);
  }
  Id type(tid, H5Tclose);
  Id a(H5Acreate_by_name(file, obj.c_str(), name.c_str(), type.id, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
       H5Aclose);
  if (a.id < 0) return;
  if (str) {
    write_strings(type.id, std::vector<std::string>(atype == 2 || atype == 6 ? 2 : 1, s),
                  [&](hid_t mem, const void* buf) { return H5Awrite(a.id, mem, buf); });
  } else if (atype == 3) {
    const long long x = static_cast<std::int8_t>(v);
    H5Awrite(a.id, H5T_NATIVE_LLONG, &x);
  } else if (atype == 4) {
    const unsigned x[2] = {v, v};
    H5Awrite(a.id, H5T_NATIVE_UINT, x);
  } else {
    H5Awrite(a.id, H5T_NATIVE_DOUBLE, &kSpecial[v % 16]);
  }
}

}  // namespace

std::vector<std::string> build_h5_files(Bytes& in, const H5Tables& t) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::vector<std::string> paths;
  std::vector<hid_t> files;
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  H5Pset_fapl_core(fapl.id, 1 << 13, 1);  // in memory, written to the file once at close
  for (const auto& name : t.files) {
    paths.push_back(scratch_dir() + "/" + name);
    files.push_back(H5Fcreate(paths.back().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id));
  }
  Id lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id, 1);
  auto path = [&](bool with_self) {
    const std::string& p = t.parents[in.pick(t.parents.size())];
    const std::size_t l = in.pick(t.leaves.size() + (with_self ? 1 : 0));
    return l == t.leaves.size() ? p : join(p, t.leaves[l]);
  };
  for (int op_count = 0; !in.empty() && op_count < 256 && !files.empty(); ++op_count) {
    const int op = static_cast<int>(in.pick(4));
    const hid_t f = files[in.pick(files.size())];
    if (f < 0) continue;
    if (op == 0) {
      const std::string& g = t.parents[in.pick(t.parents.size())];
      if (g != "/") Id(H5Gcreate2(f, g.c_str(), lcpl.id, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    } else if (op == 1) {
      const std::string p = path(false);
      add_dataset(in, f, p, lcpl.id);
    } else if (op == 2) {
      const std::string obj = path(true);
      add_attribute(in, f, obj, t);
    } else {
      const std::string link = path(false), target = path(true);
      H5Lcreate_soft(target.c_str(), f, link.c_str(), lcpl.id, H5P_DEFAULT);
    }
  }
  for (hid_t f : files)
    if (f >= 0) H5Fclose(f);
  return paths;
}

}  // namespace dpointnet::fuzz
