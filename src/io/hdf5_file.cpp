#include "dpointnet/io/hdf5_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "dpointnet/util/error.hpp"

namespace dpointnet::h5 {

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}
Handle::~Handle() {
  if (id_ >= 0 && closer_) closer_(id_);
}

void silence_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

namespace {
[[noreturn]] void fail(const std::string& file, const std::string& obj, const std::string& what) {
  throw InputError(file, obj.empty() ? "" : "HDF5 object '" + obj + "'", "", what);
}
}  // namespace

File File::open_read(const std::string& path) {
  silence_errors();
  if (!std::filesystem::exists(path)) throw InputError(path, "", "", "file does not exist");
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path, "", "", "not an HDF5 file");
  File f;
  f.path_ = path;
  f.file_ = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!f.file_.valid()) throw InputError(path, "", "", "cannot open HDF5 file");
  return f;
}

void File::overwrite_double(const std::string& ds, const std::vector<double>& v) {
  if (dataset_length(ds) != v.size()) fail(path_, ds, "length differs from the values to write");
  Handle d(H5Dopen2(file_.id(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (H5Dwrite(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    fail(path_, ds, "cannot write dataset");
}

void File::copy_from(const File& src, const std::string& src_obj, const std::string& dst_obj) {
  auto slash = dst_obj.rfind('/');
  if (slash != std::string::npos && slash > 0) create_group(dst_obj.substr(0, slash));
  if (H5Ocopy(src.id(), src_obj.c_str(), file_.id(), dst_obj.c_str(), H5P_DEFAULT, H5P_DEFAULT) < 0)
    fail(path_, dst_obj, "cannot copy " + src_obj + " from " + src.path());
}

File File::create(const std::string& path, bool overwrite) {
  silence_errors();
  if (!overwrite && std::filesystem::exists(path))
    throw InputError(path, "", "", "output file exists and overwriting is not allowed");
  File f;
  f.path_ = path;
  f.file_ = Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.file_.valid()) throw InputError(path, "", "", "cannot create HDF5 file");
  return f;
}

File File::create_in_memory(const std::string& name) {
  silence_errors();
  File f;
  f.path_ = name;
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (!fapl.valid() || H5Pset_fapl_core(fapl.id(), 1 << 20, 0) < 0)
    throw std::runtime_error(name + ": cannot set up an in-memory HDF5 file");
  f.file_ = Handle(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), H5Fclose);
  if (!f.file_.valid()) throw std::runtime_error(name + ": cannot create an in-memory HDF5 file");
  return f;
}

std::vector<unsigned char> File::image() {
  if (H5Fflush(file_.id(), H5F_SCOPE_GLOBAL) < 0) fail(path_, "/", "cannot flush the in-memory file");
  const ssize_t n = H5Fget_file_image(file_.id(), nullptr, 0);
  if (n < 0) fail(path_, "/", "cannot get the file image");
  std::vector<unsigned char> out(static_cast<std::size_t>(n));
  if (H5Fget_file_image(file_.id(), out.data(), out.size()) != n) fail(path_, "/", "cannot get the file image");
  return out;
}

void write_file_atomically(const std::string& path, const std::vector<unsigned char>& bytes) {
  const std::string tmp = path + ".tmp";
  auto failed = [&](const char* what, int err) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": " + what + ": " + std::strerror(err));
  };
  errno = 0;
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) failed("cannot create the file", errno);
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    const int e = errno;
    std::fclose(f);
    failed("cannot write the file", e);
  }
  if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) {
    const int e = errno;
    std::fclose(f);
    failed("cannot write the file", e);
  }
  if (std::fclose(f) != 0) failed("cannot write the file", errno);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) failed("cannot rename the temporary file into place", errno);
}

bool File::exists(const std::string& obj) const {
  if (obj == "/" || obj.empty()) return true;
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    std::size_t next = obj.find('/', pos + 1);
    partial = obj.substr(0, next);
    if (!partial.empty() && partial != "/") {
      if (H5Lexists(file_.id(), partial.c_str(), H5P_DEFAULT) <= 0) return false;
    }
    pos = next;
  }
  return true;
}

