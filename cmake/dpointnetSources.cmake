# The library's source files, in one place for the two builds that compile them: the project (CMakeLists.txt,
# dpointnet_core) and the standalone libFuzzer build (tests/fuzz/CMakeLists.txt, dp_fuzz_core), which compiles
# only the Kokkos-free part with clang and its sanitizers. A file added to a layer goes into its list here.
# Paths are relative to the repository root; dp_sources(<root> <out>) prefixes them.

# Kokkos-free: util, io readers, config, network, inputs, the trainer's configuration and losses, the
# distribution plan (it needs only Kokkos' headers, for one constant).
set(DP_SOURCES_HOST
  src/util/json_reader.cpp
  src/util/json_fields.cpp
  src/util/log.cpp
  src/util/host_caches.cpp
  src/util/numpy_random.cpp
  src/util/value_order.cpp
  src/io/hdf5_file.cpp
  src/io/csv_table.cpp
  src/io/spike_file.cpp
  src/config/json_config.cpp
  src/config/simulation_config.cpp
  src/config/input_specs.cpp
  src/config/stimulus_spec.cpp
  src/network/network.cpp
  src/network/live_channels.cpp
  src/network/neuron_model.cpp
  src/network/node_dynamics.cpp
  src/network/sonata_nodes.cpp
  src/network/allen_glif.cpp
  src/network/sonata_edges.cpp
  src/network/network_builder.cpp
  src/network/node_attributes.cpp
  src/network/v1_cell_types.cpp
  src/inputs/input_schedule.cpp
  src/inputs/lgn_filters.cpp
  src/inputs/lgn_cells.cpp
  src/inputs/lgn_input.cpp
  src/train/train_config.cpp
  src/train/loss_specs.cpp
  src/train/observed_rates.cpp
  src/train/rate_distribution.cpp
  src/train/losses.cpp
  src/train/emd_regularization.cpp
  src/train/fano.cpp
  src/train/crowd_selectivity.cpp
  src/train/synchronization.cpp
  src/train/orientation_selectivity.cpp
  src/train/sync_plan.cpp
  src/parallel/distribution_config.cpp
)

# The rest: writers, the simulator, the trainer, the applications, the network generator.
set(DP_SOURCES_DEVICE
  src/io/sonata_write.cpp
  src/network/edge_export.cpp
  src/sim/simulator.cpp
  src/train/trainer.cpp
  src/train/checkpoint_file.cpp
  src/train/metrics_log.cpp
  src/train/run_identity.cpp
  src/train/memory_plan.cpp
  src/app/gradient_check.cpp
  src/app/output_dir.cpp
  src/app/preemption.cpp
  src/app/prepare_run.cpp
  src/app/plan_run.cpp
  src/app/rate_record.cpp
  src/app/run_record.cpp
  src/app/simulate_run.cpp
  src/app/thread_check.cpp
  src/app/visual_outputs.cpp
  src/app/train_checks.cpp
  src/app/train_run.cpp
  src/generator/cell_types.cpp
  src/generator/plan.cpp
  src/generator/edge_files.cpp
  src/generator/network_generator.cpp
  src/generator/visual_types.cpp
  src/generator/v1_nodes.cpp
  src/generator/lgn_nodes.cpp
  src/generator/lgn_edges.cpp
)

function(dp_sources _root _list _out)
  set(_r "")
  foreach(_f ${${_list}})
    list(APPEND _r "${_root}/${_f}")
  endforeach()
  set(${_out} ${_r} PARENT_SCOPE)
endfunction()
