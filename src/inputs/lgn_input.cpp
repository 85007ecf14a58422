// Host preparation of LGN inputs: cells to flat tables on the stimulus' grid, movies read and checked.
#include "dpointnet/inputs/lgn_input.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>

#include "dpointnet/inputs/lgn_cells.hpp"
#include "dpointnet/io/hdf5_file.hpp"
#include "dpointnet/util/error.hpp"

namespace dpointnet {

LgnTables make_lgn_tables(const std::vector<LgnCell>& cells, const LgnScreen& screen) {
  LgnTables t;
  t.screen = screen;
  t.n_units = static_cast<std::int64_t>(cells.size());
  t.sub_offset.push_back(0);
  for (const LgnCell& c : cells) {
    for (const LgnSubunit& s : c.subunits) {
      const AxisWeights cw = gaussian_axis_weights(screen.cols, screen.col_spacing, s.x, s.sigma);
      const AxisWeights rw = gaussian_axis_weights(screen.rows, screen.row_spacing, s.y, s.sigma);
      t.col_first.push_back(cw.first);
      t.col_len.push_back(static_cast<std::int32_t>(cw.w.size()));
      t.col_off.push_back(static_cast<std::int64_t>(t.colw.size()));
      t.colw.insert(t.colw.end(), cw.w.begin(), cw.w.end());
      t.row_first.push_back(rw.first);
      t.row_len.push_back(static_cast<std::int32_t>(rw.w.size()));
      t.row_off.push_back(static_cast<std::int64_t>(t.roww.size()));
      t.roww.insert(t.roww.end(), rw.w.begin(), rw.w.end());
      std::size_t len = s.kernel.size();
      while (len > 0 && s.kernel[len - 1] == 0.0) --len;
      t.kernel_len.push_back(static_cast<std::int32_t>(len));
      t.kernel_off.push_back(static_cast<std::int64_t>(t.kernel.size()));
      t.kernel.insert(t.kernel.end(), s.kernel.begin(), s.kernel.begin() + static_cast<std::ptrdiff_t>(len));
      t.amplitude.push_back(s.amplitude);
      t.spont.push_back(s.spont);
    }
    t.sub_offset.push_back(static_cast<std::int32_t>(t.amplitude.size()));
  }
  return t;
}

namespace {

std::shared_ptr<const LgnMovie> read_movie(const std::string& cfg_path, const std::string& where,
                                           const StimulusSpec& st) {
  const h5::File f = h5::File::open_read(st.movie_file);
  const std::string ds =
      st.movie_dataset.empty() || st.movie_dataset[0] == '/' ? st.movie_dataset : "/" + st.movie_dataset;
  if (!f.is_dataset(ds))
    throw InputError(cfg_path, where, "stimulus.movie_dataset",
                     st.movie_file + " has no dataset " + ds + " (the movie, [frames][rows][cols])");
  const auto shape = f.dataset_shape(ds);
  if (shape.size() != 3 || shape[0] < 1 || shape[1] < 2 || shape[2] < 2)
    throw InputError(st.movie_file, ds, "",
                     "must be a 3-d dataset [frames][rows][cols] with at least 1 frame of "
                     "2 x 2 pixels");
  auto m = std::make_shared<LgnMovie>();
  m->frames = static_cast<std::int64_t>(shape[0]);
  m->rows = static_cast<std::int64_t>(shape[1]);
  m->cols = static_cast<std::int64_t>(shape[2]);
  const std::vector<double> v = f.read_double(ds);
  m->data.resize(v.size());
  for (std::size_t q = 0; q < v.size(); ++q) {
    if (!std::isfinite(v[q]) || v[q] < -1.0 || v[q] > 1.0) {
      const std::size_t px = shape[1] * shape[2], fr = q / px;
      throw InputError(st.movie_file, ds, "",
                       "frame " + std::to_string(fr) + " pixel (" + std::to_string((q % px) / shape[2]) + ", " +
                           std::to_string(q % shape[2]) + ") is " + std::to_string(v[q]) +
                           ": values must be finite and in [-1, 1] (grey is 0)");
    }
    m->data[q] = static_cast<float>(v[q]);
  }
  return m;
}

}  // namespace

LgnInput prepare_lgn_input(const SimulationConfig& cfg, const InputSpec& in, const Population& pop,
                           std::int64_t n_steps, double dt) {
  const StimulusSpec& st = in.stimulus;
  const std::string where = "inputs." + in.name;
  const double t_ms = static_cast<double>(n_steps) * dt;
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return std::string(b);
  };
  if (st.pre_ms + st.post_ms >= t_ms)
    throw InputError(cfg.path, where + ".stimulus", "pre_ms",
                     "pre_ms + post_ms (" + num(st.pre_ms + st.post_ms) + " ms) leave no time of the run (" +
                         num(t_ms) + " ms) for the stimulus");
  if (st.type == StimulusType::Movie && !std::filesystem::exists(st.movie_file))
    throw InputError(cfg.path, where + ".stimulus", "movie_file",
                     "names a movie file that does not exist: " + st.movie_file);
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const std::vector<LgnCell>>> cell_cache;
  static std::map<std::string, std::shared_ptr<const LgnTables>> table_cache;
  static std::map<std::string, std::shared_ptr<const LgnMovie>> movie_cache;
  const std::lock_guard<std::mutex> lock(mu);
  LgnInput out;
  LgnScreen screen;
  if (st.type == StimulusType::Movie) {
    const std::string mkey = st.movie_file + "\n" + st.movie_dataset;
    auto& m = movie_cache[mkey];
    if (!m) m = read_movie(cfg.path, where, st);
    out.movie = m;
    screen.rows = static_cast<int>(m->rows);
    screen.cols = static_cast<int>(m->cols);
    screen.row_spacing = screen.col_spacing = st.movie_degrees_per_pixel;
  } else {
    screen = LgnScreen::grating(st.screen_height, st.screen_width, st.degrees_per_pixel);
  }
  const std::string ckey = pop.nodes_file + "\n" + pop.name;
  auto& cells = cell_cache[ckey];
  if (!cells) cells = std::make_shared<const std::vector<LgnCell>>(read_lgn_cells(cfg, pop));
  char buf[128];
  std::snprintf(buf, sizeof buf, "\n%d %d %.17g %.17g", screen.rows, screen.cols, screen.row_spacing,
                screen.col_spacing);
  auto& tables = table_cache[ckey + buf];
  if (!tables) tables = std::make_shared<const LgnTables>(make_lgn_tables(*cells, screen));
  out.tables = tables;
  return out;
}

}  // namespace dpointnet
