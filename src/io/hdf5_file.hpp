// A small RAII layer over the HDF5 C API: exactly what SONATA files need.
// Integer datasets are read with conversion to int64 whatever their stored width; gzip-chunked datasets read
// transparently. Every error names the file and the object.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dpointnet::h5 {

class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle();
  hid_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  hid_t id_ = -1;
  herr_t (*closer_)(hid_t) = nullptr;
};

// Writes `bytes` to `path` through `path`.tmp (checked fwrite, fflush, fsync, close; then rename): the file
// appears complete or not at all. On failure the temporary file is removed and std::runtime_error names the file
// and the system's reason.
void write_file_atomically(const std::string& path, const std::vector<unsigned char>& bytes);

class File {
 public:
  // Opens an existing file read-only. Throws InputError naming the file if it is missing or not HDF5.
  static File open_read(const std::string& path);
  // Overwrites the values of an existing 1-d float64-compatible dataset (same length).
  void overwrite_double(const std::string& ds, const std::vector<double>& v);
  // Copies an object (group or dataset, recursively) from another file.
  void copy_from(const File& src, const std::string& src_obj, const std::string& dst_obj);
  // Creates a new file; refuses to replace an existing one unless overwrite is set.
  static File create(const std::string& path, bool overwrite);
  // A new file held in memory only (HDF5's core driver without backing store); `name` names it in errors.
  // image() returns its bytes, for the caller to write (and check) itself: write_file_atomically.
  static File create_in_memory(const std::string& name);
  std::vector<unsigned char> image();

  const std::string& path() const { return path_; }
  hid_t id() const { return file_.id(); }

  bool exists(const std::string& obj) const;      // link exists (all parents checked)
  bool is_group(const std::string& obj) const;    // exists and is a group
  bool is_dataset(const std::string& obj) const;  // exists and is a dataset
  std::vector<std::string> children(const std::string& group) const;

  std::size_t dataset_length(const std::string& ds) const;  // first dimension
  std::vector<std::size_t> dataset_shape(const std::string& ds) const;
  std::vector<std::int64_t> read_int(const std::string& ds) const;
  std::vector<double> read_double(const std::string& ds) const;

  bool has_attr(const std::string& obj, const std::string& name) const;
  std::string read_attr_string(const std::string& obj, const std::string& name) const;
  std::vector<std::int64_t> read_attr_int(const std::string& obj, const std::string& name) const;

  // Writing
  void create_group(const std::string& group);  // creates intermediate groups
  void write_int64(const std::string& ds, const std::vector<std::int64_t>& v, bool gzip = false);
  void write_uint64(const std::string& ds, const std::vector<std::uint64_t>& v, bool gzip = false);
  void write_uint32(const std::string& ds, const std::vector<std::uint32_t>& v, bool gzip = false);
  void write_uint16(const std::string& ds, const std::vector<std::uint16_t>& v, bool gzip = false);
  void write_double(const std::string& ds, const std::vector<double>& v, bool gzip = false);
  // 2-d row-major arrays
  void write_uint64_2d(const std::string& ds, const std::vector<std::uint64_t>& v, std::size_t rows, std::size_t cols);
  void write_double_2d(const std::string& ds, const std::vector<double>& v, std::size_t rows, std::size_t cols);
  void write_float_2d(const std::string& ds, const std::vector<float>& v, std::size_t rows, std::size_t cols,
                      bool gzip = false);
  // n-d row-major float32 array of the given shape
  void write_float_nd(const std::string& ds, const std::vector<float>& v, const std::vector<std::size_t>& shape,
                      bool gzip = false);
  void write_attr_string(const std::string& obj, const std::string& name, const std::string& value);
  void write_attr_uint32(const std::string& obj, const std::string& name, const std::vector<std::uint32_t>& v);
  void remove(const std::string& obj);  // unlinks a group or dataset
  // SONATA root attributes: magic 0x0A7A and version [0, 1].
  void write_sonata_header();
  void flush();

 private:
  void write_raw(const std::string& ds, hid_t mem_type, hid_t file_type, const void* data,
                 const std::vector<hsize_t>& dims, bool gzip);
  std::string path_;
  Handle file_;
};

// Turns off HDF5's automatic error stack printing (we report errors ourselves).
void silence_errors();

}  // namespace dpointnet::h5