namespace {
H5O_type_t object_type(hid_t file, const std::string& obj) {
  H5O_info_t info;
#if H5_VERSION_GE(1, 12, 0)
  if (H5Oget_info_by_name3(file, obj.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return H5O_TYPE_UNKNOWN;
#else
  if (H5Oget_info_by_name(file, obj.c_str(), &info, H5P_DEFAULT) < 0) return H5O_TYPE_UNKNOWN;
#endif
  return info.type;
}
}  // namespace

bool File::is_group(const std::string& obj) const {
  return exists(obj) && object_type(file_.id(), obj) == H5O_TYPE_GROUP;
}
bool File::is_dataset(const std::string& obj) const {
  return exists(obj) && object_type(file_.id(), obj) == H5O_TYPE_DATASET;
}

std::vector<std::string> File::children(const std::string& group) const {
  std::vector<std::string> names;
  if (!is_group(group)) return names;
  Handle g(H5Gopen2(file_.id(), group.c_str(), H5P_DEFAULT), H5Gclose);
  H5G_info_t info;
  H5Gget_info(g.id(), &info);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t n = H5Lget_name_by_idx(g.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string s(static_cast<std::size_t>(n), '\0');
    H5Lget_name_by_idx(g.id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, s.data(), n + 1, H5P_DEFAULT);
    names.push_back(s);
  }
  return names;
}

std::vector<std::size_t> File::dataset_shape(const std::string& ds) const {
  if (!is_dataset(ds)) fail(path_, ds, "dataset is missing");
  Handle d(H5Dopen2(file_.id(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  Handle sp(H5Dget_space(d.id()), H5Sclose);
  int nd = H5Sget_simple_extent_ndims(sp.id());
  std::vector<hsize_t> dims(static_cast<std::size_t>(nd > 0 ? nd : 0));
  if (nd > 0) H5Sget_simple_extent_dims(sp.id(), dims.data(), nullptr);
  return std::vector<std::size_t>(dims.begin(), dims.end());
}

std::size_t File::dataset_length(const std::string& ds) const {
  auto s = dataset_shape(ds);
  return s.empty() ? 1 : s[0];
}

namespace {
template <class T>
std::vector<T> read_all(const File& f, const std::string& ds, hid_t mem_type, const char* kind) {
  if (!f.is_dataset(ds)) fail(f.path(), ds, "dataset is missing");
  Handle d(H5Dopen2(f.id(), ds.c_str(), H5P_DEFAULT), H5Dclose);
  Handle t(H5Dget_type(d.id()), H5Tclose);
  H5T_class_t cls = H5Tget_class(t.id());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    fail(f.path(), ds, std::string("expected a numeric dataset (") + kind + ")");
  Handle sp(H5Dget_space(d.id()), H5Sclose);
  hssize_t n = H5Sget_simple_extent_npoints(sp.id());
  std::vector<T> out(static_cast<std::size_t>(n));
  if (n > 0 && H5Dread(d.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail(f.path(), ds, std::string("cannot read dataset as ") + kind);
  return out;
}
}  // namespace

std::vector<std::int64_t> File::read_int(const std::string& ds) const {
  return read_all<std::int64_t>(*this, ds, H5T_NATIVE_INT64, "int64");
}
std::vector<double> File::read_double(const std::string& ds) const {
  return read_all<double>(*this, ds, H5T_NATIVE_DOUBLE, "float64");
}

bool File::has_attr(const std::string& obj, const std::string& name) const {
  if (!exists(obj)) return false;
  return H5Aexists_by_name(file_.id(), obj.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::string File::read_attr_string(const std::string& obj, const std::string& name) const {
  if (!has_attr(obj, name)) fail(path_, obj, "attribute '" + name + "' is missing");
  Handle a(H5Aopen_by_name(file_.id(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  Handle t(H5Aget_type(a.id()), H5Tclose);
  if (H5Tget_class(t.id()) != H5T_STRING) fail(path_, obj, "attribute '" + name + "' is not a string");
  {  // one string is read: a list of them (or none) would not fit the buffer
    Handle sp(H5Aget_space(a.id()), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(sp.id());
    if (n != 1)
      fail(path_, obj,
           "attribute '" + name + "' holds " + std::to_string(n < 0 ? 0 : n) + " values; one string is expected");
  }
  if (H5Tis_variable_str(t.id()) > 0) {
    Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mt.id(), H5T_VARIABLE);
    H5Tset_cset(mt.id(), H5Tget_cset(t.id()));
    char* buf = nullptr;
    if (H5Aread(a.id(), mt.id(), &buf) < 0) fail(path_, obj, "cannot read attribute '" + name + "'");
    std::string s = buf ? buf : "";
    Handle sp(H5Aget_space(a.id()), H5Sclose);
    H5Dvlen_reclaim(mt.id(), sp.id(), H5P_DEFAULT, &buf);
    return s;
  }
  std::size_t sz = H5Tget_size(t.id());
  std::string s(sz, '\0');
  Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mt.id(), sz);
  if (H5Aread(a.id(), mt.id(), s.data()) < 0) fail(path_, obj, "cannot read attribute '" + name + "'");
  auto z = s.find('\0');
  if (z != std::string::npos) s.resize(z);
  return s;
}

std::vector<std::int64_t> File::read_attr_int(const std::string& obj, const std::string& name) const {
  if (!has_attr(obj, name)) fail(path_, obj, "attribute '" + name + "' is missing");
  Handle a(H5Aopen_by_name(file_.id(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  Handle sp(H5Aget_space(a.id()), H5Sclose);
  hssize_t n = H5Sget_simple_extent_npoints(sp.id());
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  if (H5Aread(a.id(), H5T_NATIVE_INT64, v.data()) < 0) fail(path_, obj, "cannot read attribute '" + name + "'");
  return v;
}

void File::create_group(const std::string& group) {
  if (exists(group)) return;
  Handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
  H5Pset_create_intermediate_group(lcpl.id(), 1);
  Handle g(H5Gcreate2(file_.id(), group.c_str(), lcpl.id(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!g.valid()) fail(path_, group, "cannot create group");
}

void File::write_raw(const std::string& ds, hid_t mem_type, hid_t file_type, const void* data,
                     const std::vector<hsize_t>& dims, bool gzip) {
  auto slash = ds.rfind('/');
  if (slash != std::string::npos && slash > 0) create_group(ds.substr(0, slash));
  Handle sp(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  hsize_t total = 1;
  for (auto d : dims) total *= d;
  if (gzip && total > 0) {
    std::vector<hsize_t> chunk = dims;
    hsize_t rowlen = 1;
    for (std::size_t i = 1; i < dims.size(); ++i) rowlen *= dims[i];
    chunk[0] =
        std::max<hsize_t>(1, std::min<hsize_t>(dims[0], std::max<hsize_t>(1, 65536 / std::max<hsize_t>(1, rowlen))));
    H5Pset_chunk(dcpl.id(), static_cast<int>(chunk.size()), chunk.data());
    H5Pset_deflate(dcpl.id(), 4);
  }
  Handle d(H5Dcreate2(file_.id(), ds.c_str(), file_type, sp.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT), H5Dclose);
  if (!d.valid()) fail(path_, ds, "cannot create dataset");
  if (total > 0 && H5Dwrite(d.id(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(path_, ds, "cannot write dataset");
}

void File::write_int64(const std::string& ds, const std::vector<std::int64_t>& v, bool gzip) {
  write_raw(ds, H5T_NATIVE_INT64, H5T_STD_I64LE, v.data(), {v.size()}, gzip);
}
void File::write_uint64(const std::string& ds, const std::vector<std::uint64_t>& v, bool gzip) {
  write_raw(ds, H5T_NATIVE_UINT64, H5T_STD_U64LE, v.data(), {v.size()}, gzip);
}
void File::write_uint32(const std::string& ds, const std::vector<std::uint32_t>& v, bool gzip) {
  write_raw(ds, H5T_NATIVE_UINT32, H5T_STD_U32LE, v.data(), {v.size()}, gzip);
}
void File::write_uint16(const std::string& ds, const std::vector<std::uint16_t>& v, bool gzip) {
  write_raw(ds, H5T_NATIVE_UINT16, H5T_STD_U16LE, v.data(), {v.size()}, gzip);
}
void File::write_double(const std::string& ds, const std::vector<double>& v, bool gzip) {
  write_raw(ds, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, v.data(), {v.size()}, gzip);
}
void File::write_uint64_2d(const std::string& ds, const std::vector<std::uint64_t>& v, std::size_t rows,
                           std::size_t cols) {
  write_raw(ds, H5T_NATIVE_UINT64, H5T_STD_U64LE, v.data(), {rows, cols}, false);
}
void File::write_double_2d(const std::string& ds, const std::vector<double>& v, std::size_t rows, std::size_t cols) {
  write_raw(ds, H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE, v.data(), {rows, cols}, false);
}
void File::write_float_2d(const std::string& ds, const std::vector<float>& v, std::size_t rows, std::size_t cols,
                          bool gzip) {
  write_raw(ds, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, v.data(), {rows, cols}, gzip);
}
void File::write_float_nd(const std::string& ds, const std::vector<float>& v, const std::vector<std::size_t>& shape,
                          bool gzip) {
  write_raw(ds, H5T_NATIVE_FLOAT, H5T_IEEE_F32LE, v.data(), std::vector<hsize_t>(shape.begin(), shape.end()), gzip);
}

void File::write_attr_string(const std::string& obj, const std::string& name, const std::string& value) {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(t.id(), H5T_VARIABLE);
  H5Tset_cset(t.id(), H5T_CSET_UTF8);
  Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
  Handle a(
      H5Acreate_by_name(file_.id(), obj.c_str(), name.c_str(), t.id(), sp.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Aclose);
  const char* c = value.c_str();
  if (!a.valid() || H5Awrite(a.id(), t.id(), &c) < 0) fail(path_, obj, "cannot write attribute '" + name + "'");
}

void File::write_attr_uint32(const std::string& obj, const std::string& name, const std::vector<std::uint32_t>& v) {
  hsize_t n = v.size();
  Handle sp(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), H5Sclose);
  Handle a(H5Acreate_by_name(file_.id(), obj.c_str(), name.c_str(), H5T_STD_U32LE, sp.id(), H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT),
           H5Aclose);
  if (!a.valid() || H5Awrite(a.id(), H5T_NATIVE_UINT32, v.data()) < 0)
    fail(path_, obj, "cannot write attribute '" + name + "'");
}

void File::remove(const std::string& obj) {
  if (H5Ldelete(file_.id(), obj.c_str(), H5P_DEFAULT) < 0) fail(path_, obj, "cannot remove");
}

void File::write_sonata_header() {
  write_attr_uint32("/", "magic", {0x0A7A});
  write_attr_uint32("/", "version", {0, 1});
}

void File::flush() {
  if (H5Fflush(file_.id(), H5F_SCOPE_GLOBAL) < 0)
    fail(path_, "/", "cannot flush the file to disk (full or read-only file system?)");
}

}  // namespace dpointnet::h5
